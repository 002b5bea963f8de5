#include "ratelimit/rate_limiter.h"

#include <algorithm>
#include <cstdint>

namespace backfill {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace

RateLimiter::RateLimiter(Clock& clock, RateLimit limit, Options options)
    : clock_(clock),
      max_burst_(std::max<uint32_t>(options.max_burst, 1)),
      disabled_(limit.is_disabled()),
      limit_(limit) {
  MutexLock lock(&mu_);
  ResetLocked(clock_.Now());
}

void RateLimiter::ResetLocked(absl::Time now) {
  origin_ = now;
  if (!limit_.is_fixed()) return;
  burst_ = std::min<uint64_t>(max_burst_, limit_.rows_per_second());
  // Empty bucket: all B permits are "in flight" until B·T from now.
  tat_ = static_cast<Units>(burst_) * kNanosPerSecond;
}

RateLimiter::TryAcquireResult RateLimiter::TryAcquireLocked(
    uint64_t num_permits, absl::Time now, bool consume) {
  TryAcquireResult result;
  if (num_permits == 0 || limit_.is_disabled()) {
    result.granted = true;
    return result;
  }
  if (limit_.is_paused()) {
    result.retry_at = absl::InfiniteFuture();
    return result;
  }
  const Units rate = limit_.rows_per_second();
  // Real time may step backwards; treat that as "no time passed".
  const int64_t elapsed_nanos =
      std::max<int64_t>(absl::ToInt64Nanoseconds(now - origin_), 0);
  const Units now_units = static_cast<Units>(elapsed_nanos) * rate;
  const Units cost = static_cast<Units>(num_permits) * kNanosPerSecond;
  const Units burst = static_cast<Units>(burst_) * kNanosPerSecond;
  const Units start = std::max(tat_, now_units);
  // A request larger than the burst is checked as if it were exactly the
  // burst (granted on a full bucket) and then runs into debt.
  const Units checked_cost = std::min(cost, burst);
  if (start + checked_cost - now_units <= burst) {
    result.granted = true;
    if (consume) tat_ = start + cost;
    return result;
  }
  // Denied: tat_ > now_units here. The request conforms from the time t with
  // tat_ + checked_cost - t == burst; round up to a whole nanosecond.
  const Units retry_units = tat_ + checked_cost - burst;
  const Units retry_nanos = (retry_units + rate - 1) / rate;
  result.retry_at = origin_ + absl::Nanoseconds(static_cast<int64_t>(
                                  std::min<Units>(retry_nanos, INT64_MAX)));
  return result;
}

RateLimiter::TryAcquireResult RateLimiter::TryAcquire(uint64_t num_permits) {
  if (disabled_.load(std::memory_order_acquire)) {
    TryAcquireResult result;
    result.granted = true;
    return result;
  }
  const absl::Time now = clock_.Now();
  MutexLock lock(&mu_);
  return TryAcquireLocked(num_permits, now, /*consume=*/true);
}

absl::Time RateLimiter::NextAvailableTime(uint64_t num_permits) {
  const absl::Time now = clock_.Now();
  MutexLock lock(&mu_);
  const TryAcquireResult result =
      TryAcquireLocked(num_permits, now, /*consume=*/false);
  return result.granted ? now : result.retry_at;
}

RateLimit RateLimiter::Update(RateLimit new_limit) {
  const absl::Time now = clock_.Now();
  RateLimit old_limit;
  {
    MutexLock lock(&mu_);
    old_limit = limit_;
    if (old_limit == new_limit) return old_limit;
    limit_ = new_limit;
    disabled_.store(new_limit.is_disabled(), std::memory_order_release);
    ResetLocked(now);
  }
  return old_limit;
}

RateLimit RateLimiter::limit() const {
  MutexLock lock(&mu_);
  return limit_;
}

}  // namespace backfill
