#include "serde/positional_codec.h"

#include <limits>
#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

Schema AllTypesSchema() {
  Schema schema;
  int id = 10;
  for (DataType type : kAllScalarDataTypes) {
    schema.push_back({absl::StrCat("c", id), type, id});
    ++id;
  }
  return schema;
}

TEST(PositionalCodecTest, GoldenBytes) {
  const Schema schema = {{"id", DataType::kInt64, 1},
                         {"a", DataType::kVarchar, 2},
                         {"b", DataType::kVarchar, 3},
                         {"d", DataType::kDecimal, 4},
                         {"f", DataType::kBoolean, 5}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec, PositionalCodec::Create(schema));
  std::string bytes;
  codec->Encode({int64_t{7}, Datum(), std::string("ab"),
                 *Decimal::FromString("1.5"), true},
                &bytes);
  EXPECT_EQ(absl::BytesToHexString(bytes),
            "010e"
            "00"
            "01026162"
            "0101010f"
            "0101");
}

// TIMESTAMPTZ and SERIAL are zigzag varints, INTERVAL three of them (months,
// days, microseconds), INT256 32 bytes LE. The fields of an interval are kept
// as written ('1 mon -1 days' is not normalized).
TEST(PositionalCodecTest, GoldenAddedScalarTypes) {
  const Schema schema = {{"t", DataType::kTimestamptz, 1},
                         {"i", DataType::kInterval, 2},
                         {"s", DataType::kSerial, 3},
                         {"n", DataType::kInt256, 4}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec, PositionalCodec::Create(schema));
  std::string bytes;
  const Row row = {Timestamptz{1}, Interval{1, -1, 3}, Serial{7},
                   Int256::FromInt64(-2)};
  codec->Encode(row, &bytes);
  EXPECT_EQ(absl::BytesToHexString(bytes),
            "0102"
            "01020106"
            "010e"
            "01fe" +
                std::string(62, 'f'));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Row back, codec->Decode(bytes));
  EXPECT_TRUE(
      IdenticalIntervals(std::get<Interval>(back[1]), Interval{1, -1, 3}));
  EXPECT_TRUE(RowsEqual(back, row));
  // Truncated INT256 and an INTERVAL day count out of the int32 range.
  EXPECT_THAT(
      codec->Decode(bytes.substr(0, bytes.size() - 1)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated INT256")));
  EXPECT_THAT(codec->Decode(absl::HexStringToBytes("0102"
                                                   "0102ffffffff1f06"
                                                   "00"
                                                   "00")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("INTERVAL value -4294967296 out of range")));
}

// Integers, dates and times are zigzag LEB128 varints; string lengths LEB128.
TEST(PositionalCodecTest, GoldenVarints) {
  auto hex = [](DataType type, const Datum& datum) {
    auto codec = PositionalCodec::Create({{"c", type, 1}});
    EXPECT_TRUE(codec.ok());
    std::string bytes;
    (*codec)->Encode({datum}, &bytes);
    return absl::BytesToHexString(bytes);
  };
  EXPECT_EQ(hex(DataType::kInt64, int64_t{0}), "0100");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{-1}), "0101");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{1}), "0102");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{63}), "017e");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{-64}), "017f");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{64}), "018001");
  EXPECT_EQ(hex(DataType::kInt64, int64_t{300}), "01d804");
  EXPECT_EQ(hex(DataType::kInt64, std::numeric_limits<int64_t>::max()),
            "01feffffffffffffffff01");
  EXPECT_EQ(hex(DataType::kInt64, std::numeric_limits<int64_t>::min()),
            "01ffffffffffffffffff01");
  EXPECT_EQ(hex(DataType::kInt32, std::numeric_limits<int32_t>::max()),
            "01feffffff0f");
  EXPECT_EQ(hex(DataType::kInt32, std::numeric_limits<int32_t>::min()),
            "01ffffffff0f");
  EXPECT_EQ(hex(DataType::kInt16, std::numeric_limits<int16_t>::max()),
            "01feff03");
  EXPECT_EQ(hex(DataType::kInt16, std::numeric_limits<int16_t>::min()),
            "01ffff03");
  EXPECT_EQ(hex(DataType::kDate, Date{-1}), "0101");
  EXPECT_EQ(hex(DataType::kTime, TimeOfDay{86'399'999'999}), "01feffbadd8305");
  EXPECT_EQ(hex(DataType::kTimestamp, Timestamp{1'700'000'000'000'000}),
            "018080f28183898506");
  EXPECT_EQ(hex(DataType::kVarchar, std::string()), "0100");
  EXPECT_EQ(hex(DataType::kBytea, std::string(200, 'x')).substr(0, 8),
            "01c80178");
  // Unchanged: booleans 1 byte, floats fixed-width LE.
  EXPECT_EQ(hex(DataType::kBoolean, false), "0100");
  EXPECT_EQ(hex(DataType::kFloat32, 1.0f), "010000803f");
  EXPECT_EQ(hex(DataType::kFloat64, 1.0), "01000000000000f03f");
}

TEST(PositionalCodecTest, IntegerExtremesRoundTrip) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, PositionalCodec::Create({{"a", DataType::kInt16, 1},
                                           {"b", DataType::kInt32, 2},
                                           {"c", DataType::kInt64, 3},
                                           {"d", DataType::kDate, 4},
                                           {"e", DataType::kTime, 5},
                                           {"f", DataType::kTimestamp, 6}}));
  using L16 = std::numeric_limits<int16_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  const std::vector<Row> rows = {
      {L16::min(), L32::min(), L64::min(), Date{L32::min()},
       TimeOfDay{L64::min()}, Timestamp{L64::min()}},
      {L16::max(), L32::max(), L64::max(), Date{L32::max()},
       TimeOfDay{L64::max()}, Timestamp{L64::max()}},
      {int16_t{0}, int32_t{-1}, int64_t{1}, Date{-64}, TimeOfDay{63},
       Timestamp{64}},
      {int16_t{-8192}, int32_t{8191}, int64_t{-(int64_t{1} << 55)},
       Date{1 << 27}, TimeOfDay{(int64_t{1} << 55) - 1},
       Timestamp{int64_t{1} << 55}},
  };
  for (const Row& row : rows) {
    std::string bytes;
    codec->Encode(row, &bytes);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Row decoded, codec->Decode(bytes));
    EXPECT_TRUE(RowsEqual(decoded, row)) << RowDebugString(row);
    // A trailing NULL column after the varints: the 8-byte fast path of the
    // decoder sees more bytes than the varint.
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      EXPECT_THAT(codec->Decode(bytes.substr(0, cut)),
                  StatusIs(absl::StatusCode::kDataLoss))
          << cut;
    }
  }
}

TEST(PositionalCodecTest, GoldenDecimals) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, PositionalCodec::Create({{"d", DataType::kDecimal, 1}}));
  auto hex = [&](const Decimal& d) {
    std::string bytes;
    codec->Encode({d}, &bytes);
    return absl::BytesToHexString(bytes);
  };
  EXPECT_EQ(hex(Decimal()), "010000");
  EXPECT_EQ(hex(*Decimal::FromString("-1.5")), "0121010f");
  EXPECT_EQ(hex(*Decimal::FromString("300")), "0101fe03");
  EXPECT_EQ(hex(*Decimal::FromString("12345.67")), "01030287d612");
  EXPECT_EQ(hex(Decimal::NaN()), "0140");
  EXPECT_EQ(hex(Decimal::PositiveInfinity()), "0180");
  EXPECT_EQ(hex(Decimal::NegativeInfinity()), "01c0");
}

TEST(PositionalCodecTest, RandomRowsRoundTripBitExactly) {
  const Schema schema = AllTypesSchema();
  const std::vector<DataType> types = ColumnTypes(schema);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec, PositionalCodec::Create(schema));
  const uint64_t seed = 4242;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  Row reused;
  for (int i = 0; i < 2000; ++i) {
    const Row row = RandomRow(types, rng, 0.2);
    std::string bytes;
    codec->Encode(row, &bytes);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Row decoded, codec->Decode(bytes));
    ASSERT_TRUE(RowsEqual(decoded, row)) << RowDebugString(row);
    BACKFILL_ASSERT_OK(codec->DecodeInto(bytes, &reused));
    // Bit-exact: re-encoding gives the same bytes (keeps -0.0, NaN payloads).
    std::string again;
    codec->Encode(reused, &again);
    ASSERT_EQ(again, bytes);
    // Every truncation is DataLoss, never a crash.
    for (size_t cut = 0; cut < bytes.size(); cut += 3) {
      ASSERT_THAT(codec->Decode(bytes.substr(0, cut)),
                  StatusIs(absl::StatusCode::kDataLoss));
    }
  }
}

TEST(PositionalCodecTest, CorruptInputIsDataLossWithOffsetAndColumn) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, PositionalCodec::Create({{"id", DataType::kInt64, 1},
                                           {"s", DataType::kVarchar, 2}}));
  EXPECT_THAT(
      codec->Decode(""),
      StatusIs(
          absl::StatusCode::kDataLoss,
          HasSubstr(
              "expected a null flag at offset 0 (column 0 \"id\": INT64)")));
  EXPECT_THAT(codec->Decode(absl::HexStringToBytes("02")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("null flag 2")));
  EXPECT_THAT(
      codec->Decode(absl::HexStringToBytes("0001ffffffff0f61")),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("string of length 4294967295 but only 1 bytes left "
                         "at offset 2 (column 1")));
  EXPECT_THAT(
      codec->Decode(absl::HexStringToBytes("000000")),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("1 trailing bytes")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto decimal_codec,
      PositionalCodec::Create({{"d", DataType::kDecimal, 1}}));
  // Non-canonical decimals: zero top byte, trailing-zero mantissa, negative
  // zero, too many bytes, scale out of range, NaN with a sign.
  for (const char* hex :
       {"0102010100", "0101000a", "01200000", "01110000", "01014d01", "0160"}) {
    EXPECT_THAT(decimal_codec->Decode(absl::HexStringToBytes(hex)),
                StatusIs(absl::StatusCode::kDataLoss))
        << hex;
  }
}

TEST(PositionalCodecTest, BadVarintsAreDataLossWithOffsetAndColumn) {
  struct Case {
    DataType type;
    const char* hex;
    const char* message;
  } cases[] = {
      // Truncated.
      {DataType::kInt64, "01",
       "truncated INT64 varint: expected a byte at offset 1 (column 0"},
      {DataType::kInt64, "0180",
       "truncated INT64 varint: expected a byte after 1 continuation byte(s) "
       "at offset 1 (column 0"},
      {DataType::kTimestamp, "01ffffffffffffffff",
       "truncated TIMESTAMP varint: expected a byte after 8 continuation"},
      // Overlong (non-canonical): 0 in two bytes; 1 in ten bytes.
      {DataType::kInt64, "018000",
       "non-canonical INT64 varint: 2 bytes ending in a zero byte (overlong) "
       "at offset 1 (column 0"},
      {DataType::kInt32, "0181808080808080808000",
       "non-canonical INT32 varint: 10 bytes ending in a zero byte"},
      {DataType::kInt64, "01ff8000",
       "non-canonical INT64 varint: 3 bytes ending in a zero byte"},
      // More than 10 bytes; over 64 bits.
      {DataType::kInt64, "01ffffffffffffffffffff01",
       "INT64 varint longer than 10 bytes at offset 1"},
      {DataType::kTime, "01ffffffffffffffffff02",
       "TIME varint over 64 bits: 10th byte 0x02, expected 0x01 at offset 1"},
      // Out of range for the type.
      {DataType::kInt16, "01808004",
       "INT16 value 32768 out of range [-32768, 32767] at offset 1"},
      {DataType::kInt16, "01818004",
       "INT16 value -32769 out of range [-32768, 32767] at offset 1"},
      {DataType::kInt32, "018080808010",
       "INT32 value 2147483648 out of range [-2147483648, 2147483647]"},
      {DataType::kInt32, "01ffffffffffffffffff01",
       "INT32 value -9223372036854775808 out of range"},
      {DataType::kDate, "018180808010", "DATE value -2147483649 out of range"},
      // String lengths: overlong, past the end, the largest varint.
      {DataType::kVarchar, "018000",
       "non-canonical VARCHAR length varint: 2 bytes ending in a zero byte"},
      {DataType::kBytea, "0102ff",
       "string of length 2 but only 1 bytes left at offset 1 (column 0"},
      {DataType::kBytea, "01ffffffffffffffffff0141",
       "string of length 18446744073709551615 but only 1 bytes left"},
      {DataType::kVarchar, "0180", "truncated VARCHAR length varint"},
  };
  for (const Case& c : cases) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                  PositionalCodec::Create({{"x", c.type, 1}}));
    const std::string bytes = absl::HexStringToBytes(c.hex);
    EXPECT_THAT(codec->Decode(bytes),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)))
        << c.hex;
    // Also with bytes after the datum (the decoder's 8-byte fast path).
    EXPECT_THAT(codec->Decode(bytes + std::string(12, '\0')),
                StatusIs(absl::StatusCode::kDataLoss))
        << c.hex;
  }
}

TEST(PositionalCodecTest, CreateValidatesSchema) {
  EXPECT_THAT(PositionalCodec::Create(
                  {{"a", DataType::kInt64, 1}, {"a", DataType::kInt64, 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
