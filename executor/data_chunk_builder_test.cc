#include "executor/data_chunk_builder.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::backfill::testing::DataChunkEq;
using ::backfill::testing::DataChunkFromPretty;

TEST(DataChunkBuilderTest, ReturnsAFullChunkAtCapacity) {
  DataChunkBuilder builder({DataType::kInt64, DataType::kVarchar}, 2);
  EXPECT_EQ(builder.capacity(), 2u);
  EXPECT_TRUE(builder.empty());
  EXPECT_FALSE(builder.Append(Row{int64_t{1}, std::string("a")}).has_value());
  EXPECT_EQ(builder.num_rows(), 1u);
  std::optional<DataChunk> full = builder.Append(Row{int64_t{2}, Datum()});
  ASSERT_TRUE(full.has_value());
  EXPECT_THAT(*full, DataChunkEq(DataChunkFromPretty(" I T\n 1 a\n 2 .")));
  EXPECT_TRUE(builder.empty());
  EXPECT_FALSE(builder.Finish().has_value());
}

TEST(DataChunkBuilderTest, FinishReturnsTheRestAndResets) {
  DataChunkBuilder builder({DataType::kInt32}, 3);
  for (int32_t i = 0; i < 7; ++i) {
    std::optional<DataChunk> full = builder.Append(Row{i});
    EXPECT_EQ(full.has_value(), i == 2 || i == 5);
  }
  std::optional<DataChunk> rest = builder.Finish();
  ASSERT_TRUE(rest.has_value());
  EXPECT_THAT(*rest, DataChunkEq(DataChunkFromPretty(" i\n 6")));
  EXPECT_FALSE(builder.Finish().has_value());
  EXPECT_FALSE(builder.Append(Row{int32_t{9}}).has_value());
  EXPECT_THAT(*builder.Finish(), DataChunkEq(DataChunkFromPretty(" i\n 9")));
}

TEST(DataChunkBuilderTest, AppendColumnsTakesWhatFitsBesideAppend) {
  DataChunkBuilder builder({DataType::kInt32, DataType::kVarchar}, 4);
  EXPECT_FALSE(builder.Append(Row{int32_t{0}, std::string("a")}).has_value());
  EXPECT_EQ(builder.room(), 3u);
  std::vector<size_t> asked;
  int32_t next = 1;
  auto fill = [&](size_t n, absl::Span<std::vector<Datum>> columns) {
    asked.push_back(n);
    const size_t k = n > 1 ? n - 1 : n;  // a source that gives less
    for (size_t r = 0; r < k; ++r, ++next) {
      columns[0].push_back(next);
      columns[1].push_back(next % 2 == 0 ? Datum() : Datum(std::string("b")));
    }
    return k;
  };
  EXPECT_EQ(builder.AppendColumns(10, fill), 2u);  // asked min(10, room 3)
  EXPECT_FALSE(builder.full());
  EXPECT_EQ(builder.AppendColumns(0, fill), 0u);  // fill not called
  EXPECT_EQ(builder.AppendColumns(5, fill), 1u);
  EXPECT_TRUE(builder.full());
  EXPECT_EQ(builder.AppendColumns(5, fill), 0u);
  EXPECT_THAT(asked, ::testing::ElementsAre(3u, 1u));
  std::optional<DataChunk> chunk = builder.Finish();
  ASSERT_TRUE(chunk.has_value());
  EXPECT_THAT(*chunk,
              DataChunkEq(DataChunkFromPretty(" i T\n 0 a\n 1 b\n 2 .\n 3 b")));
  EXPECT_EQ(builder.room(), 4u);
}

TEST(DataChunkBuilderTest, ZeroColumnsStillCountRows) {
  DataChunkBuilder builder({}, 2);
  EXPECT_FALSE(builder.Append(Row{}).has_value());
  std::optional<DataChunk> full = builder.Append(Row{});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->capacity(), 2u);
  EXPECT_EQ(full->num_columns(), 0);
}

}  // namespace
}  // namespace backfill
