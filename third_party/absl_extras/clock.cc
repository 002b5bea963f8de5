#include "third_party/absl_extras/clock.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

#include "absl/time/clock.h"

namespace backfill {
namespace {

// Saturates far deadlines: std::chrono arithmetic would overflow.
constexpr absl::Duration kMaxWait = absl::Hours(24 * 365);

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepUntil(absl::Time deadline) override {
    const absl::Duration remaining = deadline - absl::Now();
    if (remaining > absl::ZeroDuration()) absl::SleepFor(remaining);
  }

  // The remaining time is measured once against the wall clock and then
  // waited on the monotonic clock, so that a wall-clock jump neither wakes
  // nor stalls waiters.
  bool WaitUntil(Mutex& mu, CondVar& cv, absl::FunctionRef<bool()> done,
                 absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (deadline == absl::InfiniteFuture()) {
      while (!done()) cv.Wait(&mu);
      return true;
    }
    const auto steady_deadline =
        std::chrono::steady_clock::now() +
        absl::ToChronoNanoseconds(
            std::clamp(deadline - absl::Now(), absl::ZeroDuration(), kMaxWait));
    while (!done()) {
      const absl::Duration remaining =
          absl::FromChrono(steady_deadline - std::chrono::steady_clock::now());
      if (remaining <= absl::ZeroDuration()) return false;
      cv.WaitWithTimeout(&mu, remaining);
    }
    return true;
  }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* const clock = new RealClock();
  return *clock;
}

SimulatedClock::SimulatedClock(absl::Time start)
    : now_nanos_(absl::ToUnixNanos(start)) {}

absl::Time SimulatedClock::Now() {
  return absl::FromUnixNanos(now_nanos_.load(std::memory_order_acquire));
}

void SimulatedClock::SleepUntil(absl::Time deadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  WaitUntil(
      mu, cv, [] { return false; }, deadline);
}

// Registration happens with the waiter's mutex released: WakeAll holds lock_
// while it takes each waiter's mutex, so taking lock_ with that mutex held
// could deadlock.
bool SimulatedClock::WaitUntil(Mutex& mu, CondVar& cv,
                               absl::FunctionRef<bool()> done,
                               absl::Time deadline) {
  if (done()) return true;
  const int64_t deadline_nanos = absl::ToUnixNanos(deadline);
  auto expired = [&] {
    return now_nanos_.load(std::memory_order_acquire) >= deadline_nanos;
  };
  if (expired()) return false;
  Waiter waiter;
  waiter.mutex = &mu;
  waiter.cv = &cv;
  mu.Unlock();
  Register(waiter);
  mu.Lock();
  while (!done() && !expired()) cv.Wait(&mu);
  mu.Unlock();
  Unregister(waiter);
  mu.Lock();
  return done();
}

void SimulatedClock::AdvanceTime(absl::Duration delta) {
  now_nanos_.fetch_add(absl::ToInt64Nanoseconds(delta),
                       std::memory_order_acq_rel);
  WakeAll();
}

void SimulatedClock::SetTime(absl::Time time) {
  // Whole nanoseconds, rounded up: a time between two of them is reached.
  int64_t target = absl::ToUnixNanos(time);
  if (absl::FromUnixNanos(target) < time &&
      target < std::numeric_limits<int64_t>::max()) {
    ++target;
  }
  int64_t current = now_nanos_.load(std::memory_order_acquire);
  while (current < target && !now_nanos_.compare_exchange_weak(
                                 current, target, std::memory_order_acq_rel)) {
  }
  WakeAll();
}

int SimulatedClock::NumWaiters() {
  MutexLock lock(&lock_);
  return num_waiters_;
}

void SimulatedClock::BlockUntilWaiters(int count) {
  MutexLock lock(&lock_);
  while (num_waiters_ < count) waiters_changed_.Wait(&lock_);
}

void SimulatedClock::Register(const Waiter& waiter) {
  MutexLock lock(&lock_);
  ++waiters_[waiter];
  ++num_waiters_;
  waiters_changed_.SignalAll();
}

void SimulatedClock::Unregister(const Waiter& waiter) {
  MutexLock lock(&lock_);
  auto it = waiters_.find(waiter);
  if (--it->second == 0) waiters_.erase(it);
  --num_waiters_;
  waiters_changed_.SignalAll();
}

// Taking and releasing a waiter's mutex before notifying closes the window in
// which it has evaluated its predicate (old time) but not yet blocked.
void SimulatedClock::WakeAll() {
  MutexLock lock(&lock_);
  for (auto& [waiter, count] : waiters_) {
    { MutexLock waiter_lock(waiter.mutex); }
    waiter.cv->SignalAll();
  }
}

}  // namespace backfill
