#include "serde/text_format.h"

#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

const ColumnType kInt32 = DataType::kInt32;
const ColumnType kVarchar = DataType::kVarchar;

Datum Str(const char* s) { return std::string(s); }

ColumnType PairType() {
  return ColumnType::Struct({{"a", DataType::kInt32, 1},
                             {"b", DataType::kVarchar, 2}});
}

MapValue Map(std::vector<MapEntry> entries) {
  absl::StatusOr<MapValue> map = MakeMapValue(std::move(entries));
  EXPECT_TRUE(map.ok()) << map.status();
  return map.ok() ? *map : MapValue{};
}

// Formats, checks the golden text, and reads it back.
void ExpectText(const Datum& datum, const ColumnType& type,
                absl::string_view golden) {
  EXPECT_EQ(FormatDatumText(datum, type), golden) << type.DebugString();
  std::string appended = "kept|";
  AppendDatumText(datum, type, &appended);
  EXPECT_EQ(appended, absl::StrCat("kept|", golden)) << type.DebugString();
  absl::StatusOr<Datum> back = ParseDatumText(golden, type);
  ASSERT_TRUE(back.ok()) << golden << ": " << back.status();
  EXPECT_TRUE(DatumsEqual(*back, datum))
      << golden << " read back as " << DatumDebugString(*back);
}

TEST(TextFormatTest, Scalars) {
  ExpectText(true, DataType::kBoolean, "t");
  ExpectText(int16_t{-32768}, DataType::kInt16, "-32768");
  ExpectText(std::numeric_limits<int64_t>::min(), DataType::kInt64,
             "-9223372036854775808");
  ExpectText(-0.0, DataType::kFloat64, "-0");
  ExpectText(1e20, DataType::kFloat64, "1e+20");
  ExpectText(0.1, DataType::kFloat64, "0.1");
  ExpectText(1.0f / 3, DataType::kFloat32, "0.33333334");
  ExpectText(std::numeric_limits<double>::infinity(), DataType::kFloat64,
             "Infinity");
  ExpectText(std::string("\x00\xff", 2), DataType::kBytea, "\\x00ff");
  ExpectText(Date{-719163}, DataType::kDate, "0001-12-31 BC");
  ExpectText(Date{19000}, DataType::kDate, "2022-01-08");
  ExpectText(TimeOfDay{3'723'500'000}, DataType::kTime, "01:02:03.5");
  ExpectText(Timestamp{1'700'000'000'000'001}, DataType::kTimestamp,
             "2023-11-14 22:13:20.000001");
  ExpectText(Timestamp{std::numeric_limits<int64_t>::min()},
             DataType::kTimestamp, "290309-12-21 19:59:05.224192 BC");
  ExpectText(Timestamptz{0}, DataType::kTimestamptz, "1970-01-01 00:00:00+00");
  ExpectText(Interval{14, -3, 1'000'000}, DataType::kInterval,
             "1 year 2 mons -3 days +00:00:01");
  ExpectText(Serial{42}, DataType::kSerial, "42");
  ExpectText(Int256::FromInt64(-5), DataType::kInt256, "-5");
  ExpectText(*ParseJsonb(R"({"b":[1, 2.50],"a":null})"), DataType::kJsonb,
             R"({"a": null, "b": [1, 2.50]})");
  EXPECT_TRUE(std::isnan(std::get<double>(
      *ParseDatumText("NaN", DataType::kFloat64))));
  EXPECT_EQ(std::get<bool>(*ParseDatumText("false", DataType::kBoolean)),
            false);
}

TEST(TextFormatTest, ListsQuoteAsPostgresArrayOut) {
  const ColumnType ints = ColumnType::List(kInt32);
  ExpectText(ListValue{{int32_t{1}, int32_t{2}, Datum()}}, ints, "{1,2,NULL}");
  ExpectText(ListValue{}, ints, "{}");
  ExpectText(ListValue{{Str("a b"), Str(""), Str("NULL"), Str("nUlL"),
                        Str("x\"y"), Str("back\\slash"), Str("{}"),
                        Str("c,d"), Str("plain"), Str("(x)")}},
             ColumnType::List(kVarchar),
             R"({"a b","","NULL","nUlL","x\"y","back\\slash","{}","c,d",)"
             R"(plain,(x)})");
  // Nested lists are never quoted.
  ExpectText(ListValue{{ListValue{{int32_t{1}, int32_t{2}}}, ListValue{},
                        Datum(), ListValue{{Datum()}}}},
             ColumnType::List(ints), "{{1,2},{},NULL,{NULL}}");
  // Structs are quoted when their text needs it.
  ExpectText(ListValue{{StructValue{{int32_t{1}, Str("a")}},
                        StructValue{{int32_t{2}, Datum()}}}},
             ColumnType::List(PairType()), R"x({"(1,a)","(2,)"})x");
  ExpectText(ListValue{{*ParseJsonb(R"({"a":1})")}},
             ColumnType::List(DataType::kJsonb), R"({"{\"a\": 1}"})");
}

TEST(TextFormatTest, StructsQuoteAsPostgresRecordOut) {
  const ColumnType triple = ColumnType::Struct({{"a", DataType::kInt32, 1},
                                                {"b", DataType::kVarchar, 2},
                                                {"c", DataType::kVarchar, 3}});
  ExpectText(StructValue{{int32_t{1}, Str("a b"), Datum()}}, triple,
             R"((1,"a b",))");
  ExpectText(StructValue{{Datum(), Str(""), Str("null")}}, triple,
             R"((,"",null))");
  ExpectText(StructValue{{int32_t{0}, Str("q\"b\\s"), Str("(x)")}}, triple,
             R"x((0,"q""b\\s","(x)"))x");
  const ColumnType nested = ColumnType::Struct(
      {{"p", PairType(), 1}, {"l", ColumnType::List(kInt32), 2}});
  ExpectText(StructValue{{StructValue{{int32_t{2}, Str("x")}},
                          ListValue{{int32_t{1}, int32_t{2}}}}},
             nested, R"x(("(2,x)","{1,2}"))x");
  ExpectText(StructValue{{Datum(), ListValue{{int32_t{1}}}}}, nested,
             "(,{1})");
  ExpectText(StructValue{{Datum()}},
             ColumnType::Struct({{"a", DataType::kInt32, 1}}), "()");
  ExpectText(StructValue{}, ColumnType::Struct({}), "()");
}

TEST(TextFormatTest, MapsAsRisingWaveWithQuotingWhereAmbiguous) {
  const ColumnType map = ColumnType::Map(kVarchar, kInt32);
  ExpectText(Map({{Str("b"), int32_t{2}}, {Str("a"), int32_t{1}},
                  {Str("c"), Datum()}}),
             map, "{a:1,b:2,c:NULL}");
  ExpectText(MapValue{}, map, "{}");
  ExpectText(Map({{Str("a:b"), int32_t{1}}, {Str(""), int32_t{2}},
                  {Str("NULL"), int32_t{3}}}),
             map, R"({"":2,"NULL":3,"a:b":1})");
  // Nested maps and lists unquoted, as RisingWave prints them.
  const ColumnType nested =
      ColumnType::Map(kVarchar, ColumnType::Map(kVarchar, kVarchar));
  ExpectText(Map({{Str("a"), Map({{Str("a1"), Str("a2")}})},
                  {Str("b"), Map({{Str("b1"), Str("}")}})}}),
             nested, R"({a:{a1:a2},b:{b1:"}"}})");
  ExpectText(Map({{int64_t{1}, ListValue{{int32_t{1}, Datum()}}}}),
             ColumnType::Map(DataType::kInt64, ColumnType::List(kInt32)),
             "{1:{1,NULL}}");
  ExpectText(Map({{int16_t{-1}, StructValue{{int32_t{1}, Datum()}}},
                  {int16_t{2}, StructValue{{Datum(), Str("{")}}}}),
             ColumnType::Map(DataType::kInt16, PairType()),
             R"x({-1:"(1,)",2:"(,{)"})x");
  // Maps inside lists are quoted (RisingWave quotes every non-list element).
  ExpectText(ListValue{{Map({{Str("a"), int32_t{1}}, {Str("b"), int32_t{2}}})}},
             ColumnType::List(map), R"({"{a:1,b:2}"})");
}

TEST(TextFormatTest, InputIsLenientWhereRisingWaveIs) {
  const ColumnType map = ColumnType::Map(kVarchar, kInt32);
  absl::StatusOr<Datum> parsed = ParseDatumText(" { b : 2 , a:1 } ", map);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(FormatDatumText(*parsed, map), "{a:1,b:2}");
  parsed = ParseDatumText(" { 1 , \"2\" ,null } ", ColumnType::List(kInt32));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(FormatDatumText(*parsed, ColumnType::List(kInt32)),
            "{1,2,NULL}");
  parsed = ParseDatumText("\\xABcd", DataType::kBytea);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::get<std::string>(*parsed), "\xab\xcd");
}

// A zone in TIMESTAMP text is checked but ignored (PostgreSQL's timestamp
// without time zone); TIMESTAMPTZ applies it.
TEST(TextFormatTest, TimestampIgnoresZoneTimestamptzAppliesIt) {
  for (const char* text : {"2023-11-14 22:13:20+02", "2023-11-14T22:13:20Z",
                           "2023-11-14 22:13:20 UTC",
                           "2023-11-14 22:13:20-0530", "2023-11-14 22:13:20"}) {
    absl::StatusOr<Datum> parsed = ParseDatumText(text, DataType::kTimestamp);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(std::get<Timestamp>(*parsed).micros, 1'700'000'000'000'000)
        << text;
  }
  absl::StatusOr<Datum> parsed =
      ParseDatumText("2023-11-15 00:13:20+02", DataType::kTimestamptz);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(std::get<Timestamptz>(*parsed).micros, 1'700'000'000'000'000);
  EXPECT_THAT(
      ParseDatumText("2023-11-14 22:13:20+16", DataType::kTimestamp),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("invalid TIMESTAMP \"2023-11-14 22:13:20+16\": zone "
                         "offset out of range")));
}

TEST(TextFormatTest, RejectsBadTextWithOffset) {
  struct Case {
    std::string text;
    ColumnType type;
    std::string message;
  };
  const ColumnType ints = ColumnType::List(kInt32);
  const ColumnType map = ColumnType::Map(kVarchar, kInt32);
  const Case cases[] = {
      {"{1,2", ints, "offset 4: expected ',' or '}'"},
      {"{1,,2}", ints, "offset 3: expected an element"},
      {"{1,x}", ints, "offset 3: not an INT32"},
      {"{1} x", ints, "offset 4: trailing text"},
      {"[1]", ints, "offset 0: expected '{'"},
      {"{\"1}", ints, "offset 1: unterminated quoted element"},
      {"{{1", ColumnType::List(ints), "offset 1: unbalanced nested value"},
      {"(1,a,b)", PairType(), "offset 4: expected ')'"},
      {"(1)", PairType(), "offset 2: expected ','"},
      {"(x,a)", PairType(), "offset 1: not an INT32"},
      {"(1,\"a)", PairType(), "offset 3: unterminated quoted field"},
      {"{a:1,a:2}", map, "map keys must be unique"},
      {"{NULL:1}", map, "offset 1: map keys must not be NULL"},
      {"{a 1}", map, "offset 3: expected ':'"},
      {"{a:1", map, "offset 4: expected ',' or '}'"},
      {"70000", DataType::kInt16, "not an INT16"},
      {"1.5", DataType::kInt64, "not an INT64"},
      {" 1", DataType::kInt64, "not an INT64"},
      {"1e999", DataType::kFloat64, "not a FLOAT64"},
      {"yes", DataType::kBoolean, "expected t or f"},
      {"\\x0", DataType::kBytea, "even number"},
      {"\\x0g", DataType::kBytea, "offset 3: expected a hex digit"},
      {"2023-02-29", DataType::kDate, "day out of range"},
      {"0000-01-01", DataType::kDate, "year or month out of range"},
      {"2023-01-01x", DataType::kDate, "offset 10: expected the end"},
      {"24:00:00", DataType::kTime, "time out of range"},
      {"12:00", DataType::kTime, "expected HH:MM:SS"},
      {"{\"a\":}", DataType::kJsonb, "invalid JSONB at offset 5"},
      {"{\"{\\\"a\\\": }\"}", ColumnType::List(DataType::kJsonb),
       "offset 2: invalid JSONB"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ParseDatumText(c.text, c.type),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(c.message)))
        << c.text << " as " << c.type.DebugString();
  }
}

// Random values of random types (JSONB and MAP included, nested NULLs, empty
// lists and maps): value -> text -> value is the same value, and the text
// is a fixed point.
TEST(TextFormatTest, RandomValuesRoundTrip) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3000; ++i) {
    const ColumnType type = RandomValueColumnType(rng, 3);
    const Datum datum = RandomColumnValue(type, rng);
    const std::string text = FormatDatumText(datum, type);
    absl::StatusOr<Datum> back = ParseDatumText(text, type);
    ASSERT_TRUE(back.ok()) << type.DebugString() << " " << text << ": "
                           << back.status();
    ASSERT_TRUE(DatumMatchesColumnType(*back, type)) << text;
    EXPECT_TRUE(DatumsEqual(*back, datum))
        << type.DebugString() << " " << text << " read back as "
        << DatumDebugString(*back);
    EXPECT_EQ(FormatDatumText(*back, type), text) << type.DebugString();
  }
}

}  // namespace
}  // namespace backfill
