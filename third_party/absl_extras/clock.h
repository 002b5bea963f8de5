// Clock: the one source of time for everything time-based (rate limiter,
// metrics timers, barrier coordinator), so tests can run on simulated time.
//
//   Clock& clock = Clock::Real();             // production
//   SimulatedClock sim;                       // tests
//   sim.AdvanceTime(absl::Seconds(1));        // wakes waiters whose deadline passed
//
// Waiting is done on a condition variable with a predicate and a deadline:
// a waiter wakes as soon as the predicate holds (whoever changes the state
// signals the condition variable) or the clock reaches the deadline. Nothing
// polls.
//
//   MutexLock lock(&mu_);
//   clock.WaitUntil(mu_, cv_, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
//     return ready_;
//   }, deadline);
//
// The lock is backfill::Mutex (third_party/absl_extras/mutex.h: std::mutex
// underneath, which TSan sees, with the capability annotations clang checks).
#ifndef THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_
#define THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current time. Thread-safe.
  virtual absl::Time Now() = 0;

  // Blocks the calling thread until Now() >= deadline.
  virtual void SleepUntil(absl::Time deadline) = 0;

  // Blocks on `cv` until `done()` returns true or Now() >= deadline, whichever
  // is first; returns the last value of `done()`. `done` is evaluated with
  // `mu` held (annotate the lambda ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu)).
  // Whoever makes `done()` true must signal `cv` (after changing the state
  // under `mu`). `mu` may be released while blocked. `deadline` may be
  // absl::InfiniteFuture() (no deadline).
  // REQUIRES: the calling thread holds `mu`; it holds it again on return.
  virtual bool WaitUntil(Mutex& mu, CondVar& cv, absl::FunctionRef<bool()> done,
                         absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // The process-wide real clock (wall time, absl::Now). Never destroyed.
  static Clock& Real();
};

// A clock that moves only when told to. Thread-safe. Threads blocked in
// WaitUntil/SleepUntil wake when AdvanceTime/SetTime reaches their deadline,
// or (for WaitUntil) when their predicate becomes true and `cv` is notified.
class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::UnixEpoch());
  SimulatedClock(const SimulatedClock&) = delete;
  SimulatedClock& operator=(const SimulatedClock&) = delete;

  absl::Time Now() override;
  void SleepUntil(absl::Time deadline) override;
  bool WaitUntil(Mutex& mu, CondVar& cv, absl::FunctionRef<bool()> done,
                 absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Moves time forward by `delta` (REQUIRES: delta >= 0) and wakes waiters.
  void AdvanceTime(absl::Duration delta);
  // Sets the time, rounded up to a whole nanosecond (so a deadline between
  // two of them is reached); a time earlier than Now() is ignored (time
  // never goes back).
  void SetTime(absl::Time time);

  // Number of threads currently blocked in this clock.
  int NumWaiters() ABSL_LOCKS_EXCLUDED(lock_);
  // Blocks until at least `count` threads are blocked in this clock. Lets a
  // test know that a thread has really started waiting, without sleeping.
  void BlockUntilWaiters(int count) ABSL_LOCKS_EXCLUDED(lock_);

 private:
  // A blocked waiter's lock and condition variable.
  struct Waiter {
    Mutex* mutex = nullptr;
    CondVar* cv = nullptr;
    bool operator<(const Waiter& other) const {
      return std::tie(mutex, cv) < std::tie(other.mutex, other.cv);
    }
  };
  void Register(const Waiter& waiter) ABSL_LOCKS_EXCLUDED(lock_);
  void Unregister(const Waiter& waiter) ABSL_LOCKS_EXCLUDED(lock_);
  void WakeAll() ABSL_LOCKS_EXCLUDED(lock_);

  std::atomic<int64_t> now_nanos_;
  Mutex lock_;
  CondVar waiters_changed_;
  // Blocked waiters, with the number of threads on each.
  std::map<Waiter, int> waiters_ ABSL_GUARDED_BY(lock_);
  int num_waiters_ ABSL_GUARDED_BY(lock_) = 0;
};

}  // namespace backfill

#endif  // THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_
