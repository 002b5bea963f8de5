#include "ratelimit/monitored_rate_limiter.h"

#include <cmath>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/rate_limit.h"
#include "ratelimit/rate_limiter.h"
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
  limiter.Update(RateLimit::Fixed(1));
  EXPECT_FALSE(limiter.TryAcquire(10).granted);
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

}  // namespace
}  // namespace backfill
