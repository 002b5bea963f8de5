// LIST and STRUCT value payloads, through the two value codecs.
#include "serde/internal/nested_payload.h"

#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/column_aware_codec.h"
#include "serde/positional_codec.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

std::string Hex(const std::string& s) { return absl::BytesToHexString(s); }

const ColumnType& Pair() {
  static const ColumnType* type = new ColumnType(ColumnType::Struct(
      {{"a", DataType::kInt32, 1}, {"b", DataType::kVarchar, 2}}));
  return *type;
}

TEST(NestedPayloadTest, GoldenPositional) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec,
      PositionalCodec::Create(
          {{"l", ColumnType::List(DataType::kInt64), 1}, {"s", Pair(), 2}}));
  std::string bytes;
  const Row row = {ListValue{{int64_t{1}, Datum()}},
                   StructValue{{int32_t{2}, std::string("x")}}};
  codec->Encode(row, &bytes);
  EXPECT_EQ(Hex(bytes),
            "01"
            "02"
            "0102"
            "00"
            "01"
            "0104"
            "010178");
  BACKFILL_ASSERT_OK_AND_ASSIGN(Row back, codec->Decode(bytes));
  EXPECT_TRUE(RowsEqual(back, row));
}

TEST(NestedPayloadTest, GoldenColumnAware) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                ColumnAwareCodec::Create({{"s", Pair(), 7}}));
  std::string bytes;
  codec->Encode({StructValue{{int32_t{2}, Datum()}}}, &bytes);
  // Field count 2; field 1: length 1, payload 04; field 2: length 0 (NULL).
  EXPECT_EQ(Hex(bytes),
            "81"
            "01000000"
            "07000000"
            "00"
            "02"
            "010104"
            "0200");
}

// Random nested types and values: both codecs round-trip bit-exactly.
TEST(NestedPayloadTest, RandomNestedRowsRoundTrip) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 200; ++t) {
    Schema schema;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < n; ++c) {
      schema.push_back({absl::StrCat("c", c), RandomColumnType(rng, 3), c + 1});
    }
    SCOPED_TRACE(schema[0].type.DebugString());
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto positional,
                                  PositionalCodec::Create(schema));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto column_aware,
                                  ColumnAwareCodec::Create(schema));
    for (int r = 0; r < 20; ++r) {
      Row row;
      for (const ColumnDesc& column : schema) {
        row.push_back(RandomColumnDatum(column.type, rng, 0.1));
      }
      for (const ValueRowCodec* codec :
           {static_cast<const ValueRowCodec*>(positional.get()),
            static_cast<const ValueRowCodec*>(column_aware.get())}) {
        std::string bytes;
        codec->Encode(row, &bytes);
        absl::StatusOr<Row> back = codec->Decode(bytes);
        ASSERT_TRUE(back.ok()) << back.status() << " " << RowDebugString(row);
        ASSERT_TRUE(RowsEqual(*back, row)) << RowDebugString(*back);
        std::string again;
        codec->Encode(*back, &again);
        ASSERT_EQ(Hex(again), Hex(bytes));  // bit-exact (floats, intervals)
        for (size_t cut = 0; cut < bytes.size() && codec == positional.get();
             ++cut) {
          ASSERT_FALSE(codec->Decode(bytes.substr(0, cut)).ok());
        }
      }
    }
  }
}

// Column-aware rows keep a STRUCT readable when its type gains and loses
// fields, at the top level and inside a LIST.
TEST(NestedPayloadTest, ColumnAwareStructFieldsEvolve) {
  const ColumnType v1 = ColumnType::Struct(
      {{"a", DataType::kInt64, 1}, {"b", DataType::kVarchar, 2}});
  const ColumnType v2 = ColumnType::Struct(
      {{"c", DataType::kBoolean, 3}, {"a", DataType::kInt64, 1}});
  for (bool in_list : {false, true}) {
    SCOPED_TRACE(in_list ? "in a LIST" : "top level");
    auto wrap = [&](const ColumnType& t) {
      return in_list ? ColumnType::List(t) : t;
    };
    auto value = [&](Datum d) {
      return in_list ? Datum(ListValue{{std::move(d)}}) : d;
    };
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto writer, ColumnAwareCodec::Create({{"s", wrap(v1), 1}}));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto reader, ColumnAwareCodec::Create({{"s", wrap(v2), 1}}));
    std::string old_row;
    writer->Encode({value(StructValue{{int64_t{7}, std::string("gone")}})},
                   &old_row);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Row read, reader->Decode(old_row));
    EXPECT_TRUE(RowsEqual(read, {value(StructValue{{Datum(), int64_t{7}}})}))
        << RowDebugString(read);
    // And an old reader of a new row.
    std::string new_row;
    reader->Encode({value(StructValue{{true, int64_t{8}}})}, &new_row);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Row old_read, writer->Decode(new_row));
    EXPECT_TRUE(
        RowsEqual(old_read, {value(StructValue{{int64_t{8}, Datum()}})}))
        << RowDebugString(old_read);
  }
}

TEST(NestedPayloadTest, CorruptPayloadsAreDataLoss) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                ColumnAwareCodec::Create({{"s", Pair(), 7}}));
  // Field id 1 twice.
  EXPECT_THAT(codec->Decode(absl::HexStringToBytes("8101000000070000000002"
                                                   "010104"
                                                   "010104")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("STRUCT field id 1 appears twice")));
  // A field payload longer than its length.
  EXPECT_THAT(codec->Decode(absl::HexStringToBytes("8101000000070000000001"
                                                   "0101ffff03")),
              StatusIs(absl::StatusCode::kDataLoss));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto list,
      PositionalCodec::Create({{"l", ColumnType::List(DataType::kInt64), 1}}));
  EXPECT_THAT(list->Decode(absl::HexStringToBytes("01ff01")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("LIST length 255 but only 0 bytes left")));
  EXPECT_THAT(list->Decode(absl::HexStringToBytes("010102")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("null flag 2 is not 0 or 1")));
}

}  // namespace
}  // namespace backfill
