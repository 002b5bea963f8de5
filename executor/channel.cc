#include "executor/channel.h"

#include <cassert>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace executor_internal {

struct ChannelState {
  explicit ChannelState(size_t capacity) : capacity(capacity) {}

  const size_t capacity;
  mutable Mutex mu;
  std::deque<Message> queue ABSL_GUARDED_BY(mu);
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
  if (state.queue.size() >= state.capacity) return SendResult::kFull;
  state.queue.push_back(std::move(message));
  *to_wake = std::move(state.receiver_waker);
  state.receiver_waker = nullptr;
  return SendResult::kSent;
}

}  // namespace

std::pair<ChannelSender, ChannelReceiver> MakeChannel(ChannelOptions options) {
  assert(options.capacity >= 1);
  auto state =
      std::make_shared<executor_internal::ChannelState>(options.capacity);
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
  if (state_->receiver_closed || state_->queue.size() < state_->capacity) {
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
    message.emplace(std::move(state_->queue.front()));
    state_->queue.pop_front();
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
    to_wake = std::move(state_->sender_waker);
    state_->sender_waker = nullptr;
  }
  WakeIfSet(std::move(to_wake));
}

}  // namespace backfill
