#include "serde/schema.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(SchemaTest, ValidatesIdsNamesAndRows) {
  const Schema schema = {{"id", DataType::kInt64, 1, false},
                         {"name", DataType::kVarchar, 2, true}};
  EXPECT_THAT(ValidateSchema(schema), IsOk());
  EXPECT_EQ(ColumnTypes(schema),
            (std::vector<DataType>{DataType::kInt64, DataType::kVarchar}));
  EXPECT_THAT(ValidateSchema(Schema{{"a", DataType::kInt64, 1},
                                    {"b", DataType::kInt64, 1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("duplicate column id 1")));
  EXPECT_THAT(ValidateRow(schema, Row{int64_t{1}, Datum()}), IsOk());
  EXPECT_THAT(
      ValidateRow(schema, Row{Datum(), Datum()}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not nullable")));
  EXPECT_THAT(ValidateRow(schema, Row{int32_t{1}, Datum()}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("INT64")));
}

}  // namespace
}  // namespace backfill
