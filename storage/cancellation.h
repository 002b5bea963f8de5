// Cancellation: a one-shot flag that wakes blocking waits.
//
// clang-format off
//   Cancellation cancel;
//   std::thread waiter([&] {
//     store.WaitCommitted(t, e, deadline, cancel, clock);
//   });
//   cancel.Cancel();   // the wait returns Cancelled promptly
// clang-format on
//
// Thread-safe. A wait registers a callback with AddCallback; Cancel() runs
// every registered callback once (on the cancelling thread) and all future
// AddCallback calls run their callback at once.
#ifndef STORAGE_CANCELLATION_H_
#define STORAGE_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>

#include "absl/base/thread_annotations.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;
  // REQUIRES: no callback is registered (every wait using it has returned).
  ~Cancellation() = default;

  // Cancels; idempotent. Runs the registered callbacks, without holding any
  // lock of this object, before returning.
  void Cancel();
  bool IsCancelled() const {
    return cancelled_.load(std::memory_order_acquire);
  }

  // Registers `callback` to run on Cancel(); if already cancelled, runs it
  // now. Returns an id for RemoveCallback. `callback` must not call into this
  // object.
  uint64_t AddCallback(std::function<void()> callback);
  // Unregisters; after it returns the callback is not running and never runs.
  void RemoveCallback(uint64_t id);

 private:
  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  // Held while Cancel() runs callbacks, so that RemoveCallback can wait for a
  // running callback to finish.
  Mutex running_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // STORAGE_CANCELLATION_H_
