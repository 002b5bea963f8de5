#include "serde/column_type.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ColumnTypeTest, ScalarsListsAndStructs) {
  const ColumnType scalar = DataType::kInt64;
  EXPECT_EQ(scalar.id(), DataType::kInt64);
  EXPECT_FALSE(scalar.is_nested());
  const ColumnType point = ColumnType::Struct(
      {{"x", DataType::kFloat64, 1}, {"y", DataType::kFloat64, 2}});
  const ColumnType points = ColumnType::List(point);
  EXPECT_TRUE(points.is_nested());
  EXPECT_EQ(points.element(), point);
  EXPECT_EQ(point.fields()[1].name, "y");
  EXPECT_EQ(points.DebugString(), "LIST<STRUCT<x FLOAT64, y FLOAT64>>");
  EXPECT_EQ(ColumnTypeDepth(scalar), 0);
  EXPECT_EQ(ColumnTypeDepth(points), 2);
  // Equality looks at names, ids and types.
  EXPECT_EQ(points,
            ColumnType::List(ColumnType::Struct(
                {{"x", DataType::kFloat64, 1}, {"y", DataType::kFloat64, 2}})));
  EXPECT_NE(point, ColumnType::Struct({{"x", DataType::kFloat64, 1},
                                       {"y", DataType::kFloat64, 3}}));
  EXPECT_NE(point, ColumnType::Struct({{"x", DataType::kFloat64, 1}}));
  EXPECT_NE(ColumnType::List(DataType::kInt32),
            ColumnType::List(DataType::kInt64));
  EXPECT_NE(ColumnType(DataType::kVarchar), ColumnType(DataType::kBytea));
}

TEST(ColumnTypeTest, ValidationNamesTheField) {
  BACKFILL_EXPECT_OK(ValidateColumnType(DataType::kInt64));
  BACKFILL_EXPECT_OK(ValidateColumnType(ColumnType::Struct({})));
  EXPECT_THAT(
      ValidateColumnType(ColumnType::List(ColumnType::Struct(
          {{"a", DataType::kInt32, 1}, {"b", DataType::kInt32, 1}}))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("STRUCT<a INT32, b INT32>.b: duplicate field id 1")));
  EXPECT_THAT(ValidateColumnType(ColumnType::Struct(
                  {{"a", DataType::kInt32, 1}, {"a", DataType::kInt32, 2}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("duplicate field name")));
  EXPECT_THAT(
      ValidateColumnType(ColumnType::Struct({{"a", DataType::kInt32, -1}})),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("negative field id -1")));
}

TEST(ColumnTypeTest, MapKeysAreIntegersOrVarchar) {
  const ColumnType map = ColumnType::Map(DataType::kVarchar, DataType::kJsonb);
  EXPECT_EQ(map.DebugString(), "MAP<VARCHAR, JSONB>");
  EXPECT_EQ(map.map_key(), DataType::kVarchar);
  EXPECT_EQ(map.map_value(), DataType::kJsonb);
  EXPECT_EQ(map, ColumnType::Map(DataType::kVarchar, DataType::kJsonb));
  EXPECT_NE(map, ColumnType::Map(DataType::kInt32, DataType::kJsonb));
  EXPECT_EQ(ColumnTypeDepth(ColumnType::Map(DataType::kInt16, map)), 2);
  BACKFILL_EXPECT_OK(ValidateColumnType(map));
  for (DataType key : {DataType::kInt16, DataType::kInt32, DataType::kInt64,
                       DataType::kVarchar}) {
    EXPECT_TRUE(IsValidMapKeyType(key)) << DataTypeName(key);
  }
  for (DataType key : {DataType::kBoolean, DataType::kFloat32,
                       DataType::kFloat64, DataType::kDecimal,
                       DataType::kBytea, DataType::kDate, DataType::kTimestamp,
                       DataType::kTimestamptz, DataType::kInterval,
                       DataType::kSerial, DataType::kInt256,
                       DataType::kJsonb}) {
    EXPECT_THAT(ValidateColumnType(ColumnType::Map(key, DataType::kInt32)),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("invalid map key type")))
        << DataTypeName(key);
  }
  EXPECT_THAT(
      ValidateColumnType(ColumnType::List(ColumnType::Map(
          ColumnType::List(DataType::kInt32), DataType::kInt32))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("invalid map key type LIST<INT32>")));
}

TEST(ColumnTypeTest, KeyTypesExcludeJsonbAndMapAtAnyDepth) {
  BACKFILL_EXPECT_OK(ValidateKeyColumnType(DataType::kInt256));
  BACKFILL_EXPECT_OK(ValidateKeyColumnType(ColumnType::List(
      ColumnType::Struct({{"a", DataType::kFloat64, 1}}))));
  EXPECT_THAT(ValidateKeyColumnType(DataType::kJsonb),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("JSONB cannot be in a key")));
  EXPECT_THAT(
      ValidateKeyColumnType(ColumnType::Map(DataType::kInt32, DataType::kInt32)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("MAP<INT32, INT32> cannot be in a key")));
  EXPECT_THAT(ValidateKeyColumnType(ColumnType::Struct(
                  {{"a", DataType::kInt32, 1},
                   {"j", ColumnType::List(DataType::kJsonb), 2}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("STRUCT<a INT32, j LIST<JSONB>>.j: "
                                 "LIST<JSONB>: JSONB cannot be in a key")));
}

}  // namespace
}  // namespace backfill
