#include "executor/barrier.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;

Barrier MakeBarrier(BarrierKind kind,
                    std::shared_ptr<const Mutation> mutation) {
  return Barrier{.epoch = EpochPair{Epoch(3), Epoch(2)},
                 .kind = kind,
                 .mutation = std::move(mutation)};
}

TEST(BarrierTest, IsCheckpoint) {
  EXPECT_TRUE(MakeBarrier(BarrierKind::kCheckpoint, nullptr).is_checkpoint());
  EXPECT_FALSE(MakeBarrier(BarrierKind::kBarrier, nullptr).is_checkpoint());
  EXPECT_FALSE(MakeBarrier(BarrierKind::kInitial, nullptr).is_checkpoint());
}

TEST(BarrierTest, IsStopFor) {
  Barrier stop = MakeBarrier(
      BarrierKind::kCheckpoint,
      std::make_shared<const Mutation>(StopMutation{.actors = {7, 9}}));
  EXPECT_TRUE(stop.IsStopFor(7));
  EXPECT_TRUE(stop.IsStopFor(9));
  EXPECT_FALSE(stop.IsStopFor(8));
  EXPECT_FALSE(MakeBarrier(BarrierKind::kCheckpoint, nullptr).IsStopFor(7));
  EXPECT_FALSE(MakeBarrier(BarrierKind::kCheckpoint,
                           std::make_shared<const Mutation>(PauseMutation{}))
                   .IsStopFor(7));
  // An Update stops the actors it drops (a rescale's old actors).
  Barrier update = MakeBarrier(
      BarrierKind::kCheckpoint,
      std::make_shared<const Mutation>(UpdateMutation{.dropped_actors = {3}}));
  EXPECT_TRUE(update.IsStopFor(3));
  EXPECT_FALSE(update.IsStopFor(4));
}

TEST(BarrierTest, MutationAs) {
  Barrier barrier = MakeBarrier(
      BarrierKind::kInitial, std::make_shared<const Mutation>(
                                 AddMutation{.pause = true,
                                             .backfill_fragments_to_pause = {3},
                                             .added_actors = {7}}));
  const AddMutation* add = barrier.MutationAs<AddMutation>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->pause);
  EXPECT_EQ(barrier.MutationAs<UpdateMutation>(), nullptr);
  EXPECT_EQ(
      MakeBarrier(BarrierKind::kBarrier, nullptr).MutationAs<AddMutation>(),
      nullptr);
}

TEST(BarrierTest, DebugStrings) {
  EXPECT_EQ(MakeBarrier(BarrierKind::kCheckpoint,
                        std::make_shared<const Mutation>(PauseMutation{}))
                .DebugString(),
            "Barrier{epoch {curr 3, prev 2}, checkpoint, Pause}");
  EXPECT_EQ(MakeBarrier(BarrierKind::kBarrier, nullptr).DebugString(),
            "Barrier{epoch {curr 3, prev 2}, barrier}");
  EXPECT_EQ(MutationDebugString(AddMutation{.pause = false,
                                            .backfill_fragments_to_pause = {3},
                                            .added_actors = {7, 8}}),
            "Add{pause=false, backfill_fragments_to_pause=[3], "
            "added_actors=[7, 8]}");
  EXPECT_EQ(MutationDebugString(
                ThrottleMutation{.rate_limits = {{3, 100}, {4, std::nullopt}}}),
            "Throttle{3: 100, 4: disabled}");
  EXPECT_EQ(MutationDebugString(ResumeMutation{}), "Resume");
  EXPECT_EQ(MutationDebugString(StartFragmentBackfillMutation{{1, 2}}),
            "StartFragmentBackfill{[1, 2]}");
  EXPECT_EQ(MutationDebugString(StopMutation{{5}}), "Stop{[5]}");
  EXPECT_THAT(MutationDebugString(UpdateMutation{
                  .dropped_actors = {1}, .vnode_assignments = {{2, {0, 5}}}}),
              HasSubstr("vnode_assignments={2: [0, 5]}"));
  EXPECT_THAT(
      MutationDebugString(UpdateMutation{
          .dropped_actors = {100},
          .dispatchers = {{1,
                           DispatcherUpdate{.added_downstream_actors = {101},
                                            .removed_downstream_actors = {100},
                                            .vnode_owners = {101}}}},
          .merges = {{2, MergeUpdate{.added_upstream_actors = {101},
                                     .removed_upstream_actors = {100}}}}}),
      HasSubstr("dispatchers={1: +[101] -[100]}, merges={2: +[101] -[100]}"));
  Barrier passed = MakeBarrier(BarrierKind::kInitial, nullptr);
  passed.passed_actors = {4, 5};
  EXPECT_THAT(passed.DebugString(), HasSubstr("passed [4, 5]"));
}

}  // namespace
}  // namespace backfill
