// A bounded channel of Messages between two tasks, usable from threads
// (blocking Send / NextMessage) and from a non-blocking scheduler
// (PollSend / PollReceive with wakers), plus ReceiverExecutor, which turns a
// channel's receiving end into an Executor.
//
// clang-format off
//   auto [tx, rx] = MakeChannel({.capacity = 4});
//   BACKFILL_RETURN_IF_ERROR(tx.Send(Message(barrier), clock));  // blocks while full
//   ReceiverExecutor upstream(info, std::move(rx));              // an Executor
// clang-format on
//
// Back-pressure: at most `capacity` messages are buffered; a full channel
// makes Send block and PollSend return kFull (after registering the waker).
// With `rows` set, chunks are counted by their rows instead (as RisingWave's
// exchange counts record permits): many small chunks do not fill the channel
// the way full ones do, and `capacity` bounds the other messages.
// End of stream: closing the sender (Close(), or destroying it) makes the
// receiver return End once the buffered messages are drained; Fail(status)
// makes it return that error instead. Closing the receiver (Close(), or
// destroying it) drops buffered messages and makes every later send return
// kClosed / Cancelled.
//
// Thread-safety: the sender and the receiver may be used from different
// threads concurrently. Each end is used by one thread at a time.
#ifndef EXECUTOR_CHANNEL_H_
#define EXECUTOR_CHANNEL_H_

#include <cstddef>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "executor/executor.h"
#include "executor/message.h"
#include "executor/poll.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace executor_internal {
struct ChannelState;
}  // namespace executor_internal

struct ChannelOptions {
  // Maximum number of buffered messages (of any kind). Default 16; >= 1.
  size_t capacity = 16;
  // 0 (default): `capacity` bounds every message. Else chunks are bounded
  // by rows: a chunk is taken while the buffered chunks hold fewer than
  // `rows` rows (the last one taken may pass the bound; a chunk counts its
  // capacity, at least 1), and `capacity` bounds the other messages alone.
  size_t rows = 0;
};

class ChannelSender;
class ChannelReceiver;

// A new channel. REQUIRES: options.capacity >= 1.
std::pair<ChannelSender, ChannelReceiver> MakeChannel(
    ChannelOptions options = {});

enum class SendResult {
  kSent,    // The message was buffered (moved from).
  kFull,    // The channel is full; the message was not taken.
  kClosed,  // The receiver is gone; the message was not taken.
};

// The sending end. Movable, not copyable. Destroying it closes the channel.
class ChannelSender {
 public:
  ChannelSender(ChannelSender&&) noexcept = default;
  ChannelSender& operator=(ChannelSender&& other) noexcept;
  ~ChannelSender();

  // Buffers `message` if there is room. Never blocks, never registers a
  // waker. `message` is moved from only on kSent.
  // REQUIRES: Close()/Fail() not called.
  SendResult TrySend(Message& message);

  // As TrySend, but on kFull registers cx.waker(), which is woken when a
  // slot frees up or the receiver closes.
  SendResult PollSend(Message& message, PollContext& cx);

  // True if a message would be buffered now (or the receiver is gone, so a
  // send would not wait); otherwise registers cx.waker(), woken when a slot
  // frees up, and returns false. Lets a producer hold back optional work
  // (the backfill's snapshot reads) while its consumer is behind.
  bool PollReady(PollContext& cx);

  // Blocks until `message` is buffered. Cancelled if the receiver is gone.
  absl::Status Send(Message message, Clock& clock);

  // End of stream: the receiver drains the buffered messages, then gets
  // End. Idempotent.
  void Close();
  // As Close, but the receiver gets Error(`error`) after draining.
  // REQUIRES: !error.ok(). A second Close/Fail is ignored.
  void Fail(absl::Status error);

 private:
  friend std::pair<ChannelSender, ChannelReceiver> MakeChannel(
      ChannelOptions options);
  explicit ChannelSender(std::shared_ptr<executor_internal::ChannelState> state)
      : state_(std::move(state)) {}
  void CloseWith(absl::Status status);

  std::shared_ptr<executor_internal::ChannelState> state_;
};

// The receiving end. Movable, not copyable. Destroying it closes it.
class ChannelReceiver {
 public:
  ChannelReceiver(ChannelReceiver&&) noexcept = default;
  ChannelReceiver& operator=(ChannelReceiver&& other) noexcept;
  ~ChannelReceiver();

  // Ready(next message); Pending (cx.waker() registered: woken by the next
  // send or close) when empty; End or Error once the sender closed and every
  // buffered message was received. Fused: End/Error repeat.
  PollResult PollReceive(PollContext& cx);

  // Number of buffered messages.
  size_t size() const;

  // Stops receiving: drops the buffered messages, wakes a waiting sender;
  // later PollReceive calls return End. Idempotent.
  void Close();

 private:
  friend std::pair<ChannelSender, ChannelReceiver> MakeChannel(
      ChannelOptions options);
  explicit ChannelReceiver(
      std::shared_ptr<executor_internal::ChannelState> state)
      : state_(std::move(state)) {}

  std::shared_ptr<executor_internal::ChannelState> state_;
};

// An Executor reading from a channel: the upstream input of an actor.
// PollNext = receiver.PollReceive. Thread-safety: as Executor.
class ReceiverExecutor final : public Executor {
 public:
  ReceiverExecutor(ExecutorInfo info, ChannelReceiver receiver)
      : info_(std::move(info)), receiver_(std::move(receiver)) {}

  PollResult PollNext(PollContext& cx) override {
    return receiver_.PollReceive(cx);
  }
  const ExecutorInfo& info() const override { return info_; }

 private:
  ExecutorInfo info_;
  ChannelReceiver receiver_;
};

}  // namespace backfill

#endif  // EXECUTOR_CHANNEL_H_
