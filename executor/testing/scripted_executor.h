// ScriptedExecutor: an upstream Executor for tests that replays a script of
// messages, "pending" points and errors.
//
//   auto upstream = std::make_unique<ScriptedExecutor>(info);
//   upstream->Push(TestBarrier(1)); upstream->PushPending();
//   upstream->Push(chunk); ScriptedExecutor* script = upstream.get();   // keep
//   to push more later
//
// Script steps, consumed in order, one per PollNext:
//   Push(message)        Ready(message).
//   PushPending()        Pending once, waking the waker at once (so a driver
//                        polls again immediately: "upstream has nothing ready
//                        right now", which lets the consumer do other work).
//   PushPendingUntil(t)  Pending (cx.WakeNoLaterThan(t)) until cx.clock()
//                        reaches t, then the step is consumed without output.
//   PushError(status)    Error(status); terminal, the rest is discarded.
// When the script runs out, the executor returns End if Close() was called
// or the options say kEnd, else Pending with the waker registered until
// another step is pushed (an idle upstream).
//
// Thread-safety: PollNext follows the Executor protocol (one poller); Push*
// and Close may be called from any thread concurrently with it and wake the
// waker of a poll that is waiting for steps.
#ifndef EXECUTOR_TESTING_SCRIPTED_EXECUTOR_H_
#define EXECUTOR_TESTING_SCRIPTED_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/executor.h"
#include "executor/message.h"
#include "executor/poll.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace testing {

struct ScriptedExecutorOptions {
  enum class WhenExhausted {
    kEnd,      // End of stream once every step was consumed.
    kPending,  // Wait (Pending) for more steps until Close().
  };
  // What happens after the last step. Default kEnd.
  WhenExhausted when_exhausted = WhenExhausted::kEnd;
};

class ScriptedExecutor final : public Executor {
 public:
  explicit ScriptedExecutor(ExecutorInfo info,
                            ScriptedExecutorOptions options = {});

  void Push(Message message) ABSL_LOCKS_EXCLUDED(mu_);
  void PushPending() ABSL_LOCKS_EXCLUDED(mu_);
  void PushPendingUntil(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // REQUIRES: !error.ok().
  void PushError(absl::Status error) ABSL_LOCKS_EXCLUDED(mu_);
  // End of stream after the remaining steps (for kPending mode).
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

  // Number of steps not yet consumed.
  size_t num_remaining() const ABSL_LOCKS_EXCLUDED(mu_);
  // Number of PollNext calls so far.
  size_t num_polls() const ABSL_LOCKS_EXCLUDED(mu_);

  PollResult PollNext(PollContext& cx) override ABSL_LOCKS_EXCLUDED(mu_);
  const ExecutorInfo& info() const override { return info_; }

 private:
  struct PendingOnce {};
  struct PendingUntil {
    absl::Time deadline;
  };
  using Step = std::variant<Message, PendingOnce, PendingUntil, absl::Status>;

  void PushStep(Step step) ABSL_LOCKS_EXCLUDED(mu_);
  // PollNext's work under the lock. Sets `*to_wake` to a waker that PollNext
  // wakes once it has released the lock (a PendingOnce step).
  PollResult PollLocked(PollContext& cx, std::shared_ptr<Waker>* to_wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExecutorInfo info_;
  const ScriptedExecutorOptions options_;
  mutable Mutex mu_;
  std::deque<Step> steps_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // Set once the stream ended or failed (fused result).
  std::optional<absl::Status> terminal_ ABSL_GUARDED_BY(mu_);
  size_t num_polls_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<Waker> waker_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing
}  // namespace backfill

#endif  // EXECUTOR_TESTING_SCRIPTED_EXECUTOR_H_
