// LIST, STRUCT, MAP and JSONB value payloads, through the two value codecs.
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

TEST(NestedPayloadTest, GoldenMapAndJsonb) {
  const ColumnType map = ColumnType::Map(DataType::kVarchar, DataType::kInt32);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto codec,
      PositionalCodec::Create({{"m", map, 1}, {"j", DataType::kJsonb, 2}}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      MapValue value, MakeMapValue({{std::string("b"), Datum()},
                                    {std::string("a"), int32_t{1}}}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Jsonb json,
                                ParseJsonb(R"({"a":[1,2.50]})"));
  const Row row = {value, json};
  std::string bytes;
  codec->Encode(row, &bytes);
  // Entries in key order: "a" -> 1, "b" -> NULL; then the JSONB text
  // {"a": [1, 2.50]} (16 bytes).
  EXPECT_EQ(Hex(bytes),
            "01"
            "02"
            "0161"
            "0102"
            "0162"
            "00"
            "01"
            "10" +
                Hex(R"({"a": [1, 2.50]})"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Row back, codec->Decode(bytes));
  EXPECT_TRUE(RowsEqual(back, row));
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
      schema.push_back(
          {absl::StrCat("c", c), RandomValueColumnType(rng, 3), c + 1});
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
// fields, at the top level, inside a LIST and as a MAP's values.
TEST(NestedPayloadTest, ColumnAwareStructFieldsEvolve) {
  const ColumnType v1 = ColumnType::Struct(
      {{"a", DataType::kInt64, 1}, {"b", DataType::kVarchar, 2}});
  const ColumnType v2 = ColumnType::Struct(
      {{"c", DataType::kBoolean, 3}, {"a", DataType::kInt64, 1}});
  for (int where : {0, 1, 2}) {
    SCOPED_TRACE(where == 0 ? "top level" : (where == 1 ? "in a LIST"
                                                         : "in a MAP"));
    auto wrap = [&](const ColumnType& t) {
      if (where == 0) return t;
      return where == 1 ? ColumnType::List(t)
                        : ColumnType::Map(DataType::kInt16, t);
    };
    auto value = [&](Datum d) {
      if (where == 0) return d;
      if (where == 1) return Datum(ListValue{{std::move(d)}});
      return Datum(MapValue{{{int16_t{5}, std::move(d)}}});
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

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto map, PositionalCodec::Create(
                    {{"m", ColumnType::Map(DataType::kInt64, DataType::kInt64),
                      1}}));
  // Keys 2 then 1, and 1 twice: not strictly ascending.
  EXPECT_THAT(map->Decode(absl::HexStringToBytes("01" "02" "040100" "020100")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("MAP keys not strictly ascending at offset 5")));
  EXPECT_THAT(map->Decode(absl::HexStringToBytes("01" "02" "020100" "020100")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("not strictly ascending")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto json, PositionalCodec::Create({{"j", DataType::kJsonb, 1}}));
  // {"a":1} is valid JSON but not the canonical text {"a": 1}.
  EXPECT_THAT(json->Decode("\x01\x07{\"a\":1}"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("JSONB payload at offset 1 is not canonical")));
  EXPECT_THAT(json->Decode("\x01\x02[1"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("JSONB payload at offset 1: invalid JSONB at "
                                 "offset 2")));
  EXPECT_THAT(json->Decode("\x01\x09[1]"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("JSONB length 9 but only 3 bytes left")));
}

}  // namespace
}  // namespace backfill
