// Actor: one actor of a streaming job's graph, the loop every driver runs,
// written once: poll the root executor, hand each message to the actor's
// output, wait while the output is full, stop after the barrier whose Stop
// mutation names the actor. ActorOutput: where an actor's messages go (a
// channel, the hash dispatcher, nowhere); ChannelOutput and DiscardOutput.
//
//   Actor actor(id, std::move(root), std::make_unique<ChannelOutput>(tx), {});
//   while (true) {                                   // a threaded driver
//     waker->Reset(); cx.ResetWakeDeadline();
//     Actor::Step step = actor.Poll(cx);
//     if (step == Actor::Step::kDone) break;
//     if (step == Actor::Step::kPending) {
//       waker->WaitUntil(clock, cx.wake_deadline());
//     }
//   }
//
// Poll never blocks, so a thread per actor (threaded_driver.h) and a
// single thread choosing which ready actor polls next run the same actors.
// Poll follows the executor protocol (executor/executor.h): kPending means a
// wake-up is arranged (the root's sources or the output registered
// cx.waker(), or cx.WakeNoLaterThan was called).
//
// An actor ends (kDone) in one of three states:
//   kStopped  it delivered a barrier whose Stop mutation names it;
//   kEnded    its root ended before that (its input closed);
//   kFailed   its root or its output failed: status() says why.
// Either way callbacks.on_end has run, then its output was closed (end of
// stream downstream). The root executor stays alive until Abandon()
// (it may hold table instances a later checkpoint must see).
//
// Thread-safety: Poll, Abandon and the accessors from one thread at a time
// (the driver's); id() and identity() from any thread.
#ifndef EXECUTOR_RUNTIME_ACTOR_H_
#define EXECUTOR_RUNTIME_ACTOR_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/barrier.h"
#include "executor/channel.h"
#include "executor/executor.h"
#include "executor/message.h"
#include "executor/poll.h"

namespace backfill {

// Where an actor's messages go. Never blocks: Push takes a message, PollFlush
// delivers it, waiting (Pending, waker registered) while a receiver is full.
class ActorOutput {
 public:
  virtual ~ActorOutput() = default;

  // Takes `message` for delivery. REQUIRES: PollFlush returned true since
  // the previous Push (at most one message in flight). Errors: the output's
  // (a message it cannot route).
  virtual absl::Status Push(Message message) = 0;

  // True once everything pushed is delivered; false if a receiver is full
  // (cx.waker() is registered and woken when there is room). Errors:
  // Cancelled if a receiver is gone.
  virtual absl::StatusOr<bool> PollFlush(PollContext& cx) = 0;

  // End of stream for the receivers (after what was delivered). Idempotent.
  virtual void Close() = 0;
};

// An output into one channel.
class ChannelOutput final : public ActorOutput {
 public:
  explicit ChannelOutput(ChannelSender sender) : sender_(std::move(sender)) {}

  absl::Status Push(Message message) override;
  absl::StatusOr<bool> PollFlush(PollContext& cx) override;
  void Close() override { sender_.Close(); }

  // ChannelSender::PollReady: true if a message would be taken now (for the
  // backfill's output_ready: a full output holds back snapshot reads).
  bool PollReady(PollContext& cx) { return sender_.PollReady(cx); }

 private:
  ChannelSender sender_;
  std::optional<Message> held_;
};

// An output that drops every message (the last actor of a graph, whose
// barriers the coordinator collects through ActorCallbacks::on_barrier).
class DiscardOutput final : public ActorOutput {
 public:
  absl::Status Push(Message) override { return absl::OkStatus(); }
  absl::StatusOr<bool> PollFlush(PollContext&) override { return true; }
  void Close() override {}
};

class Actor;

struct ActorCallbacks {
  // Called with every barrier the root emits, before it is pushed, with the
  // time of the poll (cx.clock().Now()). Optional.
  std::function<void(const Barrier& barrier, absl::Time now)> on_barrier;
  // Called once when the actor ends, whatever the state, before its output
  // is closed (so that whoever learns of an error here learns it before the
  // actors downstream see their input end). Optional.
  std::function<void(const Actor& actor)> on_end;
};

class Actor {
 public:
  enum class Step {
    kProgress,  // a message was delivered: poll again
    kPending,   // a wake-up is arranged: poll again after it
    kDone,      // the actor ended: see state()
  };
  enum class State { kRunning, kStopped, kEnded, kFailed };

  // REQUIRES: root and output not null.
  Actor(ActorId id, BoxedExecutor root, std::unique_ptr<ActorOutput> output,
        ActorCallbacks callbacks = {});

  // One step of the loop (see the file comment). After kDone it returns
  // kDone again without polling anything.
  Step Poll(PollContext& cx);

  // Destroys the root executor (and so its inputs: an upstream actor
  // waiting for room in a channel to it gets Cancelled instead of waiting
  // forever). REQUIRES: state() != kRunning.
  void Abandon() { root_.reset(); }

  ActorId id() const { return id_; }
  // The root executor's identity, e.g. "Materialize(view, actor 2)".
  const std::string& identity() const { return identity_; }
  State state() const { return state_; }
  // Why the actor failed; OK unless state() == kFailed.
  const absl::Status& status() const { return status_; }

 private:
  Step Finish(State state, absl::Status status);

  const ActorId id_;
  const std::string identity_;
  // Declared before root_: the root may hold a pointer to it (output_ready).
  std::unique_ptr<ActorOutput> output_;
  BoxedExecutor root_;
  const ActorCallbacks callbacks_;
  State state_ = State::kRunning;
  absl::Status status_;
  // A message was pushed and is not yet delivered.
  bool flushing_ = false;
  // The message being delivered is the actor's stop barrier.
  bool stopping_ = false;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_ACTOR_H_
