#include "serde/interval.h"

#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int64_t kHour = 3'600'000'000;

TEST(IntervalTest, ComparesBySpan) {
  EXPECT_EQ((Interval{1, 0, 0}), (Interval{0, 30, 0}));
  EXPECT_EQ((Interval{0, 1, 0}), (Interval{0, 0, 24 * kHour}));
  EXPECT_EQ((Interval{1, -30, 0}), Interval{});
  EXPECT_LT((Interval{0, 29, 0}), (Interval{1, 0, 0}));
  EXPECT_LT((Interval{0, 30, -1}), (Interval{1, 0, 0}));
  EXPECT_LT((Interval{-1, 0, 0}), (Interval{0, -29, 0}));
  EXPECT_FALSE(IdenticalIntervals({1, 0, 0}, {0, 30, 0}));
  EXPECT_EQ(CompareIntervals({0, 0, 1}, {0, 0, 0}), 1);
}

TEST(IntervalTest, FormatsAsPostgres) {
  const struct {
    Interval value;
    const char* text;
  } cases[] = {
      {{0, 0, 0}, "00:00:00"},
      {{1, 0, 0}, "1 mon"},
      {{0, -1, 0}, "-1 days"},
      {{14, 3, 4 * kHour + 5 * 60'000'000 + 6'500'000},
       "1 year 2 mons 3 days 04:05:06.5"},
      {{-1, 1, 0}, "-1 mons +1 day"},
      {{0, -1, kHour}, "-1 days +01:00:00"},
      {{0, 1, -kHour}, "1 day -01:00:00"},
      {{0, 0, -1}, "-00:00:00.000001"},
      {{-12, 0, 0}, "-1 years"},
      {{0, 0, 100 * kHour}, "100:00:00"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FormatInterval(c.value), c.text);
    absl::StatusOr<Interval> back = ParseInterval(c.text);
    ASSERT_TRUE(back.ok()) << c.text << ": " << back.status();
    EXPECT_TRUE(IdenticalIntervals(*back, c.value)) << c.text;
  }
}

TEST(IntervalTest, ParsesInputForms) {
  const struct {
    const char* text;
    Interval value;
  } cases[] = {
      {"1 month", {1, 0, 0}},
      {"2 weeks 1 day", {0, 15, 0}},
      {"3 hours 30 minutes", {0, 0, 3 * kHour + 30 * 60'000'000}},
      {"1.25 seconds", {0, 0, 1'250'000}},
      {"-1.5 sec", {0, 0, -1'500'000}},
      {"5 ms 7 us", {0, 0, 5007}},
      {"1 YEAR  -2 Mons", {10, 0, 0}},
      {"1:02", {0, 0, kHour + 2 * 60'000'000}},
      {"-1:02:03.25", {0, 0, -(kHour + 2 * 60'000'000 + 3'250'000)}},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Interval> parsed = ParseInterval(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_TRUE(IdenticalIntervals(*parsed, c.value))
        << c.text << " -> " << FormatInterval(*parsed);
  }
}

TEST(IntervalTest, BadTextIsInvalidArgument) {
  for (const char* text :
       {"", " ", "1", "1 fortnight", "x days", "1:2", "1:60", "1:00:61",
        "1:00:00.1234567", "1.5 days", "1:00 1:00", "2147483648 mons",
        "178956971 years", "99999999999999999999 hours", "--1 day",
        "1 day 3"}) {
    EXPECT_THAT(ParseInterval(text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("invalid INTERVAL")))
        << text;
  }
}

TEST(IntervalTest, SpanRepresentative) {
  EXPECT_TRUE(IdenticalIntervals(*IntervalFromSpan(IntervalSpan({0, 30, 0})),
                                 {1, 0, 0}));
  EXPECT_TRUE(IdenticalIntervals(*IntervalFromSpan(IntervalSpan({0, -1, 0})),
                                 {0, -1, 0}));
  EXPECT_TRUE(IdenticalIntervals(
      *IntervalFromSpan(IntervalSpan({0, 0, 25 * kHour})), {0, 1, kHour}));
  EXPECT_EQ(IntervalFromSpan(MaxIntervalSpan() + 1), std::nullopt);
  EXPECT_EQ(IntervalFromSpan(MinIntervalSpan() - 1), std::nullopt);
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  EXPECT_TRUE(IdenticalIntervals(*IntervalFromSpan(MaxIntervalSpan()),
                                 {L32::max(), L32::max(), L64::max()}));
  EXPECT_TRUE(IdenticalIntervals(*IntervalFromSpan(MinIntervalSpan()),
                                 {L32::min(), L32::min(), L64::min()}));
}

Interval RandomInterval(std::mt19937_64& rng) {
  auto pick = [&](int64_t small, int64_t full) {
    switch (rng() % 4) {
      case 0:
        return int64_t{0};
      case 1:
        return static_cast<int64_t>(rng() % (2 * small + 1)) - small;
      default:
        return full;
    }
  };
  using L32 = std::numeric_limits<int32_t>;
  const int32_t extremes32[] = {L32::min(), L32::max(), -1, 1};
  const int64_t extremes64[] = {std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max(), -1, 1};
  return Interval{
      static_cast<int32_t>(pick(40, rng() % 8 == 0
                                        ? extremes32[rng() % 4]
                                        : static_cast<int32_t>(rng()))),
      static_cast<int32_t>(pick(70, rng() % 8 == 0
                                        ? extremes32[rng() % 4]
                                        : static_cast<int32_t>(rng()))),
      pick(3 * 86'400'000'000, rng() % 8 == 0 ? extremes64[rng() % 4]
                                              : static_cast<int64_t>(rng()))};
}

TEST(IntervalTest, RandomTextRoundTripsAndSpanRepresentatives) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const Interval value = RandomInterval(rng);
    const std::string text = FormatInterval(value);
    absl::StatusOr<Interval> back = ParseInterval(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    ASSERT_TRUE(IdenticalIntervals(*back, value)) << text;
    const std::optional<Interval> representative =
        IntervalFromSpan(IntervalSpan(value));
    ASSERT_TRUE(representative.has_value()) << text;
    ASSERT_EQ(IntervalSpan(*representative), IntervalSpan(value)) << text;
    ASSERT_EQ(*representative, value) << text;
    // The representative is a fixed point.
    ASSERT_TRUE(IdenticalIntervals(
        *IntervalFromSpan(IntervalSpan(*representative)), *representative));
  }
}

}  // namespace
}  // namespace backfill
