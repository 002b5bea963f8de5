#include "ratelimit/monitored_rate_limiter.h"

#include <utility>

namespace backfill {

MonitoredRateLimiter::MonitoredRateLimiter(Clock& clock, RateLimit limit,
                                           RateLimiter::Options options,
                                           Observers observers)
    : clock_(clock),
      limiter_(clock, limit, options),
      observers_(std::move(observers)) {
  if (observers_.on_limit) observers_.on_limit(limit.ToMetricValue());
}

RateLimiter::TryAcquireResult MonitoredRateLimiter::TryAcquire(
    uint64_t num_permits) {
  RateLimiter::TryAcquireResult result = limiter_.TryAcquire(num_permits);
  if (!result.granted) num_denied_.fetch_add(1, std::memory_order_relaxed);
  return result;
}

RateLimiter::AcquireOutcome MonitoredRateLimiter::Acquire(uint64_t num_permits,
                                                          WakeSignal* wake) {
  const absl::Time start = clock_.Now();
  const RateLimiter::AcquireOutcome outcome =
      limiter_.Acquire(num_permits, wake);
  const absl::Duration waited = clock_.Now() - start;
  if (waited > absl::ZeroDuration()) {
    wait_nanos_.fetch_add(absl::ToInt64Nanoseconds(waited),
                          std::memory_order_relaxed);
    if (observers_.on_wait) observers_.on_wait(waited);
  }
  return outcome;
}

RateLimit MonitoredRateLimiter::Update(RateLimit new_limit) {
  MutexLock lock(&update_mu_);
  const RateLimit old_limit = limiter_.Update(new_limit);
  if (old_limit != new_limit && observers_.on_limit) {
    observers_.on_limit(new_limit.ToMetricValue());
  }
  return old_limit;
}

}  // namespace backfill
