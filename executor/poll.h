// The poll model shared by every executor, channel and driver: Waker,
// PollContext, PollResult, and BlockingWaker (the waker of threaded drivers).
//
// clang-format off
//   auto waker = std::make_shared<BlockingWaker>();
//   PollContext cx(waker, Clock::Real());
//   PollResult result = executor.PollNext(cx);
//   if (result.is_pending()) waker->WaitUntil(clock, cx.wake_deadline());
// clang-format on
//
// A poll never blocks. A source that has nothing ready registers the waker
// of the current poll (`cx.waker()`) and returns Pending; when it becomes
// ready it calls `Wake()`, and the driver polls again. A source that waits
// for time (a rate limiter) instead calls `cx.WakeNoLaterThan(t)`. This is
// the model of Rust futures and of Velox's `isBlocked`, and it lets one
// executor run both on its own thread (BlockingWaker) and inside a
// single-threaded deterministic scheduler (whose waker marks a task runnable).
// The full protocol is in executor/executor.h.
#ifndef EXECUTOR_POLL_H_
#define EXECUTOR_POLL_H_

#include <memory>
#include <string>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/message.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

// "Poll this task again." Implemented by drivers (one waker per task).
class Waker {
 public:
  virtual ~Waker() = default;

  // Asks the driver to poll the task that registered this waker again.
  // Thread-safe; idempotent (several calls before the next poll count as
  // one); may be called from any thread, including from inside the task's
  // own poll (a self-wake), and after the task is gone (then it does
  // nothing). Must not block for long and must not call into executors.
  virtual void Wake() = 0;
};

// The context of one poll. Created by the driver and passed down through
// every nested PollNext / PollReceive / PollSend of the same task.
// Not thread-safe: it belongs to the polling thread for the poll's duration.
class PollContext {
 public:
  // REQUIRES: waker != nullptr; `clock` outlives the context.
  PollContext(std::shared_ptr<Waker> waker, Clock& clock);

  // The waker to register with whatever a Pending result waits on. Sources
  // keep a copy (shared ownership) until they wake it or are polled again
  // with a newer one.
  const std::shared_ptr<Waker>& waker() const { return waker_; }
  // The time source of the task (rate limiters, timers).
  Clock& clock() const { return clock_; }

  // Requests another poll no later than `deadline` even if nobody wakes the
  // task (a timed wait, e.g. for rate-limiter tokens). Several requests keep
  // the earliest. Only meaningful when the poll returns Pending.
  void WakeNoLaterThan(absl::Time deadline);
  // The earliest requested deadline; absl::InfiniteFuture() if none.
  absl::Time wake_deadline() const { return wake_deadline_; }
  // Forgets the deadline. Drivers that reuse a context call it before each
  // poll.
  void ResetWakeDeadline() { wake_deadline_ = absl::InfiniteFuture(); }

 private:
  std::shared_ptr<Waker> waker_;
  Clock& clock_;
  absl::Time wake_deadline_ = absl::InfiniteFuture();
};

// The outcome of polling a stream of messages:
//   Pending      nothing ready; a wake-up has been arranged (waker registered
//                and/or cx.WakeNoLaterThan), poll again after it.
//   Ready(m)     the next message.
//   Error(s)     the stream failed; terminal.
//   End          the stream ended normally; terminal.
class PollResult {
 public:
  enum class Kind { kPending, kReady, kError, kEnd };

  static PollResult Pending() { return PollResult(PendingTag{}); }
  static PollResult End() { return PollResult(EndTag{}); }
  static PollResult Ready(Message message) {
    return PollResult(std::move(message));
  }
  // REQUIRES: !status.ok().
  static PollResult Error(absl::Status status);

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  bool is_pending() const { return kind() == Kind::kPending; }
  bool is_ready() const { return kind() == Kind::kReady; }
  bool is_error() const { return kind() == Kind::kError; }
  bool is_end() const { return kind() == Kind::kEnd; }

  // REQUIRES: is_ready().
  Message& message() & { return std::get<Message>(value_); }
  const Message& message() const& { return std::get<Message>(value_); }
  Message&& message() && { return std::get<Message>(std::move(value_)); }
  // The error of an Error result; OK for every other kind.
  absl::Status status() const;

  // "Pending", "End", "Error(...)", "Ready(...)".
  std::string DebugString() const;

 private:
  struct PendingTag {};
  struct EndTag {};
  template <typename T>
  explicit PollResult(T value) : value_(std::move(value)) {}

  // Alternative order matches Kind.
  std::variant<PendingTag, Message, absl::Status, EndTag> value_;
};

// A waker that a thread blocks on: the driver of a threaded runtime, the
// blocking NextMessage adapter, blocking channel sends.
//
// Pattern (no lost wake-ups): Reset(); poll; if Pending,
// WaitUntil(clock, cx.wake_deadline()). A Wake() between Reset() and
// WaitUntil() makes WaitUntil return at once.
// Thread-safe.
class BlockingWaker final : public Waker {
 public:
  void Wake() override ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets earlier wakes.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until Wake() was called since the last Reset(), or `clock`
  // reaches `deadline` (absl::InfiniteFuture() = no deadline). Returns true
  // iff woken.
  bool WaitUntil(Clock& clock, absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace backfill

#endif  // EXECUTOR_POLL_H_
