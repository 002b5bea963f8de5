// Clock: the one source of time for everything time-based (rate limiter,
// metrics timers, barrier coordinator), so tests can run on simulated time.
//
//   Clock& clock = Clock::Real();             // production
//   SimulatedClock sim;                       // tests
//   sim.AdvanceTime(absl::Seconds(1));        // wakes waiters whose deadline passed
//
// Waiting is done on a std::condition_variable with a predicate and a
// deadline: a waiter wakes as soon as the predicate holds (whoever changes the
// state notifies the condition variable) or the clock reaches the deadline.
// Nothing polls.
//
// Why std::mutex and not absl::Mutex: Debian's abseil is not built with
// ThreadSanitizer annotations, so TSan cannot see absl::Mutex synchronisation
// and reports false races. The project uses std::mutex/condition_variable for
// every lock for that reason (annotated with ABSL_GUARDED_BY all the same).
#ifndef THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_
#define THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"

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
  // `lock` held. Whoever makes `done()` true must notify `cv` (after changing
  // the state under the same mutex).
  // REQUIRES: `lock` owns its mutex; it owns it again on return.
  virtual bool WaitUntil(std::unique_lock<std::mutex>& lock,
                         std::condition_variable& cv,
                         absl::FunctionRef<bool()> done,
                         absl::Time deadline) = 0;

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
  bool WaitUntil(std::unique_lock<std::mutex>& lock,
                 std::condition_variable& cv, absl::FunctionRef<bool()> done,
                 absl::Time deadline) override;

  // Moves time forward by `delta` (REQUIRES: delta >= 0) and wakes waiters.
  void AdvanceTime(absl::Duration delta);
  // Sets the time; a time earlier than Now() is ignored (time never goes back).
  void SetTime(absl::Time time);

  // Number of threads currently blocked in this clock.
  int NumWaiters();
  // Blocks until at least `count` threads are blocked in this clock. Lets a
  // test know that a thread has really started waiting, without sleeping.
  void BlockUntilWaiters(int count);

 private:
  struct Waiter {
    std::mutex* mutex;
    std::condition_variable* cv;
    bool operator<(const Waiter& other) const {
      return mutex != other.mutex ? mutex < other.mutex : cv < other.cv;
    }
  };
  void Register(const Waiter& waiter);
  void Unregister(const Waiter& waiter);
  void WakeAll();

  std::atomic<int64_t> now_nanos_;
  std::mutex lock_;
  std::condition_variable waiters_changed_;
  // Blocked waiters, with the number of threads on each.
  std::map<Waiter, int> waiters_ ABSL_GUARDED_BY(lock_);
  int num_waiters_ ABSL_GUARDED_BY(lock_) = 0;
};

}  // namespace backfill

#endif  // THIRD_PARTY_ABSL_EXTRAS_CLOCK_H_
