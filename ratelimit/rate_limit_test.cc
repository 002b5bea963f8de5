#include "ratelimit/rate_limit.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(RateLimitTest, DefaultIsDisabled) {
  EXPECT_TRUE(RateLimit().is_disabled());
  EXPECT_EQ(RateLimit(), RateLimit::Disabled());
}

TEST(RateLimitTest, FromOptionalU32) {
  EXPECT_EQ(RateLimit::FromOptionalU32(std::nullopt), RateLimit::Disabled());
  EXPECT_EQ(RateLimit::FromOptionalU32(0), RateLimit::Pause());
  EXPECT_EQ(RateLimit::FromOptionalU32(30), RateLimit::Fixed(30));
  EXPECT_EQ(RateLimit::FromOptionalU32(UINT32_MAX).rows_per_second(),
            UINT32_MAX);
}

TEST(RateLimitTest, ToOptionalU32RoundTrips) {
  for (std::optional<uint32_t> value :
       {std::optional<uint32_t>(), std::optional<uint32_t>(0),
        std::optional<uint32_t>(1), std::optional<uint32_t>(UINT32_MAX)}) {
    EXPECT_EQ(RateLimit::FromOptionalU32(value).ToOptionalU32(), value);
  }
}

TEST(RateLimitTest, FixedZeroIsPause) {
  EXPECT_EQ(RateLimit::Fixed(0), RateLimit::Pause());
  EXPECT_TRUE(RateLimit::Fixed(0).is_paused());
}

TEST(RateLimitTest, Accessors) {
  const RateLimit fixed = RateLimit::Fixed(7);
  EXPECT_TRUE(fixed.is_fixed());
  EXPECT_FALSE(fixed.is_paused());
  EXPECT_FALSE(fixed.is_disabled());
  EXPECT_EQ(fixed.kind(), RateLimit::Kind::kFixed);
  EXPECT_EQ(fixed.rows_per_second(), 7u);
  EXPECT_EQ(RateLimit::Pause().rows_per_second(), 0u);
  EXPECT_EQ(RateLimit::Disabled().rows_per_second(), 0u);
}

TEST(RateLimitTest, Equality) {
  EXPECT_EQ(RateLimit::Fixed(5), RateLimit::Fixed(5));
  EXPECT_NE(RateLimit::Fixed(5), RateLimit::Fixed(6));
  EXPECT_NE(RateLimit::Fixed(5), RateLimit::Pause());
  EXPECT_NE(RateLimit::Disabled(), RateLimit::Pause());
}

TEST(RateLimitTest, ToString) {
  EXPECT_EQ(RateLimit::Disabled().ToString(), "disabled");
  EXPECT_EQ(RateLimit::Pause().ToString(), "pause");
  EXPECT_EQ(RateLimit::Fixed(30).ToString(), "fixed(30 rows/s)");
  std::ostringstream os;
  os << RateLimit::Fixed(1);
  EXPECT_EQ(os.str(), "fixed(1 rows/s)");
}

TEST(RateLimitTest, ToMetricValue) {
  EXPECT_TRUE(std::isinf(RateLimit::Disabled().ToMetricValue()));
  EXPECT_GT(RateLimit::Disabled().ToMetricValue(), 0);
  EXPECT_EQ(RateLimit::Pause().ToMetricValue(), 0.0);
  EXPECT_EQ(RateLimit::Fixed(1000).ToMetricValue(), 1000.0);
  EXPECT_EQ(RateLimit::Fixed(UINT32_MAX).ToMetricValue(), 4294967295.0);
}

TEST(RateLimitTest, SnapshotChunkSize) {
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Disabled(), 256), 256u);
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Pause(), 256), 256u);
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Fixed(30), 256), 30u);
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Fixed(1000), 256), 256u);
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Fixed(1), 256), 2u);
  EXPECT_EQ(SnapshotChunkSize(RateLimit::Disabled(), 1), 2u);
  static_assert(SnapshotChunkSize(RateLimit::Fixed(2), 256) == 2);
}

}  // namespace
}  // namespace backfill
