// WakeSignal: a thread-safe, level-triggered "something happened" flag that
// cuts a blocking wait short (SPEC §7: snapshot reads are throttled, upstream
// messages are not, so a backfill actor blocked on the rate limiter must wake
// as soon as an upstream message arrives).
//
//   WakeSignal upstream_ready;                       // shared by both threads
//   upstream_ready.Notify();                         // upstream thread
//   limiter.Acquire(rows, &upstream_ready);          // returns kWoken
//
// The flag stays set until Reset(). The race-free consumer pattern is:
// Reset(); check the upstream queue; if empty, block with the signal. A
// message that arrives after the check sets the flag, so the wait returns at
// once instead of missing it.
//
// Any wait on a (Mutex, CondVar) pair can be made
// wakeable by holding a WakeSignal::Listener for the duration of the wait and
// including notified() in the wait predicate (see RateLimiter::Acquire).
#ifndef RATELIMIT_WAKE_SIGNAL_H_
#define RATELIMIT_WAKE_SIGNAL_H_

#include <atomic>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class WakeSignal {
 public:
  WakeSignal() = default;
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;
  // REQUIRES: no Listener is alive.
  ~WakeSignal() = default;

  // Sets the flag and wakes every thread currently waiting with a Listener on
  // this signal. Idempotent. Thread-safe; never blocks for longer than the
  // listeners' mutexes are held.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);

  // Clears the flag. Thread-safe.
  void Reset() { notified_.store(false, std::memory_order_release); }

  // Whether Notify() was called since the last Reset(). Thread-safe, lock-free.
  bool notified() const { return notified_.load(std::memory_order_acquire); }

  // Registers a waiter's (mutex, condition variable) pair for as long as it
  // lives: Notify() locks and unlocks `mutex`, then notifies `cv`, so a
  // waiter that checks notified() under `mutex` in its predicate cannot miss
  // the wake-up.
  // REQUIRES: `mutex` is NOT held by the calling thread while the Listener is
  // constructed or destroyed (Notify takes the signal's lock, then `mutex`);
  // `signal`, `mutex` and `cv` outlive the Listener.
  class Listener {
   public:
    Listener(WakeSignal& signal, Mutex& mutex, CondVar& cv)
        ABSL_LOCKS_EXCLUDED(mutex);
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    ~Listener();

   private:
    WakeSignal& signal_;
    Mutex* const mutex_;
    CondVar* const cv_;
  };

 private:
  std::atomic<bool> notified_{false};
  Mutex mu_;
  // One entry per live Listener (duplicates allowed).
  std::vector<std::pair<Mutex*, CondVar*>> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // RATELIMIT_WAKE_SIGNAL_H_
