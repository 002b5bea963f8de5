#include "serde/int256.h"

#include <random>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

constexpr char kMax[] =
    "57896044618658097711785492504343953926634992332820282019728792003956564819"
    "967";
constexpr char kMin[] =
    "-5789604461865809771178549250434395392663499233282028201972879200395656481"
    "9968";

TEST(Int256Test, TextOfKnownValues) {
  EXPECT_EQ(Int256().ToString(), "0");
  EXPECT_EQ(Int256::FromInt64(-1).ToString(), "-1");
  EXPECT_EQ(Int256::FromInt64(INT64_MIN).ToString(), "-9223372036854775808");
  EXPECT_EQ(Int256::Max().ToString(), kMax);
  EXPECT_EQ(Int256::Min().ToString(), kMin);
  EXPECT_EQ(Int256::FromWords({0, 1, 0, 0}).ToString(), "18446744073709551616");
  EXPECT_EQ(*Int256::FromString(kMax), Int256::Max());
  EXPECT_EQ(*Int256::FromString(kMin), Int256::Min());
  EXPECT_EQ(*Int256::FromString("+007"), Int256::FromInt64(7));
  EXPECT_EQ(*Int256::FromString("-0"), Int256());
}

TEST(Int256Test, BadTextIsInvalidArgument) {
  for (const char* text : {"", "-", "+", "1.5", " 1", "1 ", "0x10", "1e3",
                           "578960446186580977117854925043439539266349923328202"
                           "82019728792003956564819968",
                           "-57896044618658097711785492504343953926634992332820"
                           "282019728792003956564819969",
                           "999999999999999999999999999999999999999999999999999"
                           "999999999999999999999999999"}) {
    EXPECT_THAT(Int256::FromString(text),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << text;
  }
}

TEST(Int256Test, OrderAndBytes) {
  EXPECT_LT(Int256::Min(), Int256::FromInt64(-1));
  EXPECT_LT(Int256::FromInt64(-1), Int256());
  EXPECT_LT(Int256(), Int256::FromWords({0, 0, 0, 1}));
  EXPECT_LT(Int256::FromWords({0, 0, 0, 1}), Int256::Max());
  char bytes[32];
  Int256::FromInt64(-2).ToLittleEndian(bytes);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0xFE);
  EXPECT_EQ(static_cast<uint8_t>(bytes[31]), 0xFF);
  EXPECT_EQ(Int256::FromLittleEndian(bytes), Int256::FromInt64(-2));
}

// Values that fit an int128 compare and print as int128 does.
TEST(Int256Test, AgreesWithInt128OnRandomValues) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  auto random128 = [&] {
    const absl::int128 v = absl::MakeInt128(static_cast<int64_t>(rng()), rng());
    return rng() % 2 == 0 ? v : v >> (rng() % 127);
  };
  auto to256 = [](absl::int128 v) {
    const uint64_t fill = v < 0 ? ~uint64_t{0} : 0;
    return Int256::FromWords({absl::Int128Low64(v),
                              static_cast<uint64_t>(absl::Int128High64(v)),
                              fill, fill});
  };
  for (int i = 0; i < 5000; ++i) {
    const absl::int128 a = random128(), b = random128();
    const Int256 x = to256(a), y = to256(b);
    std::ostringstream text;
    text << a;
    ASSERT_EQ(x.ToString(), text.str());
    ASSERT_EQ(*Int256::FromString(text.str()), x);
    ASSERT_EQ(x.Compare(y), a < b ? -1 : (b < a ? 1 : 0));
  }
}

TEST(Int256Test, RandomWideValuesRoundTripThroughText) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 5000; ++i) {
    const Int256 value = Int256::FromWords({rng(), rng(), rng(), rng()});
    absl::StatusOr<Int256> back = Int256::FromString(value.ToString());
    ASSERT_TRUE(back.ok()) << value.ToString();
    ASSERT_EQ(*back, value);
  }
}

}  // namespace
}  // namespace backfill
