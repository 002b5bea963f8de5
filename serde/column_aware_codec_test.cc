#include "serde/column_aware_codec.h"

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

std::string Hex(const std::string& s) { return absl::BytesToHexString(s); }

TEST(ColumnAwareCodecTest, GoldenBytes) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, ColumnAwareCodec::Create({{"id", DataType::kInt64, 1},
                                            {"s", DataType::kVarchar, 2},
                                            {"b", DataType::kBoolean, 3}}));
  std::string bytes;
  codec->Encode({int64_t{7}, Datum(), true}, &bytes);
  EXPECT_EQ(Hex(bytes),
            "81"
            "03000000"
            "010000000200000003000000"
            "000101"
            "0e01");
}

TEST(ColumnAwareCodecTest, GoldenAddedScalarTypes) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, ColumnAwareCodec::Create({{"i", DataType::kInterval, 1},
                                            {"n", DataType::kInt256, 2},
                                            {"t", DataType::kTimestamptz, 3}}));
  std::string bytes;
  codec->Encode({Interval{0, 30, 0}, Int256::FromInt64(1), Datum()}, &bytes);
  EXPECT_EQ(Hex(bytes),
            "81"
            "03000000"
            "010000000200000003000000"
            "000323"
            "003c00"
            "01" +
                std::string(62, '0'));
}

TEST(ColumnAwareCodecTest, OffsetWidthGrowsWithData) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, ColumnAwareCodec::Create({{"s", DataType::kBytea, 5},
                                            {"t", DataType::kBytea, 6}}));
  for (size_t length : {0, 200, 251, 252, 1000, 65530, 65531, 70000}) {
    SCOPED_TRACE(length);
    const Row row = {std::string(length, '\xff'), std::string("x")};
    std::string bytes;
    codec->Encode(row, &bytes);
    // Varint length (1, 2 or 3 bytes here) + bytes, then "01 78".
    const size_t data = length +
                        (length < 128     ? 1
                         : length < 16384 ? 2
                                          : 3) +
                        2;
    const uint8_t expected = data <= 0xFF ? 0x81 : data <= 0xFFFF ? 0x82 : 0x83;
    EXPECT_EQ(static_cast<uint8_t>(bytes[0]), expected);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Row decoded, codec->Decode(bytes));
    EXPECT_TRUE(RowsEqual(decoded, row));
  }
}

TEST(ColumnAwareCodecTest, RandomRowsRoundTrip) {
  Schema schema;
  int id = 100;
  for (DataType type : kAllScalarDataTypes) {
    schema.push_back({absl::StrCat("c", id), type, id});
    id += 3;
  }
  const std::vector<DataType> types = ColumnTypes(schema);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec, ColumnAwareCodec::Create(schema));
  const uint64_t seed = 777;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  Row reused;
  for (int i = 0; i < 2000; ++i) {
    const Row row = RandomRow(types, rng, 0.3);
    std::string bytes;
    codec->Encode(row, &bytes);
    BACKFILL_ASSERT_OK(codec->DecodeInto(bytes, &reused));
    ASSERT_TRUE(RowsEqual(reused, row)) << RowDebugString(row);
    std::string again;
    codec->Encode(reused, &again);
    ASSERT_EQ(again, bytes);
    // Truncation is DataLoss, except for a cut exactly at the start of the
    // last datum, which makes it zero-length, i.e. NULL: the format (like
    // RisingWave's) cannot tell, as it has no total length or checksum.
    for (size_t cut = 0; cut < bytes.size(); cut += 5) {
      absl::StatusOr<Row> truncated = codec->Decode(bytes.substr(0, cut));
      if (truncated.ok()) {
        Row expected = row;
        expected.back() = Datum();
        ASSERT_TRUE(RowsEqual(*truncated, expected)) << cut;
      } else {
        ASSERT_EQ(truncated.status().code(), absl::StatusCode::kDataLoss);
      }
    }
  }
}

// v1 = (id, name, score); v2 drops score and adds tags and flag, reordered.
class SchemaEvolutionTest : public ::testing::Test {
 protected:
  const Schema v1_ = {{"id", DataType::kInt64, 1},
                      {"name", DataType::kVarchar, 2},
                      {"score", DataType::kFloat64, 3}};
  const Schema v2_ = {{"flag", DataType::kBoolean, 5},
                      {"id", DataType::kInt64, 1},
                      {"tags", DataType::kBytea, 4},
                      {"name", DataType::kVarchar, 2}};
};

TEST_F(SchemaEvolutionTest, NewReaderOldRow) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto writer, ColumnAwareCodec::Create(v1_));
  std::string bytes;
  writer->Encode({int64_t{9}, std::string("ann"), 2.5}, &bytes);

  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader, ColumnAwareCodec::Create(v2_));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Row row, reader->Decode(bytes));
  EXPECT_TRUE(
      RowsEqual(row, {Datum(), int64_t{9}, Datum(), std::string("ann")}))
      << RowDebugString(row);

  ColumnAwareOptions options;
  options.defaults = {true, int64_t{0}, std::string("none"), Datum()};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto with_defaults,
                                ColumnAwareCodec::Create(v2_, options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(row, with_defaults->Decode(bytes));
  EXPECT_TRUE(RowsEqual(
      row, {true, int64_t{9}, std::string("none"), std::string("ann")}))
      << RowDebugString(row);
}

TEST_F(SchemaEvolutionTest, OldReaderNewRow) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto writer, ColumnAwareCodec::Create(v2_));
  std::string bytes;
  writer->Encode({false, int64_t{3}, std::string("\x00\xff", 2), Datum()},
                 &bytes);

  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader, ColumnAwareCodec::Create(v1_));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Row row, reader->Decode(bytes));
  EXPECT_TRUE(RowsEqual(row, {int64_t{3}, Datum(), Datum()}))
      << RowDebugString(row);
}

TEST_F(SchemaEvolutionTest, DefaultsAreValidated) {
  ColumnAwareOptions options;
  options.defaults = {true};
  EXPECT_THAT(
      ColumnAwareCodec::Create(v2_, options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 defaults")));
  options.defaults = {int64_t{1}, int64_t{0}, Datum(), Datum()};
  EXPECT_THAT(ColumnAwareCodec::Create(v2_, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("default of column 0 \"flag\"")));
}

TEST(ColumnAwareCodecTest, CorruptInputIsDataLoss) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec, ColumnAwareCodec::Create({{"id", DataType::kInt64, 1},
                                            {"b", DataType::kBoolean, 3}}));
  struct Case {
    const char* hex;
    const char* message;
  } cases[] = {
      {"", "empty input"},
      {"01", "header 0x01"},
      {"80", "header 0x80"},
      {"c1", "header 0xc1"},
      {"8102", "expected a u32 datum count"},
      {"81ffffffff", "datum count 4294967295"},
      // Offsets past the data, and decreasing offsets.
      {"8102000000"
       "01000000"
       "03000000"
       "0009"
       "0e",
       "outside data"},
      {"8102000000"
       "01000000"
       "03000000"
       "0100"
       "0e01",
       "spans [1, 0)"},
      // Duplicate column id (evolution path).
      {"8102000000"
       "03000000"
       "03000000"
       "0001"
       "0100",
       "column id 3 appears twice"},
      // Payload with trailing bytes; bad boolean.
      {"8102000000"
       "01000000"
       "03000000"
       "0002"
       "0e0001",
       "1 trailing payload bytes"},
      {"8102000000"
       "01000000"
       "03000000"
       "0001"
       "0e02",
       "BOOLEAN byte 2"},
      // Bad varints: overlong, truncated within its span (the span ends
      // before the varint does), over 10 bytes.
      {"8102000000"
       "01000000"
       "03000000"
       "0002"
       "800001",
       "non-canonical INT64 varint: 2 bytes ending in a zero byte (overlong) "
       "at offset 15 (datum 0, column 0"},
      {"8102000000"
       "01000000"
       "03000000"
       "0001"
       "800101",
       "truncated INT64 varint: expected a byte after 1 continuation byte(s) "
       "at offset 15"},
      {"8102000000"
       "01000000"
       "03000000"
       "000b"
       "ffffffffffffffffffff0101",
       "INT64 varint longer than 10 bytes at offset 15"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(codec->Decode(absl::HexStringToBytes(c.hex)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)))
        << c.hex;
  }
}

}  // namespace
}  // namespace backfill
