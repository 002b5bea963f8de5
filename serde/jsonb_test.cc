#include "serde/jsonb.h"

#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

std::string Canonical(absl::string_view text) {
  absl::StatusOr<Jsonb> value = ParseJsonb(text);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  return value.ok() ? value->ToString() : "";
}

TEST(JsonbTest, CanonicalTextIsPostgresJsonbOutput) {
  EXPECT_EQ(Canonical("null"), "null");
  EXPECT_EQ(Canonical(" true "), "true");
  EXPECT_EQ(Canonical("[1,2,[]]"), "[1, 2, []]");
  EXPECT_EQ(Canonical(R"({"b":1,"a":2})"), R"({"a": 2, "b": 1})");
  // Shorter keys first, then bytewise: PostgreSQL's jsonb order.
  EXPECT_EQ(Canonical(R"({"aa":1,"b":2,"a":3})"),
            R"({"a": 3, "b": 2, "aa": 1})");
  // Duplicate keys: the last value wins.
  EXPECT_EQ(Canonical(R"({"a":1,"a":2})"), R"({"a": 2})");
  EXPECT_EQ(Canonical(R"({"a":{"y":1,"x":2}})"), R"({"a": {"x": 2, "y": 1}})");
  EXPECT_EQ(Canonical("{}"), "{}");
}

TEST(JsonbTest, NumbersKeepPostgresNumericForm) {
  EXPECT_EQ(Canonical("1.50"), "1.50");
  EXPECT_EQ(Canonical("1e2"), "100");
  EXPECT_EQ(Canonical("1.50e1"), "15.0");
  EXPECT_EQ(Canonical("1.5E-3"), "0.0015");
  EXPECT_EQ(Canonical("-0"), "0");
  EXPECT_EQ(Canonical("-0.0"), "0.0");
  EXPECT_EQ(Canonical("-12"), "-12");
  EXPECT_EQ(Canonical("123456789012345678901234567890"),
            "123456789012345678901234567890");
  EXPECT_EQ(Canonical("0e-2"), "0.00");
}

TEST(JsonbTest, StringsEscapeAsPostgres) {
  EXPECT_EQ(Canonical(R"("a\"b\\c\/d")"), R"("a\"b\\c/d")");
  EXPECT_EQ(Canonical(R"("\n\t\r\b\f\u0001")"), R"("\n\t\r\b\f\u0001")");
  EXPECT_EQ(Canonical(R"("\u00e9\ud83d\ude00")"), "\"\xC3\xA9\xF0\x9F\x98\x80\"");
  EXPECT_EQ(Canonical("\"\xC3\xA9\""), "\"\xC3\xA9\"");
}

TEST(JsonbTest, RejectsBadInputWithOffset) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"", "offset 0: expected a value"},
      {"[1,]", "offset 3: expected a value"},
      {"[1 2]", "offset 3: expected ',' or ']'"},
      {"{\"a\" 1}", "offset 5: expected ':'"},
      {"{1: 2}", "offset 1: expected a string key"},
      {"01", "offset 1: expected the end of the input"},
      {"1.", "offset 2: expected a digit after '.'"},
      {"1e", "offset 2: expected an exponent digit"},
      {"-", "offset 1: expected a digit"},
      {"tru", "offset 0: expected 'true'"},
      {"\"abc", "offset 4: unterminated string"},
      {"\"a\nb\"", "offset 2: control character"},
      {R"("\u0000")", "offset 1: \\u0000 is not supported"},
      {R"("\ud800")", "offset 7: expected a low surrogate"},
      {R"("\udc00")", "offset 1: unpaired low surrogate"},
      {R"("\x")", "offset 1: invalid escape"},
      {"\"\xFF\"", "offset 1: invalid UTF-8"},
      {"1 1", "offset 2: expected the end of the input"},
      {"1e1001", "offset 2: number exponent out of range"},
      {"0." + std::string(Jsonb::kMaxNumberScale + 1, '0'),
       "too many digits after the point"},
      {std::string(Jsonb::kMaxDepth + 1, '['), "nested deeper than"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ParseJsonb(c.text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(c.message)))
        << c.text;
  }
  EXPECT_TRUE(
      ParseJsonb(std::string(Jsonb::kMaxDepth, '[') +
                 std::string(Jsonb::kMaxDepth, ']'))
          .ok());
}

TEST(JsonbTest, FactoriesMatchParsing) {
  absl::StatusOr<Jsonb> number = Jsonb::Number("2.50");
  ASSERT_TRUE(number.ok());
  const Jsonb built = Jsonb::Object({{"b", Jsonb::Array({Jsonb::Int(1),
                                                         *number})},
                                     {"a", Jsonb()},
                                     {"c", Jsonb::String("x")},
                                     {"a", Jsonb::Bool(true)}});
  absl::StatusOr<Jsonb> parsed =
      ParseJsonb(R"({"a": true, "b": [1, 2.50], "c": "x"})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(built, *parsed);
  EXPECT_EQ(built.ToString(), R"({"a": true, "b": [1, 2.50], "c": "x"})");
  EXPECT_NE(*ParseJsonb("1.5"), *ParseJsonb("1.50"));
  EXPECT_THAT(Jsonb::Number("1.5x"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_LT(CompareJsonb(*ParseJsonb("[1]"), *ParseJsonb("[2]")), 0);
  EXPECT_EQ(CompareJsonb(built, *parsed), 0);
}

// CompareJsonb is the canonical-text order: zero exactly when ==, otherwise
// the sign of the text comparison.
TEST(JsonbTest, CompareMatchesCanonicalTextOrder) {
  const char* const kTexts[] = {"null", "true",   "false", "0",
                                "-1",   "1.50",   "1.5",   "\"a\"",
                                "[]",   "[1, 2]", "{}",    R"({"a": [null]})"};
  for (const char* x : kTexts) {
    for (const char* y : kTexts) {
      const Jsonb a = *ParseJsonb(x);
      const Jsonb b = *ParseJsonb(y);
      const int text = a.ToString().compare(b.ToString());
      const int expected = text < 0 ? -1 : (text > 0 ? 1 : 0);
      EXPECT_EQ(CompareJsonb(a, b), expected) << x << " vs " << y;
      EXPECT_EQ(CompareJsonb(a, b) == 0, a == b) << x << " vs " << y;
    }
  }
}

// A random JSON text with random whitespace, number spellings and duplicate
// keys.
std::string RandomJsonText(std::mt19937_64& rng, int depth) {
  auto ws = [&] {
    static constexpr const char* kSpaces[] = {"", "", " ", "\n\t ", "\r"};
    return std::string(kSpaces[rng() % 5]);
  };
  switch (rng() % (depth > 0 ? 8 : 6)) {
    case 0:
      return "null";
    case 1:
      return rng() % 2 ? "true" : "false";
    case 2: {
      static constexpr const char* kNumbers[] = {
          "0", "-0", "1", "-17", "3.25", "1e3", "2.5E-2", "-0.000",
          "9223372036854775808", "1.000e+2", "7e-5"};
      return kNumbers[rng() % 11];
    }
    case 3:
    case 4: {
      static constexpr const char* kStrings[] = {
          "\"\"", "\"a\"", "\"\\\"q\\\\\"", "\"\\u00e9\"", "\"tab\\tnl\\n\"",
          "\"\\ud83d\\ude00\"", "\"\xE2\x82\xAC\"", "\"\\u001f\""};
      return kStrings[rng() % 8];
    }
    case 5:
      return absl::StrCat(rng() % 1000);
    case 6: {
      std::string out = "[" + ws();
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out += "," + ws();
        out += RandomJsonText(rng, depth - 1) + ws();
      }
      return out + "]";
    }
    default: {
      static constexpr const char* kKeys[] = {"a", "b", "aa", "", "ab", "\\u0041"};
      std::string out = "{" + ws();
      const int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out += "," + ws();
        out += absl::StrCat("\"", kKeys[rng() % 6], "\"", ws(), ":", ws(),
                            RandomJsonText(rng, depth - 1), ws());
      }
      return out + "}";
    }
  }
}

TEST(JsonbTest, RandomTextRoundTripsToAFixedPoint) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const std::string text = RandomJsonText(rng, 4);
    absl::StatusOr<Jsonb> value = ParseJsonb(text);
    ASSERT_TRUE(value.ok()) << text << ": " << value.status();
    const std::string canonical = value->ToString();
    absl::StatusOr<Jsonb> again = ParseJsonb(canonical);
    ASSERT_TRUE(again.ok()) << canonical;
    EXPECT_EQ(*again, *value) << text;
    EXPECT_EQ(again->ToString(), canonical) << text;
  }
}

}  // namespace
}  // namespace backfill
