#include "third_party/absl_extras/saturating.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace backfill {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(SaturatingTest, AddStopsAtTheLimit) {
  EXPECT_EQ(SaturatingAdd(2, 3), 5u);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 2), kMax);
  EXPECT_EQ(SaturatingAdd(kMax, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(0, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(kInt64Max - 5, 5, kInt64Max), kInt64Max);
  EXPECT_EQ(SaturatingAdd(kInt64Max - 5, 4, kInt64Max), kInt64Max - 1);
  EXPECT_EQ(SaturatingAdd(0, kMax, kInt64Max), kInt64Max);
  EXPECT_EQ(SaturatingAdd(kMax, 0, kInt64Max), kInt64Max);  // a over limit
  static_assert(SaturatingAdd(1, 1, 1) == 1);
}

TEST(SaturatingTest, MultiplyStopsAtTheMaximum) {
  EXPECT_EQ(SaturatingMultiply(0, kMax), 0u);
  EXPECT_EQ(SaturatingMultiply(kMax, 0), 0u);
  EXPECT_EQ(SaturatingMultiply(1u << 31, 1u << 31), uint64_t{1} << 62);
  EXPECT_EQ(SaturatingMultiply(uint64_t{1} << 32, uint64_t{1} << 32), kMax);
  EXPECT_EQ(SaturatingMultiply(kMax / 3, 3), kMax / 3 * 3);
  EXPECT_EQ(SaturatingMultiply(kMax / 3 + 1, 3), kMax);
}

}  // namespace
}  // namespace backfill
