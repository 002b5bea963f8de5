#include "serde/timestamptz.h"

#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

TEST(TimestamptzTest, FormatsAsPostgresInUtc) {
  EXPECT_EQ(FormatTimestamptz({0}), "1970-01-01 00:00:00+00");
  EXPECT_EQ(FormatTimestamptz({1'700'000'000'000'000}),
            "2023-11-14 22:13:20+00");
  EXPECT_EQ(FormatTimestamptz({-1}), "1969-12-31 23:59:59.999999+00");
  EXPECT_EQ(FormatTimestamptz({1'500'000}), "1970-01-01 00:00:01.5+00");
  // 0001-01-01 is day -719162; the day before is 0001-12-31 BC.
  EXPECT_EQ(FormatTimestamptz({-719162LL * 86'400'000'000}),
            "0001-01-01 00:00:00+00");
  EXPECT_EQ(FormatTimestamptz({-719163LL * 86'400'000'000}),
            "0001-12-31 00:00:00+00 BC");
}

TEST(TimestamptzTest, ParsesZonesAndForms) {
  const int64_t base = 1'700'000'000'000'000;
  for (const char* text :
       {"2023-11-14 22:13:20+00", "2023-11-14T22:13:20Z",
        "2023-11-14 22:13:20 UTC", "2023-11-15 00:13:20+02",
        "2023-11-15 00:13:20+02:00", "2023-11-14 20:43:20-0130",
        "2023-11-14 22:13:20.000000+00", "2023-11-14 22:13:20"}) {
    absl::StatusOr<Timestamptz> parsed = ParseTimestamptz(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(parsed->micros, base) << text;
  }
  EXPECT_EQ(ParseTimestamptz("2023-11-14 22:13")->micros, base - 20'000'000);
  EXPECT_EQ(ParseTimestamptz("1970-01-01 00:00:00.25+00")->micros, 250'000);
}

TEST(TimestamptzTest, BadTextIsInvalidArgument) {
  for (const char* text :
       {"", "2023-11-14", "2023-13-01 00:00:00", "2023-02-29 00:00:00",
        "2023-01-01 24:00:00", "2023-01-01 00:60:00", "2023-01-01 00:00:60",
        "2023-01-01 00:00:00.1234567", "2023-01-01 00:00:00+16",
        "2023-01-01 00:00:00 +00 x", "0000-01-01 00:00:00",
        "300000-01-01 00:00:00", "2023-1-01 00:00:00"}) {
    EXPECT_THAT(ParseTimestamptz(text),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << text;
  }
}

TEST(TimestamptzTest, RandomInstantsRoundTripThroughText) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  using Limits = std::numeric_limits<int64_t>;
  for (int i = 0; i < 20000; ++i) {
    int64_t micros = static_cast<int64_t>(rng());
    if (i % 4 == 1) micros %= 4'000'000'000'000'000;
    if (i < 4) {
      const int64_t extremes[] = {Limits::min(), Limits::max(), 0, -1};
      micros = extremes[i];
    }
    const std::string text = FormatTimestamptz({micros});
    absl::StatusOr<Timestamptz> back = ParseTimestamptz(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    ASSERT_EQ(back->micros, micros) << text;
  }
}

}  // namespace
}  // namespace backfill
