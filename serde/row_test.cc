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

TEST(RowTest, MoveRowIntoColumnsAppendsDatumCToColumnC) {
  std::vector<std::vector<Datum>> columns = {{int64_t{1}}, {Datum()}};
  Row row = {int64_t{2}, std::string("a long string, past any inline buffer")};
  MoveRowIntoColumns(row, absl::MakeSpan(columns));
  EXPECT_EQ(columns[0], (std::vector<Datum>{int64_t{1}, int64_t{2}}));
  EXPECT_EQ(
      columns[1],
      (std::vector<Datum>{
          Datum(), std::string("a long string, past any inline buffer")}));
}

}  // namespace
}  // namespace backfill
