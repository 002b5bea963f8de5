#include "ratelimit/rate_limit_split.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/rate_limit.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

uint64_t SumOfRates(const std::vector<RateLimit>& limits) {
  uint64_t sum = 0;
  for (const RateLimit& limit : limits) sum += limit.rows_per_second();
  return sum;
}

TEST(SplitJobRateLimitTest, DisabledAndPauseAreCopied) {
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Disabled(), {1, 0, 5}),
              ElementsAre(RateLimit::Disabled(), RateLimit::Disabled(),
                          RateLimit::Disabled()));
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Pause(), {1, 0}),
              ElementsAre(RateLimit::Pause(), RateLimit::Pause()));
}

TEST(SplitJobRateLimitTest, NoActors) {
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(10), {}), IsEmpty());
}

TEST(SplitJobRateLimitTest, ProportionalToRemainingVnodes) {
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(1000), {64, 192}),
              ElementsAre(RateLimit::Fixed(250), RateLimit::Fixed(750)));
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(1000), {64, 192, 0}),
              ElementsAre(RateLimit::Fixed(250), RateLimit::Fixed(750),
                          RateLimit::Fixed(1)));
}

TEST(SplitJobRateLimitTest, LargestRemainderRounding) {
  // 10 / 3 = 3.33 each; the one leftover row goes to the lowest index.
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(10), {1, 1, 1}),
              ElementsAre(RateLimit::Fixed(4), RateLimit::Fixed(3),
                          RateLimit::Fixed(3)));
  // Exact shares 1.2, 2.4, 6.4 -> floors 1, 2, 6; leftover 1 to the largest
  // fraction (0.4, tie between index 1 and 2 -> index 1).
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(10), {3, 6, 16}),
              ElementsAre(RateLimit::Fixed(1), RateLimit::Fixed(3),
                          RateLimit::Fixed(6)));
}

TEST(SplitJobRateLimitTest, NobodyIsPausedByRounding) {
  // Exact shares 0.0099..., 9.99...: the small one is raised to 1, taken
  // from the large one, and the sum stays 10.
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(10), {1, 1000}),
              ElementsAre(RateLimit::Fixed(1), RateLimit::Fixed(9)));
}

TEST(SplitJobRateLimitTest, RateBelowActiveActorsGivesEveryoneOne) {
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(2), {5, 5, 5, 0}),
              ElementsAre(RateLimit::Fixed(1), RateLimit::Fixed(1),
                          RateLimit::Fixed(1), RateLimit::Fixed(1)));
}

TEST(SplitJobRateLimitTest, AllDoneSplitsEvenly) {
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(9), {0, 0, 0}),
              ElementsAre(RateLimit::Fixed(3), RateLimit::Fixed(3),
                          RateLimit::Fixed(3)));
}

TEST(SplitJobRateLimitTest, ExtremeValuesDoNotOverflow) {
  EXPECT_THAT(
      SplitJobRateLimit(RateLimit::Fixed(UINT32_MAX), {UINT32_MAX, UINT32_MAX}),
      ElementsAre(RateLimit::Fixed(2147483648u),
                  RateLimit::Fixed(2147483647u)));
  EXPECT_THAT(SplitJobRateLimit(RateLimit::Fixed(UINT32_MAX), {UINT32_MAX}),
              ElementsAre(RateLimit::Fixed(UINT32_MAX)));
}

// Random inputs: the sum is exact when the rate covers the active actors,
// no active actor is paused, and without raised shares every share is within
// one row/s of its exact proportion.
TEST(SplitJobRateLimitTest, RandomPropertiesHold) {
  const uint32_t seed = 20240501;
  std::mt19937 rng(seed);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    SCOPED_TRACE(absl::StrCat("seed ", seed, " iteration ", iteration));
    const int num_actors = std::uniform_int_distribution<int>(1, 16)(rng);
    std::vector<uint32_t> remaining(num_actors);
    uint64_t total = 0;
    int num_active = 0;
    for (uint32_t& vnodes : remaining) {
      vnodes = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                   ? 0
                   : std::uniform_int_distribution<uint32_t>(1, 256)(rng);
      total += vnodes;
      num_active += vnodes > 0;
    }
    const uint32_t rate =
        std::uniform_int_distribution<uint32_t>(1, 100000)(rng);
    const std::vector<RateLimit> limits =
        SplitJobRateLimit(RateLimit::Fixed(rate), remaining);
    ASSERT_EQ(limits.size(), remaining.size());
    bool raised = false;
    for (int i = 0; i < num_actors; ++i) {
      ASSERT_TRUE(limits[i].is_fixed()) << limits[i];
      if (remaining[i] == 0 && total > 0) {
        EXPECT_EQ(limits[i], RateLimit::Fixed(1));
      }
      if (total > 0 && remaining[i] > 0 &&
          static_cast<uint64_t>(rate) * remaining[i] < total) {
        raised = true;
      }
    }
    if (total == 0) continue;
    const uint64_t active_sum =
        SumOfRates(limits) - static_cast<uint64_t>(num_actors - num_active);
    if (static_cast<uint64_t>(rate) >= static_cast<uint64_t>(num_active)) {
      EXPECT_EQ(active_sum, rate);
    } else {
      EXPECT_EQ(active_sum, static_cast<uint64_t>(num_active));
    }
    if (raised) continue;
    for (int i = 0; i < num_actors; ++i) {
      if (remaining[i] == 0) continue;
      const double exact =
          static_cast<double>(rate) * remaining[i] / static_cast<double>(total);
      EXPECT_LT(std::abs(limits[i].rows_per_second() - exact), 1.0)
          << "actor " << i;
    }
  }
}

}  // namespace
}  // namespace backfill
