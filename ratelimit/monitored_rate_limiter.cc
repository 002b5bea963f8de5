#include "ratelimit/monitored_rate_limiter.h"

#include <utility>

namespace backfill {

MonitoredRateLimiter::MonitoredRateLimiter(Clock& clock, RateLimit limit,
                                           RateLimiter::Options options,
                                           Observers observers)
    : limiter_(clock, limit, options),
      observers_(std::move(observers)) {
  if (observers_.on_limit) observers_.on_limit(limit.ToMetricValue());
}

RateLimiter::TryAcquireResult MonitoredRateLimiter::TryAcquire(
    uint64_t num_permits) {
  RateLimiter::TryAcquireResult result = limiter_.TryAcquire(num_permits);
  if (!result.granted) num_denied_.fetch_add(1, std::memory_order_relaxed);
  return result;
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
