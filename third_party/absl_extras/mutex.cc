#include "third_party/absl_extras/mutex.h"

#include <chrono>

namespace backfill {
namespace {

// Longer timeouts are cut to this: std::chrono arithmetic on steady_clock
// would overflow for durations near absl's range. A waiter woken after a year
// re-checks its condition like after a spurious wake-up.
constexpr absl::Duration kMaxTimeout = absl::Hours(24 * 365);

}  // namespace

// The std::mutex is adopted for the duration of the wait and released back
// to `mu`, which keeps holding it from the analysis' point of view; the owner
// is cleared while the wait has the lock released, so that AssertHeld on
// another thread that takes `mu` meanwhile sees itself.
void CondVar::Wait(Mutex* mu) {
  mu->AssertHeld();
  mu->owner_.store(std::thread::id(), std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu->mutex_, std::adopt_lock);
  cv_.wait(lock);
  lock.release();
  mu->owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  mu->AssertHeld();
  if (timeout == absl::InfiniteDuration()) {
    Wait(mu);
    return false;
  }
  if (timeout <= absl::ZeroDuration()) return true;
  if (timeout > kMaxTimeout) timeout = kMaxTimeout;
  mu->owner_.store(std::thread::id(), std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu->mutex_, std::adopt_lock);
  const std::cv_status status =
      cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout));
  lock.release();
  mu->owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  return status == std::cv_status::timeout;
}

}  // namespace backfill
