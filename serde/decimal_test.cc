#include "serde/decimal.h"

#include <string>

#include "absl/random/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

Decimal D(absl::string_view text) { return *Decimal::FromString(text); }

TEST(DecimalTest, ParsesAndPrintsShortestForm) {
  EXPECT_EQ(D("1.50").ToString(), "1.5");
  EXPECT_EQ(D("-0.0010").ToString(), "-0.001");
  EXPECT_EQ(D("1200").ToString(), "1200");
  EXPECT_EQ(D("0.000").ToString(), "0");
  EXPECT_EQ(D("-0").ToString(), "0");
  EXPECT_EQ(D("+12.345").ToString(), "12.345");
  EXPECT_EQ(D("NaN").ToString(), "NaN");
  EXPECT_EQ(D("infinity").ToString(), "Infinity");
  EXPECT_EQ(D("-Inf").ToString(), "-Infinity");
  EXPECT_EQ(D("12345678901234567890123456789012345678").ToString(),
            "12345678901234567890123456789012345678");
  EXPECT_EQ(D("0.1234567890123456789012345678").ToString(),
            "0.1234567890123456789012345678");
}

TEST(DecimalTest, RejectsBadText) {
  for (absl::string_view bad : {"", "-", ".", "1..2", "1a", "--1", "-NaN",
                                "123456789012345678901234567890123456789"}) {
    EXPECT_THAT(Decimal::FromString(bad),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

// Significant digits run from the first non-zero digit to the last: leading
// zeros (before or after the point) are free, held zeros between non-zero
// digits count.
TEST(DecimalTest, CountsSignificantDigitsFromTheFirstNonZero) {
  const std::string inner_zeros_38 = "1" + std::string(36, '0') + "1";
  EXPECT_EQ(D("000" + inner_zeros_38).ToString(), inner_zeros_38);
  EXPECT_EQ(D("0.000" + inner_zeros_38).ToString(), "0.000" + inner_zeros_38);
  EXPECT_EQ(D(inner_zeros_38 + "000").ToString(), inner_zeros_38 + "000");
  EXPECT_THAT(Decimal::FromString("1" + std::string(37, '0') + "1"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than 38 significant digits")));
  EXPECT_THAT(Decimal::FromString("0.0" + inner_zeros_38 + "2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than 38 significant digits")));
}

TEST(DecimalTest, EqualValuesCompareEqual) {
  EXPECT_EQ(D("1.5"), D("1.50"));
  EXPECT_EQ(D("0"), D("-0.00"));
  EXPECT_EQ(D("NaN"), Decimal::NaN());
  EXPECT_EQ(Decimal::FromParts(false, 1500, 3), D("1.5"));
  EXPECT_EQ(Decimal::FromInt64(-7), D("-7.000"));
  EXPECT_EQ(Decimal::FromInt64(INT64_MIN).ToString(), "-9223372036854775808");
}

TEST(DecimalTest, TotalOrder) {
  const std::vector<Decimal> ascending = {
      Decimal::NegativeInfinity(),
      D("-100"),
      D("-1.5"),
      D("-0.001"),
      D("0"),
      D("0.0000001"),
      D("0.5"),
      D("1"),
      D("1.0000000000000000000000000001"),
      D("99"),
      D("100"),
      D("12345678901234567890123456789012345678"),
      Decimal::PositiveInfinity(),
      Decimal::NaN()};
  for (size_t i = 0; i < ascending.size(); ++i) {
    for (size_t j = 0; j < ascending.size(); ++j) {
      const int expected = i < j ? -1 : (i > j ? 1 : 0);
      EXPECT_EQ(ascending[i].Compare(ascending[j]), expected)
          << ascending[i] << " vs " << ascending[j];
    }
  }
}

TEST(DecimalTest, OrderMatchesDoubleForSmallValues) {
  absl::BitGen gen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t a = absl::Uniform<int64_t>(gen, -100000, 100000);
    const int64_t b = absl::Uniform<int64_t>(gen, -100000, 100000);
    const int scale_a = absl::Uniform(gen, 0, 6),
              scale_b = absl::Uniform(gen, 0, 6);
    const Decimal da = Decimal::FromParts(a < 0, a < 0 ? -a : a, scale_a);
    const Decimal db = Decimal::FromParts(b < 0, b < 0 ? -b : b, scale_b);
    const double fa = da.ToDouble(), fb = db.ToDouble();
    const int expected = fa < fb ? -1 : (fa > fb ? 1 : 0);
    EXPECT_EQ(da.Compare(db), expected) << da << " vs " << db;
    EXPECT_EQ(*Decimal::FromString(da.ToString()), da);
  }
}

TEST(DecimalTest, PowerOfTenAndDigitCountAtEveryBoundary) {
  absl::uint128 power = 1;
  for (int k = 0; k <= Decimal::kMaxDigits; ++k) {
    EXPECT_TRUE(Decimal::PowerOfTen(k) == power) << k;
    EXPECT_EQ(Decimal::DigitCount(power), k + 1) << k;
    if (k > 0) {
      EXPECT_EQ(Decimal::DigitCount(power - 1), k) << k;
    }
    power *= 10;
  }
  EXPECT_EQ(Decimal::DigitCount(0), 1);
  EXPECT_EQ(Decimal::DigitCount(absl::MakeUint128(1, 0)), 20);  // 2^64
}

TEST(DecimalTest, FromPartsNormalisesWideMantissas) {
  // 12 * 10^30 at scale 40 is 1.2 * 10^-9, whatever the width.
  const Decimal wide =
      Decimal::FromParts(false, 12 * Decimal::PowerOfTen(30), 40);
  EXPECT_TRUE(wide.mantissa() == 12);
  EXPECT_EQ(wide.scale(), 10);
  EXPECT_EQ(wide, D("0.0000000012"));
  // Stripping stops at kMinScale, leaving the zeros in the mantissa.
  const Decimal huge = Decimal::FromParts(false, 1000, Decimal::kMinScale);
  EXPECT_TRUE(huge.mantissa() == 1000);
  EXPECT_EQ(huge.scale(), Decimal::kMinScale);
  EXPECT_EQ(Decimal::FromParts(true, 0, 5), Decimal());
  EXPECT_FALSE(Decimal::FromParts(true, 0, 5).negative());
}

TEST(DecimalTest, FromStringReadsToStringOfLargeValuesBack) {
  // Negative scales print as long integers; their trailing zeros are not
  // significant digits.
  for (const Decimal& d :
       {Decimal::FromParts(false, Decimal::PowerOfTen(37), Decimal::kMinScale),
        Decimal::FromParts(true, Decimal::PowerOfTen(38) - 1,
                           Decimal::kMinScale),
        Decimal::FromParts(false, 12, -30)}) {
    absl::StatusOr<Decimal> back = Decimal::FromString(d.ToString());
    ASSERT_TRUE(back.ok()) << d.ToString() << ": " << back.status();
    EXPECT_EQ(*back, d) << d.ToString();
    EXPECT_EQ(back->ToString(), d.ToString());
  }
  EXPECT_FALSE(Decimal::FromString("1" + std::string(76, '0')).ok());
  EXPECT_TRUE(Decimal::FromString("1" + std::string(75, '0')).ok());
}

}  // namespace
}  // namespace backfill
