#include "executor/channel.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace executor_internal {

struct ChannelState {
  explicit ChannelState(ChannelOptions options)
      : capacity(options.capacity), rows(options.rows) {}

  // The rows a message counts against ChannelOptions::rows; 0 for a message
  // counted against `capacity`.
  size_t RowsOf(const Message& message) const {
    if (rows == 0) return 0;
    const auto* chunk = std::get_if<StreamChunk>(&message);
    return chunk == nullptr ? 0 : std::max<size_t>(chunk->capacity(), 1);
  }
  // Whether `message` (of RowsOf `message_rows`) would be refused now.
  bool Full(size_t message_rows) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (message_rows > 0) return buffered_rows >= rows;
    return queue.size() - buffered_chunks >= capacity;
  }
  void Push(Message message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (const size_t n = RowsOf(message); n > 0) {
      buffered_rows += n;
      ++buffered_chunks;
    }
    queue.push_back(std::move(message));
  }
  Message Pop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Message message = std::move(queue.front());
    queue.pop_front();
    if (const size_t n = RowsOf(message); n > 0) {
      buffered_rows -= n;
      --buffered_chunks;
    }
    return message;
  }

  const size_t capacity;
  const size_t rows;
  mutable Mutex mu;
  std::deque<Message> queue ABSL_GUARDED_BY(mu);
  // With `rows` set: the chunks in `queue` and their rows.
  size_t buffered_chunks ABSL_GUARDED_BY(mu) = 0;
  size_t buffered_rows ABSL_GUARDED_BY(mu) = 0;
  // Set once by the sender: OK = End, otherwise the error to return.
  bool sender_closed ABSL_GUARDED_BY(mu) = false;
  absl::Status close_status ABSL_GUARDED_BY(mu);
  bool receiver_closed ABSL_GUARDED_BY(mu) = false;
  // The latest wakers of a receiver waiting on empty / a sender waiting on
  // full. Taken out under `mu` and woken outside it.
  std::shared_ptr<Waker> receiver_waker ABSL_GUARDED_BY(mu);
  std::shared_ptr<Waker> sender_waker ABSL_GUARDED_BY(mu);
};

}  // namespace executor_internal

namespace {

void WakeIfSet(std::shared_ptr<Waker> waker) {
  if (waker != nullptr) waker->Wake();
}

SendResult SendLocked(executor_internal::ChannelState& state, Message& message,
                      std::shared_ptr<Waker>* to_wake)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
  assert(!state.sender_closed);
  if (state.receiver_closed) return SendResult::kClosed;
  if (state.Full(state.RowsOf(message))) return SendResult::kFull;
  state.Push(std::move(message));
  *to_wake = std::move(state.receiver_waker);
  state.receiver_waker = nullptr;
  return SendResult::kSent;
}

}  // namespace

std::pair<ChannelSender, ChannelReceiver> MakeChannel(ChannelOptions options) {
  assert(options.capacity >= 1);
  auto state = std::make_shared<executor_internal::ChannelState>(options);
  return {ChannelSender(state), ChannelReceiver(state)};
}

ChannelSender& ChannelSender::operator=(ChannelSender&& other) noexcept {
  if (this != &other) {
    Close();
    state_ = std::move(other.state_);
  }
  return *this;
}

ChannelSender::~ChannelSender() { Close(); }

SendResult ChannelSender::TrySend(Message& message) {
  std::shared_ptr<Waker> to_wake;
  SendResult result;
  {
    MutexLock lock(&state_->mu);
    result = SendLocked(*state_, message, &to_wake);
  }
  WakeIfSet(std::move(to_wake));
  return result;
}

SendResult ChannelSender::PollSend(Message& message, PollContext& cx) {
  std::shared_ptr<Waker> to_wake;
  SendResult result;
  {
    MutexLock lock(&state_->mu);
    result = SendLocked(*state_, message, &to_wake);
    // Registered under the lock that the receiver takes to free a slot, so
    // the wake-up cannot be missed.
    if (result == SendResult::kFull) state_->sender_waker = cx.waker();
  }
  WakeIfSet(std::move(to_wake));
  return result;
}

bool ChannelSender::PollReady(PollContext& cx) {
  MutexLock lock(&state_->mu);
  // Room for a message of either kind.
  if (state_->receiver_closed ||
      (!state_->Full(0) && (state_->rows == 0 || !state_->Full(1)))) {
    return true;
  }
  state_->sender_waker = cx.waker();
  return false;
}

absl::Status ChannelSender::Send(Message message, Clock& clock) {
  auto waker = std::make_shared<BlockingWaker>();
  while (true) {
    waker->Reset();
    PollContext cx(waker, clock);
    switch (PollSend(message, cx)) {
      case SendResult::kSent:
        return absl::OkStatus();
      case SendResult::kClosed:
        return absl::CancelledError("channel receiver closed");
      case SendResult::kFull:
        waker->WaitUntil(clock, absl::InfiniteFuture());
        break;
    }
  }
}

void ChannelSender::Close() { CloseWith(absl::OkStatus()); }

void ChannelSender::Fail(absl::Status error) {
  assert(!error.ok());
  CloseWith(std::move(error));
}

void ChannelSender::CloseWith(absl::Status status) {
  if (state_ == nullptr) return;  // Moved from.
  std::shared_ptr<Waker> to_wake;
  {
    MutexLock lock(&state_->mu);
    if (state_->sender_closed) return;
    state_->sender_closed = true;
    state_->close_status = std::move(status);
    to_wake = std::move(state_->receiver_waker);
    state_->receiver_waker = nullptr;
  }
  WakeIfSet(std::move(to_wake));
}

ChannelReceiver& ChannelReceiver::operator=(ChannelReceiver&& other) noexcept {
  if (this != &other) {
    Close();
    state_ = std::move(other.state_);
  }
  return *this;
}

ChannelReceiver::~ChannelReceiver() { Close(); }

PollResult ChannelReceiver::PollReceive(PollContext& cx) {
  std::shared_ptr<Waker> to_wake;
  std::optional<Message> message;
  {
    MutexLock lock(&state_->mu);
    if (state_->queue.empty()) {
      if (state_->sender_closed) {
        return state_->close_status.ok()
                   ? PollResult::End()
                   : PollResult::Error(state_->close_status);
      }
      if (state_->receiver_closed) return PollResult::End();
      // Registered under the lock that senders take to push, so the
      // wake-up cannot be missed.
      state_->receiver_waker = cx.waker();
      return PollResult::Pending();
    }
    message.emplace(state_->Pop());
    to_wake = std::move(state_->sender_waker);
    state_->sender_waker = nullptr;
  }
  WakeIfSet(std::move(to_wake));
  return PollResult::Ready(*std::move(message));
}

size_t ChannelReceiver::size() const {
  MutexLock lock(&state_->mu);
  return state_->queue.size();
}

void ChannelReceiver::Close() {
  if (state_ == nullptr) return;  // Moved from.
  std::shared_ptr<Waker> to_wake;
  std::deque<Message> dropped;
  {
    MutexLock lock(&state_->mu);
    if (state_->receiver_closed) return;
    state_->receiver_closed = true;
    dropped.swap(state_->queue);
    state_->buffered_chunks = 0;
    state_->buffered_rows = 0;
    to_wake = std::move(state_->sender_waker);
    state_->sender_waker = nullptr;
  }
  WakeIfSet(std::move(to_wake));
}

}  // namespace backfill
