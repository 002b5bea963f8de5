#include "executor/backfill/marking.h"

#include <cstdint>
#include <string>
#include <vector>

#include "executor/backfill/backfill_state.h"
#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ChunkEq;
using ::backfill::testing::StatusIs;
using ::backfill::testing::StreamChunkFromPretty;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The table's distribution: vnode = dist key (pk column 0) modulo 4; NULL
// goes to vnode 0.
VirtualNode VnodeOfFirstPkColumn(RowView pk) {
  if (IsNull(pk[0])) return 0;
  return static_cast<VirtualNode>(std::get<int64_t>(pk[0]) % 4);
}

const std::vector<OrderType> kAscAsc = {OrderType::Ascending(),
                                        OrderType::Ascending()};

// S2 = [k, v, payload], pk = (k, v), dist key = k.
TEST(MarkChunkByVnodeTest, TruthTableAcrossTheThreeStates) {
  BackfillState state({{0, Completed{Row{int64_t{0}, int64_t{0}}, 1}},
                       {1, NotStarted{}},
                       {2, InProgress{Row{int64_t{2}, int64_t{10}}, 5}},
                       {3, InProgress{Row{int64_t{7}, int64_t{0}}, 5}}});
  StreamChunk chunk = StreamChunkFromPretty(R"(
      I  I  T
      +  0  99 completed
      -  4  -5 completed
      +  1  1  not-started
      -  5  1  not-started
      +  2  9  before
      -  2  10 equal
      +  2  11 after
      +  6  0  later-key
      +  3  5  k-before-pos
      +  7  0  k-equal
      +  11 0  k-after)");
  absl::StatusOr<StreamChunk> marked =
      MarkChunkByVnode(chunk, {0, 1}, kAscAsc, VnodeOfFirstPkColumn, state);
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_THAT(marked->visibility(),
              ElementsAre(true, true, false, false, true, true, false, false,
                          true, true, false));
  EXPECT_EQ(marked->ops(), chunk.ops());
}

// One pk column, everything in vnode 0 at InProgress{pos}.
struct OrderCase {
  OrderType order;
  Datum pos;
  // Visibility of the rows 4, 5, 6, NULL.
  std::vector<bool> expected;
};

TEST(MarkChunkByVnodeTest, PkOrderDirectionAndNullPlacement) {
  const std::vector<OrderCase> cases = {
      {OrderType::Ascending(), int64_t{5}, {true, true, false, false}},
      {OrderType::AscendingNullsFirst(), int64_t{5}, {true, true, false, true}},
      {OrderType::Descending(), int64_t{5}, {false, true, true, true}},
      {OrderType::DescendingNullsLast(),
       int64_t{5},
       {false, true, true, false}},
      // Position NULL: with NULLS LAST it is after everything.
      {OrderType::Ascending(), Datum(), {true, true, true, true}},
      {OrderType::AscendingNullsFirst(), Datum(), {false, false, false, true}},
      {OrderType::Descending(), Datum(), {false, false, false, true}},
      {OrderType::DescendingNullsLast(), Datum(), {true, true, true, true}},
  };
  StreamChunk chunk = StreamChunkFromPretty(" I\n + 4\n + 5\n - 6\n + .");
  for (const OrderCase& c : cases) {
    SCOPED_TRACE(c.order.DebugString() + " pos " + DatumDebugString(c.pos));
    BackfillState state({{0, InProgress{Row{c.pos}, 1}}});
    const std::vector<OrderType> orders = {c.order};
    absl::StatusOr<StreamChunk> marked = MarkChunkByVnode(
        chunk, {0}, orders, [](RowView) -> VirtualNode { return 0; }, state);
    ASSERT_TRUE(marked.ok()) << marked.status();
    EXPECT_EQ(marked->visibility(), c.expected);
  }
}

TEST(MarkChunkByVnodeTest, MixedOrdersCompareColumnByColumn) {
  // pk (k ASC, v DESC): (1, 5) is the position; (1, 6) sorts before it.
  BackfillState state({{1, InProgress{Row{int64_t{1}, int64_t{5}}, 1}}});
  const std::vector<OrderType> orders = {OrderType::Ascending(),
                                         OrderType::Descending()};
  StreamChunk chunk = StreamChunkFromPretty(" I I\n + 1 6\n + 1 5\n + 1 4");
  absl::StatusOr<StreamChunk> marked =
      MarkChunkByVnode(chunk, {0, 1}, orders, VnodeOfFirstPkColumn, state);
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_THAT(marked->visibility(), ElementsAre(true, true, false));
}

// pk (v2, v1), stream key v1: the halves of an update can lie on different
// sides of the position. Dist key = v2 here (pk column 0), vnode 0 for all.
TEST(MarkChunkByVnodeTest, TheFourUpdatePairCases) {
  BackfillState state({{0, InProgress{Row{int64_t{100}, int64_t{0}}, 1}}});
  auto mark = [&](const StreamChunk& chunk) {
    return MarkChunkByVnode(
        chunk, {1, 0}, kAscAsc, [](RowView) -> VirtualNode { return 0; },
        state);
  };
  // Both halves sent: unchanged.
  EXPECT_THAT(*mark(StreamChunkFromPretty(" I I\n U- 1 50\n U+ 1 60")),
              ChunkEq(StreamChunkFromPretty(" I I\n U- 1 50\n U+ 1 60")));
  // Neither sent: both hidden.
  absl::StatusOr<StreamChunk> hidden =
      mark(StreamChunkFromPretty(" I I\n U- 1 150\n U+ 1 160"));
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(hidden->cardinality(), 0u);
  EXPECT_THAT(hidden->ops(), ElementsAre(Op::kUpdateDelete, Op::kUpdateInsert));
  // Old row sent, new row beyond the position: the U- becomes a Delete.
  absl::StatusOr<StreamChunk> deleted =
      mark(StreamChunkFromPretty(" I I\n U- 1 50\n U+ 1 150"));
  ASSERT_TRUE(deleted.ok());
  EXPECT_THAT(deleted->ops(), ElementsAre(Op::kDelete, Op::kUpdateInsert));
  EXPECT_THAT(deleted->visibility(), ElementsAre(true, false));
  EXPECT_THAT(*deleted, ChunkEq(StreamChunkFromPretty(" I I\n - 1 50")));
  // Old row beyond the position, new row sent: the U+ becomes an Insert.
  absl::StatusOr<StreamChunk> inserted =
      mark(StreamChunkFromPretty(" I I\n U- 1 150\n U+ 1 50"));
  ASSERT_TRUE(inserted.ok());
  EXPECT_THAT(inserted->ops(), ElementsAre(Op::kUpdateDelete, Op::kInsert));
  EXPECT_THAT(*inserted, ChunkEq(StreamChunkFromPretty(" I I\n + 1 50")));
  // The input chunk is not modified.
}

TEST(MarkChunkByVnodeTest, InvisibleInputRowsStayInvisibleAndDoNotBreakPairs) {
  BackfillState state({{0, Completed{Row{int64_t{0}}, 0}}});
  StreamChunk chunk =
      StreamChunkFromPretty(" I\n + 4 D\n U- 8\n - 9 D\n U+ 8\n U+ 3 D");
  absl::StatusOr<StreamChunk> marked = MarkChunkByVnode(
      chunk, {0}, {OrderType::Ascending()},
      [](RowView) -> VirtualNode { return 0; }, state);
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_THAT(marked->visibility(),
              ElementsAre(false, true, false, true, false));
}

// After a rescale an actor may own only Completed and NotStarted vnodes: no
// vnode is InProgress, and changes to the Completed ones must still flow.
TEST(MarkChunkByVnodeTest, CompletedVnodesForwardWithoutAnyInProgress) {
  BackfillState state(
      {{0, Completed{Row{int64_t{8}, int64_t{1}}, 3}}, {1, NotStarted{}}});
  ASSERT_FALSE(state.HasProgress());
  StreamChunk chunk = StreamChunkFromPretty(
      " I I T\n + 4 1 a\n + 5 1 b\n - 8 2 c\n U- 12 0 d\n U+ 12 0 e");
  absl::StatusOr<StreamChunk> marked =
      MarkChunkByVnode(chunk, {0, 1}, kAscAsc, VnodeOfFirstPkColumn, state);
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_THAT(*marked,
              ChunkEq(StreamChunkFromPretty(
                  " I I T\n + 4 1 a\n - 8 2 c\n U- 12 0 d\n U+ 12 0 e")));
}

TEST(MarkChunkByVnodeTest, AllNotStartedHidesEverything) {
  BackfillState state({{0, NotStarted{}}, {1, NotStarted{}}});
  absl::StatusOr<StreamChunk> marked =
      MarkChunkByVnode(StreamChunkFromPretty(" I I\n + 4 1\n - 5 1"), {0, 1},
                       kAscAsc, VnodeOfFirstPkColumn, state);
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(marked->cardinality(), 0u);
}

TEST(MarkChunkByVnodeTest, UnownedVnodeIsAnError) {
  BackfillState state({{0, Completed{Row{int64_t{0}, int64_t{0}}, 0}}});
  EXPECT_THAT(MarkChunkByVnode(StreamChunkFromPretty(" I I\n + 4 1\n + 6 1"),
                               {0, 1}, kAscAsc, VnodeOfFirstPkColumn, state),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("row 1, pk (6, 1), vnode 2")));
}

TEST(MarkChunkByVnodeTest, MalformedPairsAreErrorsNotCrashes) {
  BackfillState state({{0, Completed{Row{int64_t{0}}, 0}}});
  auto mark = [&](absl::string_view text) {
    return MarkChunkByVnode(
        StreamChunkFromPretty(text), {0}, {OrderType::Ascending()},
        [](RowView) -> VirtualNode { return 0; }, state);
  };
  EXPECT_THAT(mark(" I\n + 1\n U+ 2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("U+ without a preceding U-: row 1")));
  EXPECT_THAT(mark(" I\n U- 1\n - 2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("U- not followed by U+: row 1 has op -")));
  EXPECT_THAT(mark(" I\n U- 1\n U- 2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("row 1 has op U-")));
  EXPECT_THAT(mark(" I\n + 0\n U- 1"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(end of chunk): row 1")));
}

TEST(NormalizeUnmatchedUpdatesTest, RewritesWithAnyFilter) {
  StreamChunk chunk = StreamChunkFromPretty(
      " I\n U- 1\n U+ 2\n U- 3\n U+ 4\n + 5\n U- 6\n U+ 7\n U- 8\n U+ 9");
  absl::StatusOr<StreamChunk> out = NormalizeUnmatchedUpdates(
      chunk, {true, true, true, false, false, false, true, false, false});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->ops(),
              ElementsAre(Op::kUpdateDelete, Op::kUpdateInsert, Op::kDelete,
                          Op::kUpdateInsert, Op::kInsert, Op::kUpdateDelete,
                          Op::kInsert, Op::kUpdateDelete, Op::kUpdateInsert));
  EXPECT_THAT(*out,
              ChunkEq(StreamChunkFromPretty(" I\n U- 1\n U+ 2\n - 3\n + 7")));
}

// The rule alone over a subset of the rows (the executor's pending rows).
TEST(KeptByProgressTest, OnlyAmongTheGivenRows) {
  BackfillState state({{0, Completed{Row{int64_t{0}, int64_t{0}}, 1}},
                       {1, InProgress{Row{int64_t{5}, int64_t{0}}, 1}},
                       {2, NotStarted{}},
                       {3, Completed{Row{int64_t{0}, int64_t{0}}, 1}}});
  StreamChunk chunk =
      StreamChunkFromPretty(" I I\n + 4 0\n + 1 0\n + 9 0\n + 2 0\n + 3 0");
  const std::vector<bool> among = {true, true, true, true, false};
  const std::vector<VirtualNode> vnodes =
      VnodesOfRows(chunk, {0, 1}, VnodeOfFirstPkColumn);
  EXPECT_THAT(vnodes, ElementsAre(0, 1, 1, 2, 3));
  absl::StatusOr<std::vector<bool>> kept =
      KeptByProgress(chunk, &among, vnodes, {0, 1}, kAscAsc, state);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(*kept, ElementsAre(true, true, false, false, false));
  kept = KeptByProgress(chunk, nullptr, vnodes, {0, 1}, kAscAsc, state);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(*kept, ElementsAre(true, true, false, false, true));
}

// The pair repairs on plain vectors, over the rows that take part: a split
// pair's kept half is rewritten, and so is the other half for the
// complement (what an early release leaves for the barrier).
TEST(RepairUpdatePairsTest, KeptHalfAndTheRestAreRepairedApart) {
  const std::vector<Op> ops = {Op::kUpdateDelete, Op::kUpdateInsert,
                               Op::kInsert, Op::kUpdateDelete,
                               Op::kUpdateInsert};
  const std::vector<bool> rows = {true, true, false, true, true};
  const std::vector<bool> keep = {true, false, false, true, true};
  const std::vector<bool> rest = {false, true, false, false, false};
  absl::StatusOr<std::optional<std::vector<Op>>> kept =
      RepairUpdatePairs(ops, rows, keep);
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->has_value());
  EXPECT_THAT(**kept, ElementsAre(Op::kDelete, Op::kUpdateInsert, Op::kInsert,
                                  Op::kUpdateDelete, Op::kUpdateInsert));
  absl::StatusOr<std::optional<std::vector<Op>>> left =
      RepairUpdatePairs(ops, rows, rest);
  ASSERT_TRUE(left.ok()) << left.status();
  ASSERT_TRUE(left->has_value());
  EXPECT_EQ((**left)[1], Op::kInsert);
  // No pair split: nothing to rewrite.
  absl::StatusOr<std::optional<std::vector<Op>>> none =
      RepairUpdatePairs(ops, rows, rows);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  // Rows left out do not pair: a U- whose U+ is not among them is malformed.
  EXPECT_THAT(RepairUpdatePairs(ops, {true, false, false, false, false},
                                {true, false, false, false, false}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(end of chunk): row 0")));
}

}  // namespace
}  // namespace backfill
