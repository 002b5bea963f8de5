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

}  // namespace
}  // namespace backfill
