// MonitoredRateLimiter: a RateLimiter that reports its current limit and
// counts denials, without depending on //metrics (observers are plain
// callbacks; the executor wires them to gauges).
//
// clang-format off
//   MonitoredRateLimiter::Observers observers;
//   observers.on_limit = [&](double v) { metrics.rate_limit_rows_per_second.Set(v); };
//   MonitoredRateLimiter limiter(clock, RateLimit::Fixed(100), {}, observers);
// clang-format on
#ifndef RATELIMIT_MONITORED_RATE_LIMITER_H_
#define RATELIMIT_MONITORED_RATE_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "ratelimit/rate_limit.h"
#include "ratelimit/rate_limiter.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class MonitoredRateLimiter {
 public:
  struct Observers {
    // Called with RateLimit::ToMetricValue() of the limit (rows/s; +Inf when
    // disabled, 0 when paused) once from the constructor and after every
    // Update() that changes the limit, in the order the updates took effect.
    // Empty: not called. Must not call back into this limiter.
    std::function<void(double rows_per_second)> on_limit;
  };

  // `clock` must outlive the limiter. Never fails.
  MonitoredRateLimiter(Clock& clock, RateLimit limit,
                       RateLimiter::Options options, Observers observers);
  MonitoredRateLimiter(const MonitoredRateLimiter&) = delete;
  MonitoredRateLimiter& operator=(const MonitoredRateLimiter&) = delete;

  // As RateLimiter::TryAcquire; a denial also increments num_denied().
  RateLimiter::TryAcquireResult TryAcquire(uint64_t num_permits);

  // As RateLimiter::NextAvailableTime.
  absl::Time NextAvailableTime(uint64_t num_permits) {
    return limiter_.NextAvailableTime(num_permits);
  }

  // As RateLimiter::Update; reports the new limit to on_limit if it changed.
  // Thread-safe; concurrent updates are reported in the order they apply.
  RateLimit Update(RateLimit new_limit);

  // The current limit. Thread-safe.
  RateLimit limit() const { return limiter_.limit(); }
  // The current limit as a metric value (see RateLimit::ToMetricValue).
  double current_limit() const { return limit().ToMetricValue(); }
  // Number of TryAcquire() calls that were denied. Thread-safe.
  uint64_t num_denied() const {
    return num_denied_.load(std::memory_order_relaxed);
  }

 private:
  RateLimiter limiter_;
  const Observers observers_;
  // Serialises Update() so that on_limit sees limits in the applied order.
  Mutex update_mu_;
  std::atomic<uint64_t> num_denied_{0};
};

}  // namespace backfill

#endif  // RATELIMIT_MONITORED_RATE_LIMITER_H_
