#include "executor/message.h"

#include <cstdint>

#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;

TEST(WatermarkTest, ReindexFindsTheOutputPosition) {
  Watermark watermark{
      .column_index = 2, .type = DataType::kInt64, .value = int64_t{100}};
  std::optional<Watermark> mapped = watermark.Reindex({3, 2, 0});
  ASSERT_TRUE(mapped.has_value());
  EXPECT_EQ(mapped->column_index, 1);
  EXPECT_EQ(mapped->type, DataType::kInt64);
  EXPECT_TRUE(DatumsEqual(mapped->value, int64_t{100}));
  // First occurrence wins when a column is repeated.
  EXPECT_EQ(watermark.Reindex({2, 2})->column_index, 0);
}

TEST(WatermarkTest, ReindexDropsAMissingColumn) {
  Watermark watermark{.column_index = 1, .value = int64_t{5}};
  EXPECT_FALSE(watermark.Reindex({0, 2}).has_value());
  EXPECT_FALSE(watermark.Reindex({}).has_value());
}

TEST(MessageTest, DebugStringOfEachKind) {
  EXPECT_EQ(
      MessageDebugString(Message(Watermark{
          .column_index = 1, .type = DataType::kInt64, .value = int64_t{100}})),
      "Watermark{column 1, INT64, 100}");
  EXPECT_EQ(MessageDebugString(Message(testing::TestBarrier(2))),
            "Barrier{epoch {curr 2, prev 1}, checkpoint}");
  EXPECT_THAT(
      MessageDebugString(Message(testing::StreamChunkFromPretty(" I\n + 1"))),
      HasSubstr("+ (1)"));
}

}  // namespace
}  // namespace backfill
