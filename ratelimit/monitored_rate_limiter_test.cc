#include "ratelimit/monitored_rate_limiter.h"

#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/rate_limit.h"
#include "ratelimit/rate_limiter.h"
#include "ratelimit/wake_signal.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;

TEST(MonitoredRateLimiterTest, ReportsTheLimitAtStartAndOnEachChange) {
  SimulatedClock clock;
  std::vector<double> reported;
  MonitoredRateLimiter::Observers observers;
  observers.on_limit = [&](double value) { reported.push_back(value); };
  MonitoredRateLimiter limiter(clock, RateLimit::Fixed(30), {}, observers);
  EXPECT_EQ(limiter.current_limit(), 30.0);
  EXPECT_EQ(limiter.Update(RateLimit::Pause()), RateLimit::Fixed(30));
  EXPECT_EQ(limiter.Update(RateLimit::Pause()), RateLimit::Pause());  // Same.
  limiter.Update(RateLimit::Disabled());
  ASSERT_THAT(reported, ElementsAre(30.0, 0.0, ::testing::_));
  EXPECT_TRUE(std::isinf(reported[2]));
  EXPECT_TRUE(std::isinf(limiter.current_limit()));
  EXPECT_EQ(limiter.limit(), RateLimit::Disabled());
}

TEST(MonitoredRateLimiterTest, EmptyObserversAreFine) {
  SimulatedClock clock;
  MonitoredRateLimiter limiter(clock, RateLimit::Disabled(), {}, {});
  EXPECT_TRUE(limiter.TryAcquire(10).granted);
  EXPECT_EQ(limiter.Acquire(10, nullptr),
            RateLimiter::AcquireOutcome::kAcquired);
  limiter.Update(RateLimit::Fixed(1));
  EXPECT_EQ(limiter.total_wait_time(), absl::ZeroDuration());
}

TEST(MonitoredRateLimiterTest, CountsDenials) {
  SimulatedClock clock;
  MonitoredRateLimiter limiter(clock, RateLimit::Fixed(10), {}, {});
  EXPECT_FALSE(limiter.TryAcquire(1).granted);
  EXPECT_FALSE(limiter.TryAcquire(1).granted);
  EXPECT_EQ(limiter.num_denied(), 2u);
  EXPECT_EQ(limiter.NextAvailableTime(1),
            absl::UnixEpoch() + absl::Milliseconds(100));
}

TEST(MonitoredRateLimiterTest, MeasuresTimeBlockedInAcquire) {
  SimulatedClock clock;
  std::vector<absl::Duration> waits;
  MonitoredRateLimiter::Observers observers;
  observers.on_wait = [&](absl::Duration waited) { waits.push_back(waited); };
  MonitoredRateLimiter limiter(clock, RateLimit::Fixed(10), {}, observers);
  std::optional<RateLimiter::AcquireOutcome> outcome;
  std::thread acquirer([&] { outcome = limiter.Acquire(5, nullptr); });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Milliseconds(500));
  acquirer.join();
  EXPECT_EQ(outcome, RateLimiter::AcquireOutcome::kAcquired);
  EXPECT_EQ(limiter.total_wait_time(), absl::Milliseconds(500));
  EXPECT_THAT(waits, ElementsAre(absl::Milliseconds(500)));

  // A wait cut short by a wake-up counts too.
  WakeSignal wake;
  std::thread woken([&] { outcome = limiter.Acquire(5, &wake); });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Milliseconds(200));
  clock.BlockUntilWaiters(1);
  wake.Notify();
  woken.join();
  EXPECT_EQ(outcome, RateLimiter::AcquireOutcome::kWoken);
  EXPECT_EQ(limiter.total_wait_time(), absl::Milliseconds(700));
  EXPECT_THAT(waits,
              ElementsAre(absl::Milliseconds(500), absl::Milliseconds(200)));
}

}  // namespace
}  // namespace backfill
