#include "serde/positional_codec.h"

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
  for (DataType type : kAllDataTypes) {
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
            "010700000000000000"
            "00"
            "01020000006162"
            "0101010f"
            "0101");
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
      codec->Decode(absl::HexStringToBytes("0001ffffffff61")),
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

TEST(PositionalCodecTest, CreateValidatesSchema) {
  EXPECT_THAT(PositionalCodec::Create(
                  {{"a", DataType::kInt64, 1}, {"a", DataType::kInt64, 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
