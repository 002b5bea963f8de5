#include "executor/stream_chunk.h"

#include <cstdint>
#include <string>

#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::backfill::testing::StreamChunkFromPretty;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(StreamChunkTest, OpNames) {
  EXPECT_EQ(OpName(Op::kInsert), "+");
  EXPECT_EQ(OpName(Op::kDelete), "-");
  EXPECT_EQ(OpName(Op::kUpdateDelete), "U-");
  EXPECT_EQ(OpName(Op::kUpdateInsert), "U+");
}

TEST(StreamChunkTest, FromRowsAndAccessors) {
  StreamChunk chunk =
      StreamChunk::FromRows({DataType::kInt64}, {Op::kInsert, Op::kDelete},
                            {{int64_t{1}}, {int64_t{2}}});
  EXPECT_EQ(chunk.capacity(), 2u);
  EXPECT_EQ(chunk.cardinality(), 2u);
  EXPECT_EQ(chunk.op(1), Op::kDelete);
  EXPECT_EQ(chunk.num_columns(), 1);
  EXPECT_THAT(chunk.Validate(), IsOk());
}

TEST(StreamChunkTest, ValidPairsAndInvisibleRowsBetweenThem) {
  EXPECT_THAT(StreamChunkFromPretty(" I\n + 1\n U- 2\n U+ 2\n - 3").Validate(),
              IsOk());
  // Invisible rows between the halves of a pair are ignored.
  EXPECT_THAT(
      StreamChunkFromPretty(" I\n U- 2\n + 9 D\n - 8 D\n U+ 2").Validate(),
      IsOk());
  // An invisible half pair does not count.
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 2 D\n + 1").Validate(), IsOk());
  EXPECT_THAT(StreamChunkFromPretty(" I\n + 1\n U+ 2 D").Validate(), IsOk());
  // A fully invisible pair is fine too.
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 1 D\n U+ 2 D").Validate(), IsOk());
  EXPECT_THAT(StreamChunk().Validate(), IsOk());
}

TEST(StreamChunkTest, UpdateInsertWithoutUpdateDelete) {
  EXPECT_THAT(StreamChunkFromPretty(" I\n + 1\n U+ 2").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("U+ without a preceding U-: row 1")));
  EXPECT_THAT(StreamChunkFromPretty(" I\n U+ 2").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("row 0")));
  // The U- is invisible, so the U+ is a half pair.
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 1 D\n U+ 2").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("row 1")));
}

TEST(StreamChunkTest, UpdateDeleteNotFollowedByUpdateInsert) {
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 1\n + 2").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("U- not followed by U+: visible row 1 has op +"
                                 ", U- at row 0")));
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 1\n U- 2\n U+ 2").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("visible row 1 has op U-")));
  EXPECT_THAT(StreamChunkFromPretty(" I\n + 0\n U- 1").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(end of chunk): row 1")));
  // The U+ is invisible: the U- is a half pair.
  EXPECT_THAT(StreamChunkFromPretty(" I\n U- 1\n U+ 2 D").Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(end of chunk): row 0")));
}

TEST(StreamChunkTest, CompactDropsInvisibleRowsAndTheirOps) {
  StreamChunk chunk =
      StreamChunkFromPretty(" I T\n + 1 a D\n U- 2 b\n - 9 z D\n U+ 2 c");
  chunk.Compact();
  EXPECT_EQ(chunk.capacity(), 2u);
  EXPECT_THAT(chunk.ops(), ElementsAre(Op::kUpdateDelete, Op::kUpdateInsert));
  EXPECT_TRUE(RowsEqual(chunk.RowAt(1), Row{int64_t{2}, std::string("c")}));
  EXPECT_THAT(chunk.Validate(), IsOk());
}

TEST(StreamChunkTest, ProjectKeepsOpsAndVisibility) {
  StreamChunk chunk = StreamChunkFromPretty(" I T\n + 1 a D\n - 2 b");
  StreamChunk projected = chunk.Project({1});
  EXPECT_EQ(projected.num_columns(), 1);
  EXPECT_THAT(projected.ops(), ElementsAre(Op::kInsert, Op::kDelete));
  EXPECT_THAT(projected.visibility(), ElementsAre(false, true));
  EXPECT_EQ(std::get<std::string>(projected.column(0).value(1)), "b");
}

TEST(StreamChunkTest, SetOpsAndVisibility) {
  StreamChunk chunk = StreamChunkFromPretty(" I\n U- 1\n U+ 2");
  chunk.SetOps({Op::kDelete, Op::kUpdateInsert});
  chunk.SetVisibility({true, false});
  EXPECT_THAT(chunk.Validate(), IsOk());
  EXPECT_EQ(chunk.cardinality(), 1u);
}

TEST(StreamChunkTest, DebugString) {
  const std::string text =
      StreamChunkFromPretty(" I T\n U- 1 a\n U+ 1 b\n + 2 . D").DebugString();
  EXPECT_THAT(text, HasSubstr("2/3 rows visible"));
  EXPECT_THAT(text, HasSubstr("U- (1, 'a')"));
  EXPECT_THAT(text, HasSubstr("+ (2, NULL) (invisible)"));
}

}  // namespace
}  // namespace backfill
