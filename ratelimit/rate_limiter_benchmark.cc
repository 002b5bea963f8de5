// Cost of one RateLimiter::TryAcquire on the real clock, uncontended and
// with two threads sharing one limiter.
//
//   bazel run -c opt //ratelimit:rate_limiter_benchmark
#include <cstdint>
#include <memory>

#include "benchmark/benchmark.h"
#include "ratelimit/rate_limit.h"
#include "ratelimit/rate_limiter.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

// One limiter per benchmark, shared by its threads (never destroyed, so no
// thread can outlive it).
RateLimiter& SharedLimiter(RateLimit limit) {
  static RateLimiter* const disabled =
      new RateLimiter(Clock::Real(), RateLimit::Disabled());
  // The highest rate, so that most requests are granted.
  static RateLimiter* const fixed =
      new RateLimiter(Clock::Real(), RateLimit::Fixed(UINT32_MAX));
  // A low rate: almost every request is denied (the throttled path).
  static RateLimiter* const throttled =
      new RateLimiter(Clock::Real(), RateLimit::Fixed(1));
  if (limit.is_disabled()) return *disabled;
  return limit.rows_per_second() == 1 ? *throttled : *fixed;
}

void BM_TryAcquireDisabled(benchmark::State& state) {
  RateLimiter& limiter = SharedLimiter(RateLimit::Disabled());
  for (auto _ : state) {
    benchmark::DoNotOptimize(limiter.TryAcquire(1));
  }
}
BENCHMARK(BM_TryAcquireDisabled)->Threads(1)->Threads(2);

void BM_TryAcquireFixedGranted(benchmark::State& state) {
  RateLimiter& limiter = SharedLimiter(RateLimit::Fixed(UINT32_MAX));
  int64_t granted = 0;
  for (auto _ : state) {
    granted += limiter.TryAcquire(1).granted;
  }
  // Averaged over threads (each thread reports its own fraction).
  state.counters["granted_fraction"] = benchmark::Counter(
      static_cast<double>(granted) / static_cast<double>(state.iterations()),
      benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_TryAcquireFixedGranted)->Threads(1)->Threads(2);

void BM_TryAcquireFixedDenied(benchmark::State& state) {
  RateLimiter& limiter = SharedLimiter(RateLimit::Fixed(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(limiter.TryAcquire(1));
  }
}
BENCHMARK(BM_TryAcquireFixedDenied)->Threads(1)->Threads(2);

}  // namespace
}  // namespace backfill
