#include "executor/data_chunk.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DataChunk ThreeRows() {
  return DataChunk::FromRows({DataType::kInt64, DataType::kVarchar},
                             {{int64_t{1}, std::string("a")},
                              {int64_t{2}, Datum()},
                              {int64_t{3}, std::string("c")}});
}

TEST(DataChunkTest, FromRowsIsColumnarAndAllVisible) {
  DataChunk chunk = ThreeRows();
  EXPECT_EQ(chunk.num_columns(), 2);
  EXPECT_EQ(chunk.capacity(), 3u);
  EXPECT_EQ(chunk.cardinality(), 3u);
  EXPECT_EQ(chunk.column(0).type(), DataType::kInt64);
  EXPECT_EQ(chunk.column(1).type(), DataType::kVarchar);
  EXPECT_EQ(std::get<int64_t>(chunk.column(0).value(2)), 3);
  EXPECT_TRUE(IsNull(chunk.column(1).value(1)));
  EXPECT_THAT(chunk.data_types(),
              ElementsAre(DataType::kInt64, DataType::kVarchar));
  EXPECT_TRUE(RowsEqual(chunk.RowAt(0), Row{int64_t{1}, std::string("a")}));
}

TEST(DataChunkTest, VisibilityChangesCardinalityNotCapacity) {
  DataChunk chunk = ThreeRows();
  chunk.SetVisibility({true, false, true});
  EXPECT_EQ(chunk.capacity(), 3u);
  EXPECT_EQ(chunk.cardinality(), 2u);
  EXPECT_FALSE(chunk.is_visible(1));
  std::vector<Row> rows = chunk.VisibleRows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(RowsEqual(rows[1], Row{int64_t{3}, std::string("c")}));
  chunk.SetVisibility({false, false, false});
  EXPECT_TRUE(chunk.empty());
}

TEST(DataChunkTest, CompactDropsInvisibleRowsKeepingOrder) {
  DataChunk chunk = ThreeRows();
  chunk.SetVisibility({false, true, true});
  chunk.Compact();
  EXPECT_EQ(chunk.capacity(), 2u);
  EXPECT_EQ(chunk.cardinality(), 2u);
  EXPECT_THAT(chunk.visibility(), ElementsAre(true, true));
  EXPECT_EQ(std::get<int64_t>(chunk.column(0).value(0)), 2);
  EXPECT_EQ(std::get<std::string>(chunk.column(1).value(1)), "c");
  EXPECT_EQ(chunk.column(0).size(), 2u);
}

TEST(DataChunkTest, CompactOfAllInvisibleIsEmpty) {
  DataChunk chunk = ThreeRows();
  chunk.SetVisibility({false, false, false});
  chunk.Compact();
  EXPECT_EQ(chunk.capacity(), 0u);
  EXPECT_EQ(chunk.num_columns(), 2);
}

TEST(DataChunkTest, ProjectReordersRepeatsAndKeepsVisibility) {
  DataChunk chunk = ThreeRows();
  chunk.SetVisibility({true, false, true});
  DataChunk projected = chunk.Project({1, 0, 1});
  EXPECT_EQ(projected.num_columns(), 3);
  EXPECT_EQ(projected.cardinality(), 2u);
  EXPECT_THAT(projected.visibility(), ElementsAre(true, false, true));
  EXPECT_TRUE(RowsEqual(projected.RowAt(2),
                        Row{std::string("c"), int64_t{3}, std::string("c")}));
}

TEST(DataChunkTest, ProjectToNoColumnsKeepsRowCount) {
  DataChunk chunk = ThreeRows();
  DataChunk projected = chunk.Project({});
  EXPECT_EQ(projected.num_columns(), 0);
  EXPECT_EQ(projected.capacity(), 3u);
  EXPECT_EQ(projected.cardinality(), 3u);
  EXPECT_TRUE(projected.RowAt(1).empty());
}

TEST(DataChunkTest, ExplicitVisibilityConstructor) {
  DataChunk chunk({Column(DataType::kInt32, {int32_t{7}, int32_t{8}})},
                  std::vector<bool>{false, true});
  EXPECT_EQ(chunk.cardinality(), 1u);
  DataChunk none({}, 4);
  EXPECT_EQ(none.capacity(), 4u);
  EXPECT_EQ(DataChunk().capacity(), 0u);
}

TEST(DataChunkTest, DebugStringShowsTypesRowsAndInvisibility) {
  DataChunk chunk = ThreeRows();
  chunk.SetVisibility({true, false, true});
  const std::string text = chunk.DebugString();
  EXPECT_THAT(text, HasSubstr("INT64, VARCHAR"));
  EXPECT_THAT(text, HasSubstr("2/3 rows visible"));
  EXPECT_THAT(text, HasSubstr("(2, NULL) (invisible)"));
  EXPECT_THAT(text, HasSubstr("(1, 'a')"));
}

}  // namespace
}  // namespace backfill
