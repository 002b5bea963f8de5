#include "serde/row.h"

#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(RowTest, ProjectAndCompare) {
  const Row row = {int64_t{1}, std::string("a"), Datum()};
  const Row key = ProjectRow(row, {2, 0});
  EXPECT_TRUE(RowsEqual(key, Row{Datum(), int64_t{1}}));
  const OrderType orders[] = {OrderType::Ascending(), OrderType::Descending()};
  const Row a = {int32_t{1}, int32_t{5}};
  const Row b = {int32_t{1}, int32_t{4}};
  EXPECT_LT(CompareRows(a, b, orders), 0);  // second column descending
  EXPECT_EQ(CompareRows(a, a, orders), 0);
  EXPECT_EQ(RowDebugString(row), "(1, 'a', NULL)");
}

}  // namespace
}  // namespace backfill
