// ClusterJobState without etcd: the even contiguous split, its changes as
// workers join and leave, and its encoding (and refusal of bytes that break the
// split).
#include "executor/cluster/job_state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterJobState WithVnodes(uint32_t num_vnodes) {
  ClusterJobState state;
  state.num_vnodes = num_vnodes;
  return state;
}

TEST(JobStateTest, SplitsEvenlyAndContiguouslyInRegistrationOrder) {
  ClusterJobState state = WithVnodes(10);
  state.AddWorker("c", 30);
  EXPECT_EQ(state.assignment_version, 1u);
  EXPECT_THAT(state.workers, ElementsAre(WorkerVnodes{"c", 30, 0, 10}));
  state.AddWorker("a", 10);
  state.AddWorker("b", 20);
  EXPECT_EQ(state.assignment_version, 3u);
  EXPECT_THAT(state.workers, ElementsAre(WorkerVnodes{"c", 30, 0, 3},
                                         WorkerVnodes{"a", 10, 3, 6},
                                         WorkerVnodes{"b", 20, 6, 10}));
  // A known id takes its new lease in place; the split stays.
  state.AddWorker("a", 11);
  EXPECT_EQ(state.assignment_version, 4u);
  EXPECT_EQ(*state.Find("a"), (WorkerVnodes{"a", 11, 3, 6}));
  EXPECT_TRUE(state.RemoveWorker("c"));
  EXPECT_FALSE(state.RemoveWorker("c"));
  EXPECT_EQ(state.assignment_version, 5u);
  EXPECT_THAT(state.workers, ElementsAre(WorkerVnodes{"a", 11, 0, 5},
                                         WorkerVnodes{"b", 20, 5, 10}));
  EXPECT_EQ(state.Find("c"), nullptr);
}

TEST(JobStateTest, MoreWorkersThanVnodesGetEmptyRanges) {
  ClusterJobState state = WithVnodes(2);
  for (const char* id : {"a", "b", "c"}) state.AddWorker(id, 1);
  EXPECT_THAT(state.workers, ElementsAre(WorkerVnodes{"a", 1, 0, 0},
                                         WorkerVnodes{"b", 1, 0, 1},
                                         WorkerVnodes{"c", 1, 1, 2}));
}

// Each actor runs on the worker holding most of its vnodes: the placement
// follows the assignment as workers join and leave.
TEST(JobStateTest, PlacesActorsOnTheWorkerHoldingMostOfTheirVnodes) {
  ClusterJobState state = WithVnodes(256);
  state.AddWorker("a", 1);
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 3),
              IsOkAndHolds(ElementsAre("a", "a", "a")));
  state.AddWorker("b", 2);
  state.AddWorker("c", 3);
  // Workers [0, 85), [85, 170), [170, 256); actors of 43 vnodes each.
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 6),
              IsOkAndHolds(ElementsAre("a", "a", "b", "b", "c", "c")));
  // Actor 0 [0, 128) holds 85 of a's and 43 of b's; actor 1 [128, 256)
  // 42 of b's and 86 of c's.
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 2),
              IsOkAndHolds(ElementsAre("a", "c")));
  state.AddWorker("d", 4);
  // Workers of 64; actors [0,43) [43,86) [86,129) [129,172) [172,214)
  // [214,256): actor 1 holds 21 of a's and 22 of b's, actor 4 20 of c's
  // and 22 of d's.
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 6),
              IsOkAndHolds(ElementsAre("a", "b", "b", "c", "d", "d")));
  // A tie goes to the first in the state's order.
  ClusterJobState two = WithVnodes(4);
  two.AddWorker("x", 1);
  two.AddWorker("y", 2);
  EXPECT_THAT(PlaceActorsByAssignment(two, 4, 1),
              IsOkAndHolds(ElementsAre("x")));
  EXPECT_TRUE(state.RemoveWorker("a"));
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 3),
              IsOkAndHolds(ElementsAre("b", "c", "d")));
}

TEST(JobStateTest, PlacementRefusesAMismatchedOrEmptyAssignment) {
  ClusterJobState state = WithVnodes(256);
  EXPECT_THAT(
      PlaceActorsByAssignment(state, 256, 2),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no worker")));
  state.AddWorker("a", 1);
  EXPECT_THAT(PlaceActorsByAssignment(state, 16, 2),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("splits 256 vnodes, but the table has 16")));
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(PlaceActorsByAssignment(state, 256, 257),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JobStateTest, EncodesAndRefusesBrokenSplits) {
  ClusterJobState state = WithVnodes(8);
  state.AddWorker("a", 1);
  state.AddWorker("b", 2);
  EXPECT_THAT(ClusterJobState::Decode(state.Encode(), "k"),
              IsOkAndHolds(state));
  ClusterJobState gap = state;
  gap.workers[1].first_vnode = 5;
  EXPECT_THAT(ClusterJobState::Decode(gap.Encode(), "jobs/1/state"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("worker 'b' has vnodes [5, 8)")));
  ClusterJobState short_split = state;
  short_split.workers[1].end_vnode = 7;
  EXPECT_THAT(
      ClusterJobState::Decode(short_split.Encode(), "k"),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("end at 7 of 8")));
  EXPECT_THAT(
      ClusterJobState::Decode("\xff\xff", "k"),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("does not decode")));
}

}  // namespace
}  // namespace backfill
