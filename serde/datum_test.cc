#include "serde/datum.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(DatumTest, NullPlacementFollowsOrderType) {
  const Datum null;
  const Datum one = int32_t{1};
  EXPECT_GT(CompareDatums(null, one, OrderType::Ascending()), 0);
  EXPECT_LT(CompareDatums(null, one, OrderType::Descending()), 0);
  EXPECT_LT(CompareDatums(null, one, OrderType::AscendingNullsFirst()), 0);
  EXPECT_GT(CompareDatums(null, one, OrderType::DescendingNullsLast()), 0);
  EXPECT_EQ(CompareDatums(null, null, OrderType::Ascending()), 0);
}

TEST(DatumTest, DescendingReversesValues) {
  EXPECT_LT(CompareDatums(int64_t{1}, int64_t{2}, OrderType::Ascending()), 0);
  EXPECT_GT(CompareDatums(int64_t{1}, int64_t{2}, OrderType::Descending()), 0);
}

TEST(DatumTest, FloatSpecialValues) {
  const double nan = std::nan(""),
               inf = std::numeric_limits<double>::infinity();
  const OrderType asc = OrderType::Ascending();
  EXPECT_EQ(CompareDatums(-0.0, 0.0, asc), 0);
  EXPECT_GT(CompareDatums(nan, inf, asc), 0);
  EXPECT_EQ(CompareDatums(nan, -nan, asc), 0);
  EXPECT_LT(CompareDatums(-inf, -1e308, asc), 0);
  EXPECT_GT(
      CompareDatums(std::nanf(""), std::numeric_limits<float>::infinity(), asc),
      0);
  EXPECT_TRUE(DatumsEqual(nan, nan));
  EXPECT_TRUE(DatumsEqual(-0.0, 0.0));
}

TEST(DatumTest, StringsCompareBytewise) {
  const OrderType asc = OrderType::Ascending();
  EXPECT_LT(CompareDatums(std::string(""), std::string("\0", 1), asc), 0);
  EXPECT_LT(CompareDatums(std::string("a"), std::string("a\xff"), asc), 0);
  EXPECT_GT(CompareDatums(std::string("\xff"), std::string("a"), asc), 0);
}

TEST(DatumTest, TypesAndDefaults) {
  for (DataType type : kAllScalarDataTypes) {
    EXPECT_TRUE(DatumMatchesType(DefaultDatum(type), type))
        << DataTypeName(type);
    EXPECT_TRUE(DatumMatchesType(Datum(), type));
  }
  EXPECT_FALSE(DatumMatchesType(int32_t{1}, DataType::kInt64));
  EXPECT_EQ(DataTypeFromValue(0), std::nullopt);
  EXPECT_EQ(DataTypeFromValue(12), DataType::kTimestamp);
  EXPECT_EQ(DataTypeFromValue(13), DataType::kTimestamptz);
  EXPECT_EQ(DataTypeFromValue(20), DataType::kMap);
  EXPECT_EQ(DataTypeFromValue(21), std::nullopt);
}

TEST(DatumTest, DebugStrings) {
  EXPECT_EQ(DatumDebugString(Datum()), "NULL");
  EXPECT_EQ(DatumDebugString(Date{1}), "1970-01-02");
  EXPECT_EQ(DatumDebugString(Timestamp{1500000}), "1970-01-01 00:00:01.500000");
  EXPECT_EQ(DatumDebugString(TimeOfDay{3723000001}), "01:02:03.000001");
  EXPECT_EQ(DatumDebugString(std::string("a'b")), "'a\\'b'");
}

TEST(DatumTest, ListsAndStructsCompareAsPostgresArraysAndRecords) {
  const OrderType asc = OrderType::Ascending();
  const Datum empty = ListValue{};
  const Datum one = ListValue{{int64_t{1}}};
  const Datum one_null = ListValue{{int64_t{1}, Datum()}};
  const Datum one_two = ListValue{{int64_t{1}, int64_t{2}}};
  EXPECT_LT(CompareDatums(empty, one, asc), 0);
  EXPECT_LT(CompareDatums(one, one_two, asc), 0);       // a prefix first
  EXPECT_LT(CompareDatums(one_two, one_null, asc), 0);  // NULL elements last
  EXPECT_GT(CompareDatums(one_two, one_null, OrderType::Descending()), 0);
  // NULLS FIRST is about the datum, not its elements.
  EXPECT_LT(CompareDatums(one_two, one_null, OrderType::AscendingNullsFirst()),
            0);
  EXPECT_TRUE(DatumsEqual(ListValue{{-0.0, std::nan("")}},
                          ListValue{{0.0, -std::nan("")}}));
  EXPECT_LT(CompareDatums(StructValue{{int64_t{1}, std::string("b")}},
                          StructValue{{int64_t{1}, Datum()}}, asc),
            0);
  EXPECT_EQ(DatumDebugString(one_null), "[1, NULL]");
  EXPECT_EQ(DatumDebugString(StructValue{{int64_t{1}, std::string("a")}}),
            "{1, 'a'}");
}

TEST(DatumTest, DatumMatchesColumnTypeLooksInside) {
  const ColumnType pair =
      ColumnType::Struct({{"a", DataType::kInt64, 1},
                          {"b", ColumnType::List(DataType::kBytea), 2}});
  EXPECT_TRUE(DatumMatchesColumnType(
      StructValue{{int64_t{1}, ListValue{{std::string("x"), Datum()}}}}, pair));
  EXPECT_TRUE(DatumMatchesColumnType(StructValue{{Datum(), Datum()}}, pair));
  EXPECT_FALSE(DatumMatchesColumnType(StructValue{{int64_t{1}}}, pair));
  EXPECT_FALSE(DatumMatchesColumnType(
      StructValue{{int64_t{1}, ListValue{{int64_t{2}}}}}, pair));
  EXPECT_TRUE(DatumMatchesType(ListValue{{int64_t{2}}}, DataType::kList));
  EXPECT_TRUE(DatumMatchesColumnType(DefaultColumnDatum(pair), pair));
}

TEST(DatumTest, MapValuesHoldUniqueNonNullKeysInOrder) {
  absl::StatusOr<MapValue> map =
      MakeMapValue({{int64_t{3}, std::string("c")},
                    {int64_t{-1}, Datum()},
                    {int64_t{2}, std::string("b")}});
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->entries.size(), 3u);
  EXPECT_EQ(map->entries[0].key, Datum(int64_t{-1}));
  EXPECT_EQ(map->entries[2].key, Datum(int64_t{3}));
  const ColumnType type = ColumnType::Map(DataType::kInt64, DataType::kVarchar);
  EXPECT_TRUE(DatumMatchesColumnType(*map, type));
  EXPECT_FALSE(DatumMatchesColumnType(
      *map, ColumnType::Map(DataType::kInt32, DataType::kVarchar)));
  // Unsorted, duplicate or NULL keys do not match the type.
  EXPECT_FALSE(DatumMatchesColumnType(
      MapValue{{{int64_t{2}, Datum()}, {int64_t{1}, Datum()}}}, type));
  EXPECT_FALSE(DatumMatchesColumnType(
      MapValue{{{int64_t{1}, Datum()}, {int64_t{1}, Datum()}}}, type));
  EXPECT_FALSE(DatumMatchesColumnType(MapValue{{{Datum(), Datum()}}}, type));
  EXPECT_FALSE(MakeMapValue({{int64_t{1}, Datum()}, {int64_t{1}, Datum()}})
                   .ok());
  EXPECT_FALSE(MakeMapValue({{Datum(), Datum()}}).ok());
  EXPECT_EQ(DatumDebugString(*map), "{-1: NULL, 2: 'b', 3: 'c'}");
  EXPECT_TRUE(DatumsEqual(DefaultColumnDatum(type), MapValue{}));
}

TEST(DatumTest, JsonbDatumsCompareByCanonicalText) {
  const Datum a = *ParseJsonb(R"({"b": 1, "a": [2]})");
  const Datum b = *ParseJsonb(R"({"a":[2],"b":1})");
  EXPECT_TRUE(DatumsEqual(a, b));
  EXPECT_TRUE(DatumMatchesType(a, DataType::kJsonb));
  EXPECT_FALSE(DatumMatchesType(a, DataType::kVarchar));
  EXPECT_EQ(DatumDebugString(a), R"({"a": [2], "b": 1})");
  EXPECT_TRUE(DatumsEqual(DefaultDatum(DataType::kJsonb), Jsonb()));
  EXPECT_LT(CompareDatums(*ParseJsonb("[1]"), *ParseJsonb("[2]"),
                          OrderType::Ascending()),
            0);
}

}  // namespace
}  // namespace backfill
