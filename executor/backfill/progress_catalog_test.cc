#include "executor/backfill/progress_catalog.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// t(a INT32, id INT64, v VARCHAR): pk (id, a), 8 vnodes.
TableCatalog Upstream() {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  catalog.columns = {{"a", DataType::kInt32, 1, false},
                     {"id", DataType::kInt64, 2, false},
                     {"v", DataType::kVarchar, 3, true}};
  catalog.pk_indices = {1, 0};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending()};
  catalog.dist_key_indices = {1};
  catalog.vnode_count = 8;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

TEST(BackfillProgressCatalogTest, VnodeThenPkColumnsThenFinishedAndCount) {
  const TableCatalog catalog = BackfillProgressCatalog(Upstream(), 42);
  EXPECT_EQ(catalog.table_id, 42u);
  EXPECT_EQ(catalog.name, "t_backfill_progress");
  ASSERT_EQ(catalog.columns.size(), 5u);
  EXPECT_EQ(catalog.columns[0].type, DataType::kInt16);
  EXPECT_FALSE(catalog.columns[0].nullable);
  // The upstream pk columns in pk order, nullable.
  EXPECT_EQ(catalog.columns[1].name, "id");
  EXPECT_EQ(catalog.columns[1].type, DataType::kInt64);
  EXPECT_TRUE(catalog.columns[1].nullable);
  EXPECT_EQ(catalog.columns[2].name, "a");
  EXPECT_EQ(catalog.columns[2].type, DataType::kInt32);
  EXPECT_TRUE(catalog.columns[2].nullable);
  EXPECT_EQ(catalog.columns[3].type, DataType::kBoolean);
  EXPECT_EQ(catalog.columns[4].type, DataType::kInt64);
  EXPECT_THAT(catalog.pk_indices, ElementsAre(0));
  EXPECT_EQ(catalog.vnode_column, 0);
  EXPECT_EQ(catalog.vnode_count, 8);
  EXPECT_THAT(catalog.value_indices, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(ValidateTableCatalog(catalog), IsOk());
}

TEST(ValidateProgressCatalogTest, AcceptsItsOwnCatalog) {
  EXPECT_THAT(ValidateProgressCatalog(Upstream(),
                                      BackfillProgressCatalog(Upstream(), 9)),
              IsOk());
}

TEST(ValidateProgressCatalogTest, RejectsAnotherShape) {
  TableCatalog wrong_type = BackfillProgressCatalog(Upstream(), 9);
  wrong_type.columns[1].type = DataType::kInt32;
  EXPECT_THAT(ValidateProgressCatalog(Upstream(), wrong_type),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("does not have the backfill progress shape")));
  TableCatalog wrong_vnodes = BackfillProgressCatalog(Upstream(), 9);
  wrong_vnodes.vnode_count = 16;
  EXPECT_THAT(ValidateProgressCatalog(Upstream(), wrong_vnodes),
              StatusIs(absl::StatusCode::kInvalidArgument));
  TableCatalog fewer_columns = BackfillProgressCatalog(Upstream(), 9);
  fewer_columns.columns.pop_back();
  fewer_columns.value_indices.pop_back();
  EXPECT_THAT(ValidateProgressCatalog(Upstream(), fewer_columns),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateProgressCatalogTest, RejectsAColumnNotStoredInTheValue) {
  TableCatalog catalog = BackfillProgressCatalog(Upstream(), 9);
  catalog.value_indices = {1, 2, 3};  // row_count not stored
  EXPECT_THAT(ValidateProgressCatalog(Upstream(), catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 4 (row_count) is not in "
                                 "value_indices")));
}

TEST(ValidateProgressCatalogTest, RejectsANotNullablePositionColumn) {
  TableCatalog catalog = BackfillProgressCatalog(Upstream(), 9);
  catalog.columns[2].nullable = false;
  EXPECT_THAT(ValidateProgressCatalog(Upstream(), catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 2 (a) is not nullable")));
}

}  // namespace
}  // namespace backfill
