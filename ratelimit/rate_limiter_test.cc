#include "ratelimit/rate_limiter.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/rate_limit.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {


const absl::Time kStart = absl::UnixEpoch() + absl::Hours(1);

struct Grant {
  absl::Time time;
  uint64_t permits;
};

// A greedy single-threaded caller: acquires `request` permits whenever they
// are available, jumping the clock to each retry_at, until `end`. Checks that
// retry_at is exact: denied 1 ns before it, granted at it.
std::vector<Grant> RunGreedy(SimulatedClock& clock, RateLimiter& limiter,
                             uint64_t request, absl::Time end) {
  std::vector<Grant> grants;
  while (clock.Now() <= end) {
    const RateLimiter::TryAcquireResult result = limiter.TryAcquire(request);
    if (result.granted) {
      grants.push_back({clock.Now(), request});
      continue;
    }
    EXPECT_GT(result.retry_at, clock.Now());
    EXPECT_EQ(limiter.NextAvailableTime(request), result.retry_at);
    if (result.retry_at > end) break;
    clock.SetTime(result.retry_at - absl::Nanoseconds(1));
    EXPECT_FALSE(limiter.TryAcquire(request).granted)
        << "at " << clock.Now() << ", retry_at " << result.retry_at;
    clock.SetTime(result.retry_at);
    if (::testing::Test::HasFailure()) break;
  }
  return grants;
}

uint64_t TotalPermits(const std::vector<Grant>& grants) {
  uint64_t total = 0;
  for (const Grant& grant : grants) total += grant.permits;
  return total;
}

// The most permits granted in any closed window [t, t + width].
uint64_t MaxPermitsInWindow(const std::vector<Grant>& grants,
                            absl::Duration width) {
  uint64_t best = 0;
  uint64_t in_window = 0;
  size_t end = 0;
  for (size_t begin = 0; begin < grants.size(); ++begin) {
    while (end < grants.size() &&
           grants[end].time <= grants[begin].time + width) {
      in_window += grants[end++].permits;
    }
    best = std::max(best, in_window);
    in_window -= grants[begin].permits;
  }
  return best;
}

struct AccuracyCase {
  uint32_t rate;
  uint64_t request;  // permits per TryAcquire.
};

class RateLimiterAccuracyTest : public ::testing::TestWithParam<AccuracyCase> {
};

// Over 10 s of simulated time a greedy caller gets rate × 10 permits within
// one request, and no 2 s window holds more than rate × 2 + one request.
TEST_P(RateLimiterAccuracyTest, TenSecondsAtFullSpeed) {
  const AccuracyCase& param = GetParam();
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(param.rate));
  const std::vector<Grant> grants =
      RunGreedy(clock, limiter, param.request, kStart + absl::Seconds(10));
  const uint64_t total = TotalPermits(grants);
  const uint64_t expected = uint64_t{param.rate} * 10;
  EXPECT_LE(total, expected + param.request);
  EXPECT_GE(total + param.request, expected);
  EXPECT_LE(MaxPermitsInWindow(grants, absl::Seconds(2)),
            uint64_t{param.rate} * 2 + param.request);
}

// Chunk-sized requests: min(rate, 256), at least 2 (SnapshotChunkSize), and
// single permits.
INSTANTIATE_TEST_SUITE_P(
    Rates, RateLimiterAccuracyTest,
    ::testing::Values(AccuracyCase{1, 2}, AccuracyCase{30, 30},
                      AccuracyCase{1000, 256}, AccuracyCase{1000000, 256},
                      AccuracyCase{1, 1}, AccuracyCase{30, 1},
                      AccuracyCase{1000, 1}, AccuracyCase{1000000, 100}),
    [](const ::testing::TestParamInfo<AccuracyCase>& info) {
      return absl::StrCat("Rate", info.param.rate, "Request",
                          info.param.request);
    });

// A caller that polls every millisecond (rather than jumping to retry_at)
// after long idle periods: idle time banks at most min(max_burst, rate).
TEST(RateLimiterTest, IdleTimeBanksAtMostTheBurst) {
  for (const uint32_t rate : {10u, 1000u, 1000000u}) {
    SCOPED_TRACE(absl::StrCat("rate ", rate));
    SimulatedClock clock(kStart);
    RateLimiter limiter(clock, RateLimit::Fixed(rate),
                        RateLimiter::Options{.max_burst = 64});
    clock.AdvanceTime(absl::Seconds(30));
    uint64_t granted = 0;
    while (limiter.TryAcquire(1).granted) ++granted;
    EXPECT_EQ(granted, std::min<uint64_t>(64, rate));
  }
}

TEST(RateLimiterTest, StartsEmpty) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(4));
  const RateLimiter::TryAcquireResult result = limiter.TryAcquire(1);
  EXPECT_FALSE(result.granted);
  EXPECT_EQ(result.retry_at, kStart + absl::Milliseconds(250));
}

TEST(RateLimiterTest, DeniedRequestsConsumeNothing) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(10));
  for (int i = 0; i < 100; ++i) {
    const RateLimiter::TryAcquireResult result = limiter.TryAcquire(5);
    ASSERT_FALSE(result.granted);
    ASSERT_EQ(result.retry_at, kStart + absl::Milliseconds(500));
    // A large request, denied, does not delay the small ones either.
    ASSERT_FALSE(limiter.TryAcquire(1000).granted);
  }
  clock.SetTime(kStart + absl::Milliseconds(500));
  EXPECT_TRUE(limiter.TryAcquire(5).granted);
  EXPECT_FALSE(limiter.TryAcquire(1).granted);
}

TEST(RateLimiterTest, NextAvailableTimeDoesNotConsume) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(10));
  EXPECT_EQ(limiter.NextAvailableTime(2), kStart + absl::Milliseconds(200));
  clock.AdvanceTime(absl::Seconds(1));
  EXPECT_EQ(limiter.NextAvailableTime(10), clock.Now());
  EXPECT_EQ(limiter.NextAvailableTime(10), clock.Now());
  EXPECT_TRUE(limiter.TryAcquire(10).granted);
  EXPECT_EQ(limiter.NextAvailableTime(1),
            clock.Now() + absl::Milliseconds(100));
}

TEST(RateLimiterTest, RequestLargerThanBurstRunsIntoDebt) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(10),
                      RateLimiter::Options{.max_burst = 4});
  // Burst 4: a request of 20 waits for a full bucket (0.4 s)...
  EXPECT_EQ(limiter.NextAvailableTime(20), kStart + absl::Milliseconds(400));
  clock.SetTime(kStart + absl::Milliseconds(400));
  EXPECT_TRUE(limiter.TryAcquire(20).granted);
  // ... and then pays for all 20 permits: the next permit comes after the
  // debt (2 s) plus one emission interval, minus the burst credit.
  EXPECT_EQ(limiter.NextAvailableTime(1),
            clock.Now() + absl::Seconds(2) - absl::Milliseconds(300));
}

TEST(RateLimiterTest, ZeroPermitsAreAlwaysGranted) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Pause());
  EXPECT_TRUE(limiter.TryAcquire(0).granted);
  limiter.Update(RateLimit::Fixed(1));
  EXPECT_TRUE(limiter.TryAcquire(0).granted);
}

TEST(RateLimiterTest, DisabledAlwaysGrants) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Disabled());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(limiter.TryAcquire(UINT64_MAX / 2).granted);
  }
  EXPECT_EQ(limiter.NextAvailableTime(1), clock.Now());
}

TEST(RateLimiterTest, PauseGrantsNothingUntilUpdated) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Pause());
  for (int i = 0; i < 10; ++i) {
    const RateLimiter::TryAcquireResult result = limiter.TryAcquire(1);
    ASSERT_FALSE(result.granted);
    ASSERT_EQ(result.retry_at, absl::InfiniteFuture());
    clock.AdvanceTime(absl::Hours(1));
  }
  EXPECT_EQ(limiter.NextAvailableTime(1), absl::InfiniteFuture());
  EXPECT_EQ(limiter.Update(RateLimit::Fixed(10)), RateLimit::Pause());
  // The bucket restarts empty at the update.
  EXPECT_EQ(limiter.NextAvailableTime(1),
            clock.Now() + absl::Milliseconds(100));
}

TEST(RateLimiterTest, UpdateReturnsTheOldLimit) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Disabled());
  EXPECT_EQ(limiter.Update(RateLimit::Fixed(5)), RateLimit::Disabled());
  EXPECT_EQ(limiter.limit(), RateLimit::Fixed(5));
  EXPECT_EQ(limiter.Update(RateLimit::Pause()), RateLimit::Fixed(5));
  EXPECT_EQ(limiter.Update(RateLimit::Disabled()), RateLimit::Pause());
  EXPECT_TRUE(limiter.TryAcquire(1000).granted);
}

TEST(RateLimiterTest, UpdateToTheSameLimitKeepsTheBucket) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(10));
  clock.AdvanceTime(absl::Seconds(5));  // Banks 10 permits.
  EXPECT_EQ(limiter.Update(RateLimit::Fixed(10)), RateLimit::Fixed(10));
  EXPECT_TRUE(limiter.TryAcquire(10).granted);
}

TEST(RateLimiterTest, UpdateToANewRateRestartsEmptyAndTakesEffectAtOnce) {
  SimulatedClock clock(kStart);
  RateLimiter limiter(clock, RateLimit::Fixed(10));
  clock.AdvanceTime(absl::Seconds(5));    // Banks 10 permits...
  limiter.Update(RateLimit::Fixed(100));  // ... which the update drops.
  EXPECT_FALSE(limiter.TryAcquire(1).granted);
  EXPECT_EQ(limiter.NextAvailableTime(100), clock.Now() + absl::Seconds(1));
  const std::vector<Grant> grants =
      RunGreedy(clock, limiter, 10, clock.Now() + absl::Seconds(10));
  EXPECT_EQ(TotalPermits(grants), 1000u);
}

// Real clock, several threads acquiring as fast as they can for ~0.5 s: the
// total never exceeds rate × elapsed + burst (the bucket starts empty).
TEST(RateLimiterConcurrentTest, NeverExceedsTheRate) {
  constexpr uint32_t kRate = 200000;
  constexpr uint64_t kRequest = 16;
  constexpr int kNumThreads = 4;
  Clock& clock = Clock::Real();
  const absl::Time start = clock.Now();
  RateLimiter limiter(clock, RateLimit::Fixed(kRate));
  const absl::Time stop = start + absl::Milliseconds(500);
  std::atomic<uint64_t> granted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kNumThreads; ++i) {
    threads.emplace_back([&] {
      while (clock.Now() < stop) {
        if (limiter.TryAcquire(kRequest).granted) {
          granted += kRequest;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double elapsed = absl::ToDoubleSeconds(clock.Now() - start);
  EXPECT_LE(static_cast<double>(granted.load()), kRate * elapsed + 256);
  // Sanity: the limiter is not starving everyone (loose, for sanitizers).
  EXPECT_GE(static_cast<double>(granted.load()), kRate * 0.5 * 0.1);
}

}  // namespace
}  // namespace backfill
