// RateLimiter: enforces a RateLimit on snapshot rows, one permit per row
// (CONTRACT §7). Smooth: no burst larger than one chunk; over any window of W
// seconds it grants at most rate × W + one request's worth of permits.
//
//   RateLimiter limiter(clock, RateLimit::Fixed(1000));
//   RateLimiter::TryAcquireResult r = limiter.TryAcquire(256);
//   if (!r.granted) scheduler.WakeAt(r.retry_at);
//
// Algorithm (Fixed(rate)): GCRA / virtual scheduling with burst tolerance.
// Each permit costs T = 1/rate s of "theoretical time". The state is TAT, the
// theoretical arrival time at which the bucket would be full again. With
// B = min(max_burst, rate) (never more than one second of permits):
//   * a request for n <= B permits at time `now` is granted iff
//       max(TAT, now) + n·T - now <= B·T,
//     i.e. iff at least n of the at most B banked permits are available;
//     then TAT = max(TAT, now) + n·T;
//   * a request for n > B permits is granted only when the bucket is full
//     (TAT <= now) and then runs into debt: TAT = now + n·T, so the long-run
//     rate stays exact (this is how a rate of 1 row/s serves chunks of 2);
//   * a denied request consumes nothing.
// So idle time earns at most B permits of credit, and over any window of
// length W at most rate·W + max(B, n_max) permits are granted, where n_max is
// the largest request. Time is kept in exact integer units (1 ns = rate
// units, 1 permit = 1e9 units), so no rounding drift accumulates. The bucket
// starts empty (like RisingWave, the first n permits come n·T after creation)
// and restarts empty whenever Update() changes the limit, so an update never
// grants a burst.
//
// Disabled always grants without taking a lock. Pause denies with
// retry_at = absl::InfiniteFuture() until Update() changes the limit.
#ifndef RATELIMIT_RATE_LIMITER_H_
#define RATELIMIT_RATE_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <ostream>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "ratelimit/rate_limit.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class RateLimiter {
 public:
  struct Options {
    // Most permits that idle time can bank, i.e. the largest burst. The
    // effective burst is min(max_burst, rows_per_second): never more than one
    // second of permits. Default 256 (one default-sized chunk). Range >= 1;
    // 0 is treated as 1.
    uint32_t max_burst = 256;
  };

  struct TryAcquireResult {
    // Whether the permits were granted (and consumed).
    bool granted = false;
    // Meaningful only when !granted: the earliest time at which the same
    // request would be granted if nobody else acquires meanwhile and the
    // limit does not change; absl::InfiniteFuture() under Pause.
    // absl::InfinitePast() when granted.
    absl::Time retry_at = absl::InfinitePast();
  };

  // `clock` must outlive the limiter. Never fails.
  RateLimiter(Clock& clock, RateLimit limit, Options options);
  RateLimiter(Clock& clock, RateLimit limit)
      : RateLimiter(clock, limit, Options()) {}
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Non-blocking: grants `num_permits` now, or denies and says when to retry.
  // A denied request consumes nothing. num_permits == 0 is always granted.
  // Thread-safe; lock-free under Disabled.
  TryAcquireResult TryAcquire(uint64_t num_permits);

  // The earliest time at which TryAcquire(num_permits) would be granted, as
  // of now, without consuming anything: <= clock.Now() if it would be granted
  // now, absl::InfiniteFuture() under Pause. For single-threaded
  // deterministic schedulers. Thread-safe.
  absl::Time NextAvailableTime(uint64_t num_permits);

  // Replaces the limit, effective at once, and returns the previous one.
  // Updating to an equal limit changes nothing (no reset). Otherwise the
  // bucket restarts empty. Thread-safe.
  RateLimit Update(RateLimit new_limit);

  // The current limit. Thread-safe.
  RateLimit limit() const;

 private:
  // Time in "units": 1 ns = rate units, so 1 permit = 1e9 units exactly.
  using Units = __int128;

  TryAcquireResult TryAcquireLocked(uint64_t num_permits, absl::Time now,
                                    bool consume)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ResetLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const uint32_t max_burst_;
  // Mirrors limit_.is_disabled() for the lock-free fast path.
  std::atomic<bool> disabled_;

  mutable Mutex mu_;
  RateLimit limit_ ABSL_GUARDED_BY(mu_);
  // GCRA state, meaningful under Fixed: time origin of the bucket, effective
  // burst B in permits, and TAT in units since origin_.
  absl::Time origin_ ABSL_GUARDED_BY(mu_);
  uint64_t burst_ ABSL_GUARDED_BY(mu_) = 1;
  Units tat_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace backfill

#endif  // RATELIMIT_RATE_LIMITER_H_
