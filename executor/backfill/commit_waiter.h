// CommitWaiter: a poll-style wait for a state store's committed epoch (a
// table's InitEpoch may not run before the store has committed the epoch
// before the first barrier).
//
// clang-format off
//   CommitWaiter waiter(store);
//   if (!waiter.Ready([&] { return table.ReadyToInit(first); }, cx)) {
//     return PollResult::Pending();   // the store's next commit wakes us
//   }
//   waiter.Stop();
// clang-format on
//
// It registers one commit listener with the store, on the first wait, and
// keeps it until Stop() or destruction. The listener wakes the waker of the
// latest Ready() call that returned false.
//
// Thread-safety: one task at a time (an executor's); the listener runs on the
// store's checkpointing thread. `store` must outlive the waiter.
#ifndef EXECUTOR_BACKFILL_COMMIT_WAITER_H_
#define EXECUTOR_BACKFILL_COMMIT_WAITER_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "executor/poll.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class CommitWaiter {
 public:
  // No I/O; no listener yet.
  explicit CommitWaiter(StateStore& store);
  CommitWaiter(const CommitWaiter&) = delete;
  CommitWaiter& operator=(const CommitWaiter&) = delete;
  // Stops listening.
  ~CommitWaiter();

  // True if `ready()` is. Otherwise arranges for `cx`'s waker to be woken at
  // the store's next commit and returns `ready()` again: a commit that landed
  // between the first check and the registration would wake nobody, so a
  // false result means a wake-up is arranged (return Pending).
  // `ready` is typically StateTable::ReadyToInit.
  bool Ready(absl::FunctionRef<bool()> ready, PollContext& cx);

  // Removes the commit listener, if any; later commits wake nobody. A later
  // Ready() that returns false registers a new one. Idempotent.
  void Stop();

  // Whether a commit listener is registered (for tests).
  bool listening() const { return listener_id_.has_value(); }

 private:
  // The waker to wake. The listener holds it weakly: a removed listener
  // never runs again (StateStore's contract), and a weak reference keeps a
  // call racing with destruction harmless all the same.
  struct WakeSlot {
    Mutex mu;
    std::shared_ptr<Waker> waker ABSL_GUARDED_BY(mu);
  };

  StateStore& store_;
  const std::shared_ptr<WakeSlot> slot_;
  std::optional<uint64_t> listener_id_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_COMMIT_WAITER_H_
