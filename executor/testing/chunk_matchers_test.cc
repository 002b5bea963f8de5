#include "executor/testing/chunk_matchers.h"

#include <cstdint>

#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ChunkEqTest, ComparesVisibleRowsOnly) {
  StreamChunk marked = StreamChunkFromPretty(" I T\n + 1 a\n - 2 b D\n + 3 c");
  EXPECT_THAT(marked, ChunkEq(StreamChunkFromPretty(" I T\n + 1 a\n + 3 c")));
  EXPECT_THAT(
      marked,
      Not(ChunkEq(StreamChunkFromPretty(" I T\n + 1 a\n - 2 b\n + 3 c"))));
}

TEST(ChunkEqTest, OpsTypesAndValuesMatter) {
  StreamChunk chunk = StreamChunkFromPretty(" I\n + 1");
  EXPECT_THAT(chunk, Not(ChunkEq(StreamChunkFromPretty(" I\n - 1"))));
  EXPECT_THAT(chunk, Not(ChunkEq(StreamChunkFromPretty(" i\n + 1"))));
  EXPECT_THAT(chunk, Not(ChunkEq(StreamChunkFromPretty(" I\n + 2"))));
  EXPECT_THAT(chunk, Not(ChunkEq(StreamChunkFromPretty(" I\n + ."))));
  EXPECT_THAT(StreamChunkFromPretty(" D\n + 1.50"),
              ChunkEq(StreamChunkFromPretty(" D\n + 1.5")));
}

TEST(ChunkEqTest, ExplainsTheFirstDifference) {
  StreamChunk expected = StreamChunkFromPretty(" I T\n + 1 a\n - 2 b");
  StreamChunk actual = StreamChunkFromPretty(" I T\n + 1 a\n - 2 x");
  const std::string diff = StreamChunkDiff(expected, actual);
  EXPECT_THAT(diff, HasSubstr("visible row 1 differs: expected \"- 2 b\", "
                              "actual \"- 2 x\""));
  EXPECT_THAT(diff, HasSubstr("expected:\nI T\n+ 1 a\n- 2 b\n"));
  EXPECT_THAT(StreamChunkDiff(expected, StreamChunkFromPretty(" I T\n + 1 a")),
              HasSubstr("missing visible row 1: - 2 b"));
  EXPECT_THAT(StreamChunkDiff(StreamChunkFromPretty(" I T\n + 1 a"), expected),
              HasSubstr("unexpected extra visible row 1: - 2 b"));
  EXPECT_THAT(StreamChunkDiff(expected, StreamChunkFromPretty(" I\n + 1")),
              HasSubstr("column types differ"));
  EXPECT_EQ(StreamChunkDiff(expected, expected), "");
}

TEST(DataChunkEqTest, Compares) {
  EXPECT_THAT(DataChunkFromPretty(" I\n 1\n 2 D"),
              DataChunkEq(DataChunkFromPretty(" I\n 1")));
  EXPECT_THAT(DataChunkFromPretty(" I\n 1"),
              Not(DataChunkEq(DataChunkFromPretty(" I\n 2"))));
  EXPECT_THAT(DataChunkDiff(DataChunkFromPretty(" I\n 1"),
                            DataChunkFromPretty(" I\n 2")),
              HasSubstr("expected \"1\", actual \"2\""));
}

TEST(MessageMatchersTest, MatchTheirKindOnly) {
  const Message chunk(StreamChunkFromPretty(" I\n + 1"));
  const Message barrier(TestBarrier(3));
  const Message watermark(Watermark{
      .column_index = 1, .type = DataType::kInt64, .value = int64_t{7}});

  EXPECT_THAT(chunk,
              MessageIsChunk(ChunkEq(StreamChunkFromPretty(" I\n + 1"))));
  EXPECT_THAT(barrier, Not(MessageIsChunk(::testing::_)));

  EXPECT_THAT(barrier, MessageIsBarrier());
  EXPECT_THAT(chunk, Not(MessageIsBarrier()));
  EXPECT_THAT(barrier, MessageIsBarrierAt(3));
  EXPECT_THAT(barrier, Not(MessageIsBarrierAt(4)));
  EXPECT_THAT(barrier, MessageIsBarrierThat(::testing::Field(
                           &Barrier::kind, BarrierKind::kCheckpoint)));

  EXPECT_THAT(watermark, MessageIsWatermark(1, int64_t{7}));
  EXPECT_THAT(watermark, Not(MessageIsWatermark(0, int64_t{7})));
  EXPECT_THAT(watermark, Not(MessageIsWatermark(1, int64_t{8})));
  EXPECT_THAT(chunk, Not(MessageIsWatermark(1, int64_t{7})));
}

TEST(PrintToTest, UsesTheLiteralFormat) {
  EXPECT_EQ(::testing::PrintToString(StreamChunkFromPretty(" I\n + 1")),
            "\nI\n+ 1\n");
  EXPECT_EQ(::testing::PrintToString(Op::kUpdateDelete), "U-");
  EXPECT_THAT(::testing::PrintToString(TestBarrier(2)),
              HasSubstr("curr 2, prev 1"));
}

}  // namespace
}  // namespace testing
}  // namespace backfill
