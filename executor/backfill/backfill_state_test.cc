#include "executor/backfill/backfill_state.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Row Pos(int64_t value) { return Row{value}; }

bool IsInProgress(const VnodeProgress* progress, int64_t pos, uint64_t count) {
  return progress != nullptr &&
         ProgressEquals(*progress, InProgress{Pos(pos), count});
}

TEST(BackfillStateTest, EqualityWithAndWithoutRowCounts) {
  EXPECT_TRUE(ProgressEquals(NotStarted{}, NotStarted{}));
  EXPECT_TRUE(ProgressEquals(InProgress{Pos(3), 2}, InProgress{Pos(3), 2}));
  EXPECT_FALSE(ProgressEquals(InProgress{Pos(3), 2}, InProgress{Pos(3), 1}));
  EXPECT_FALSE(ProgressEquals(Completed{Pos(3), 2}, Completed{Pos(3), 1}));
  EXPECT_FALSE(ProgressEquals(InProgress{Pos(3), 2}, Completed{Pos(3), 2}));

  EXPECT_TRUE(ProgressSamePosition(NotStarted{}, NotStarted{}));
  EXPECT_TRUE(
      ProgressSamePosition(InProgress{Pos(3), 2}, InProgress{Pos(3), 0}));
  EXPECT_TRUE(ProgressSamePosition(Completed{Pos(3), 2}, Completed{Pos(3), 0}));
  EXPECT_FALSE(
      ProgressSamePosition(InProgress{Pos(3), 2}, InProgress{Pos(4), 2}));
  EXPECT_FALSE(
      ProgressSamePosition(Completed{Pos(3), 2}, Completed{Pos(4), 2}));
  EXPECT_FALSE(
      ProgressSamePosition(InProgress{Pos(3), 2}, Completed{Pos(3), 2}));
  EXPECT_FALSE(ProgressSamePosition(NotStarted{}, InProgress{Pos(3), 0}));
}

TEST(BackfillStateTest, Transitions) {
  BackfillState state({{0, NotStarted{}}, {1, NotStarted{}}});
  EXPECT_FALSE(state.HasProgress());
  EXPECT_FALSE(state.IsCompletelyFinished());
  EXPECT_THAT(state.UpdateProgress(0, Pos(5), 3), IsOk());
  EXPECT_TRUE(IsInProgress(state.Get(0), 5, 3));
  EXPECT_TRUE(state.HasProgress());
  EXPECT_THAT(state.UpdateProgress(0, Pos(9), 2), IsOk());
  EXPECT_TRUE(IsInProgress(state.Get(0), 9, 5));
  EXPECT_EQ(state.total_row_count(), 5u);

  EXPECT_THAT(state.FinishProgress(0, 1), IsOk());
  EXPECT_TRUE(ProgressEquals(*state.Get(0), Completed{Pos(9), 5}));
  EXPECT_THAT(state.FinishProgress(1, 1), IsOk());
  EXPECT_TRUE(ProgressEquals(*state.Get(1), Completed{Row{Datum()}, 0}));
  EXPECT_TRUE(state.IsCompletelyFinished());
  EXPECT_FALSE(state.HasProgress());
  // Finishing again changes nothing.
  EXPECT_THAT(state.FinishProgress(0, 1), IsOk());
  EXPECT_TRUE(ProgressEquals(*state.Get(0), Completed{Pos(9), 5}));
  EXPECT_EQ(state.total_row_count(), 5u);
}

TEST(BackfillStateTest, UpdateOfCompletedOrUnownedVnodeIsAnError) {
  BackfillState state({{3, Completed{Pos(1), 1}}});
  EXPECT_THAT(state.UpdateProgress(3, Pos(2), 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Completed vnode: vnode 3")));
  EXPECT_THAT(state.UpdateProgress(4, Pos(2), 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not owned: vnode 4")));
  EXPECT_THAT(state.FinishProgress(4, 1),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(state.Get(4), nullptr);
  EXPECT_TRUE(state.IsCompletelyFinished());
}

// A loaded count at the top of the persisted range (corrupt or absurd data)
// saturates instead of wrapping past what EncodeProgressValue can write.
// Found by backfill_state_fuzz (an assertion failure there).
TEST(BackfillStateTest, RowCountsSaturate) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  BackfillState state({{0, InProgress{Pos(1), kMax - 1}},
                       {1, InProgress{Pos(1), kMax}},
                       {2, NotStarted{}}});
  EXPECT_THAT(state.UpdateProgress(0, Pos(2), 5), IsOk());
  EXPECT_TRUE(IsInProgress(state.Get(0), 2, kMax));
  EXPECT_THAT(state.UpdateProgress(1, Pos(2), ~uint64_t{0}), IsOk());
  EXPECT_TRUE(IsInProgress(state.Get(1), 2, kMax));
  EXPECT_THAT(state.UpdateProgress(2, Pos(2), ~uint64_t{0}), IsOk());
  EXPECT_TRUE(IsInProgress(state.Get(2), 2, kMax));
  EXPECT_EQ(state.total_row_count(), ~uint64_t{0});
  for (const ProgressWrite& write : state.PendingWrites()) {
    EXPECT_TRUE(
        DatumsEqual(write.new_value.back(), static_cast<int64_t>(kMax)));
  }
}

TEST(BackfillStateTest, FinishAllAndOwnedVnodes) {
  BackfillState state({{7, InProgress{Row{int64_t{1}, std::string("a")}, 4}},
                       {2, NotStarted{}},
                       {5, Completed{Row{Datum(), Datum()}, 0}}});
  EXPECT_THAT(state.owned_vnodes(), ElementsAre(2, 5, 7));
  EXPECT_EQ(state.num_vnodes(), 3u);
  state.FinishAll(2);
  EXPECT_TRUE(state.IsCompletelyFinished());
  EXPECT_TRUE(
      ProgressEquals(*state.Get(2), Completed{Row{Datum(), Datum()}, 0}));
  EXPECT_EQ(state.total_row_count(), 4u);
}

TEST(BackfillStateTest, WhatNeedsWriting) {
  BackfillState state({{0, NotStarted{}},
                       {1, NotStarted{}},
                       {2, InProgress{Pos(10), 10}},
                       {3, Completed{Pos(4), 4}}});
  // Nothing changed; NotStarted is never written.
  EXPECT_THAT(state.ChangedVnodes(), IsEmpty());
  EXPECT_THAT(state.PendingWrites(), IsEmpty());

  ASSERT_THAT(state.UpdateProgress(1, Pos(3), 3), IsOk());
  ASSERT_THAT(state.UpdateProgress(2, Pos(12), 2), IsOk());
  EXPECT_THAT(state.ChangedVnodes(), ElementsAre(1, 2));
  std::vector<ProgressWrite> writes = state.PendingWrites();
  ASSERT_EQ(writes.size(), 2u);
  // First write of vnode 1: an insert.
  EXPECT_EQ(writes[0].vnode, 1);
  EXPECT_FALSE(writes[0].old_value.has_value());
  EXPECT_TRUE(
      RowsEqual(writes[0].new_value, Row{int64_t{3}, false, int64_t{3}}));
  // Vnode 2 was loaded InProgress: an update from the loaded value.
  EXPECT_EQ(writes[1].vnode, 2);
  ASSERT_TRUE(writes[1].old_value.has_value());
  EXPECT_TRUE(
      RowsEqual(*writes[1].old_value, Row{int64_t{10}, false, int64_t{10}}));
  EXPECT_TRUE(
      RowsEqual(writes[1].new_value, Row{int64_t{12}, false, int64_t{12}}));

  for (const ProgressWrite& write : writes) state.MarkCommitted(write.vnode);
  EXPECT_THAT(state.ChangedVnodes(), IsEmpty());
  EXPECT_TRUE(IsInProgress(state.GetCommitted(1), 3, 3));

  // Same position and count again: nothing to write.
  ASSERT_THAT(state.UpdateProgress(1, Pos(3), 0), IsOk());
  EXPECT_THAT(state.ChangedVnodes(), IsEmpty());

  // Finishing: every vnode except the already Completed one is written once.
  state.FinishAll(1);
  EXPECT_THAT(state.ChangedVnodes(), ElementsAre(0, 1, 2));
  writes = state.PendingWrites();
  EXPECT_FALSE(writes[0].old_value.has_value());  // NotStarted -> insert.
  EXPECT_TRUE(RowsEqual(writes[0].new_value, Row{Datum(), true, int64_t{0}}));
  EXPECT_TRUE(writes[1].old_value.has_value());
  EXPECT_TRUE(
      RowsEqual(writes[2].new_value, Row{int64_t{12}, true, int64_t{12}}));
  for (VirtualNode vnode : state.ChangedVnodes()) state.MarkCommitted(vnode);
  EXPECT_THAT(state.ChangedVnodes(), IsEmpty());
  state.FinishAll(1);
  EXPECT_THAT(state.ChangedVnodes(), IsEmpty());
}

TEST(BackfillStateTest, ProgressDebugString) {
  EXPECT_EQ(ProgressDebugString(NotStarted{}), "NotStarted");
  EXPECT_EQ(ProgressDebugString(InProgress{Pos(5), 17}), "InProgress{(5), 17}");
  EXPECT_EQ(ProgressDebugString(Completed{Row{Datum()}, 0}),
            "Completed{(NULL), 0}");
}

TEST(ProgressValueTest, EncodeLayout) {
  EXPECT_TRUE(RowsEqual(EncodeProgressValue(InProgress{Pos(42), 17}),
                        Row{int64_t{42}, false, int64_t{17}}));
  EXPECT_TRUE(
      RowsEqual(EncodeProgressValue(Completed{Row{Datum(), Datum()}, 0}),
                Row{Datum(), Datum(), true, int64_t{0}}));
}

TEST(ProgressValueTest, RoundTrips) {
  const std::vector<DataType> pk_types = {DataType::kInt64, DataType::kVarchar};
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  for (int i = 0; i < 200; ++i) {
    Row pos = {
        random() % 4 == 0 ? Datum() : Datum(static_cast<int64_t>(random())),
        random() % 4 == 0 ? Datum() : Datum(absl::StrCat(random() % 100))};
    const uint64_t count = random() >> 1;
    VnodeProgress progress = random() % 2 == 0
                                 ? VnodeProgress(InProgress{pos, count})
                                 : VnodeProgress(Completed{pos, count});
    absl::StatusOr<VnodeProgress> decoded =
        DecodeProgressValue(9, EncodeProgressValue(progress), pk_types);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    ASSERT_TRUE(ProgressEquals(*decoded, progress))
        << ProgressDebugString(*decoded) << " vs "
        << ProgressDebugString(progress);
  }
}

TEST(ProgressValueTest, CorruptRowsAreDataLossNamingTheVnode) {
  const std::vector<DataType> pk = {DataType::kInt64};
  auto decode = [&](Row value) { return DecodeProgressValue(77, value, pk); };
  EXPECT_THAT(decode(Row{int64_t{1}, false}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("vnode 77: expected 3 columns")));
  EXPECT_THAT(decode(Row{int64_t{1}, int64_t{2}, false, int64_t{1}}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("got 4")));
  EXPECT_THAT(decode(Row{}), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(decode(Row{int64_t{1}, false, Datum()}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("vnode 77: row_count is NULL")));
  EXPECT_THAT(decode(Row{int64_t{1}, false, int32_t{3}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("row_count is not an INT64")));
  EXPECT_THAT(decode(Row{int64_t{1}, false, int64_t{-1}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("vnode 77: negative row_count -1")));
  EXPECT_THAT(decode(Row{int64_t{1}, Datum(), int64_t{1}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("backfill_finished is NULL")));
  EXPECT_THAT(decode(Row{int64_t{1}, int64_t{0}, int64_t{1}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("backfill_finished is not a BOOLEAN")));
  EXPECT_THAT(decode(Row{std::string("x"), true, int64_t{1}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("pk column 0 is not a INT64")));
  // A NULL pk datum is fine (the finished-with-empty-snapshot placeholder).
  EXPECT_THAT(decode(Row{Datum(), true, int64_t{0}}), IsOk());
}

}  // namespace
}  // namespace backfill
