#include "third_party/absl_extras/clock.h"

#include <chrono>
#include <algorithm>

#include "absl/time/clock.h"

namespace backfill {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepUntil(absl::Time deadline) override {
    const absl::Duration remaining = deadline - absl::Now();
    if (remaining > absl::ZeroDuration()) absl::SleepFor(remaining);
  }
  bool WaitUntil(std::unique_lock<std::mutex>& lock,
                 std::condition_variable& cv, absl::FunctionRef<bool()> done,
                 absl::Time deadline) override {
    if (deadline == absl::InfiniteFuture()) {
      cv.wait(lock, [&] { return done(); });
      return true;
    }
    // Saturate far deadlines: std::chrono arithmetic would overflow.
    const absl::Duration max_wait = absl::Hours(24 * 365);
    if (deadline - absl::Now() > max_wait) deadline = absl::Now() + max_wait;
    // steady_clock so that a wall-clock jump neither wakes nor stalls waiters.
    const auto steady_deadline =
        std::chrono::steady_clock::now() +
        absl::ToChronoNanoseconds(
            std::max(deadline - absl::Now(), absl::ZeroDuration()));
    return cv.wait_until(lock, steady_deadline, [&] { return done(); });
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
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mutex);
  WaitUntil(lock, cv, [] { return false; }, deadline);
}

// Registration happens with the waiter's mutex released: WakeAll holds lock_
// while it takes each waiter's mutex, so taking lock_ with that mutex held
// could deadlock.
bool SimulatedClock::WaitUntil(std::unique_lock<std::mutex>& lock,
                               std::condition_variable& cv,
                               absl::FunctionRef<bool()> done,
                               absl::Time deadline) {
  if (done()) return true;
  const int64_t deadline_nanos = absl::ToUnixNanos(deadline);
  auto expired = [&] {
    return now_nanos_.load(std::memory_order_acquire) >= deadline_nanos;
  };
  if (expired()) return false;
  const Waiter waiter{lock.mutex(), &cv};
  lock.unlock();
  Register(waiter);
  lock.lock();
  cv.wait(lock, [&] { return done() || expired(); });
  lock.unlock();
  Unregister(waiter);
  lock.lock();
  return done();
}

void SimulatedClock::AdvanceTime(absl::Duration delta) {
  now_nanos_.fetch_add(absl::ToInt64Nanoseconds(delta),
                       std::memory_order_acq_rel);
  WakeAll();
}

void SimulatedClock::SetTime(absl::Time time) {
  const int64_t target = absl::ToUnixNanos(time);
  int64_t current = now_nanos_.load(std::memory_order_acquire);
  while (current < target &&
         !now_nanos_.compare_exchange_weak(current, target,
                                           std::memory_order_acq_rel)) {
  }
  WakeAll();
}

int SimulatedClock::NumWaiters() {
  std::lock_guard<std::mutex> guard(lock_);
  return num_waiters_;
}

void SimulatedClock::BlockUntilWaiters(int count) {
  std::unique_lock<std::mutex> guard(lock_);
  waiters_changed_.wait(guard, [&] { return num_waiters_ >= count; });
}

void SimulatedClock::Register(const Waiter& waiter) {
  std::lock_guard<std::mutex> guard(lock_);
  ++waiters_[waiter];
  ++num_waiters_;
  waiters_changed_.notify_all();
}

void SimulatedClock::Unregister(const Waiter& waiter) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = waiters_.find(waiter);
  if (--it->second == 0) waiters_.erase(it);
  --num_waiters_;
  waiters_changed_.notify_all();
}

// Taking and releasing a waiter's mutex before notifying closes the window in
// which it has evaluated its predicate (old time) but not yet blocked.
void SimulatedClock::WakeAll() {
  std::lock_guard<std::mutex> guard(lock_);
  for (auto& [waiter, count] : waiters_) {
    { std::lock_guard<std::mutex> waiter_guard(*waiter.mutex); }
    waiter.cv->notify_all();
  }
}

}  // namespace backfill
