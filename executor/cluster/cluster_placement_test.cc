// The fence rule (WorkersHoldingBarrier): which workers held up a barrier
// that was not collected in time, judged on what the coordinator's process
// saw of each.
#include "executor/cluster/cluster_placement.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr absl::string_view kTimedOut = "its actors did not emit barrier 7";

std::vector<std::pair<size_t, std::string>> Holding(
    const std::vector<WorkerBarrierEvidence>& workers) {
  return WorkersHoldingBarrier(workers, kTimedOut, absl::Milliseconds(2500));
}

// The only worker, or every worker, is found holding when each was sent the
// barrier or stopped reading: nothing points at this process.
TEST(WorkersHoldingBarrierTest, ASingleWorkerOrEveryWorkerMayHoldIt) {
  EXPECT_THAT(Holding({{.worker = 0, .stopped_reading = true}}),
              ElementsAre(Pair(0u, HasSubstr("stopped reading their input "
                                             "for at least 2.5s"))));
  EXPECT_THAT(Holding({{.worker = 0, .received = true}}),
              ElementsAre(Pair(0u, HasSubstr("reached every input at least "
                                             "2.5s before"))));
  EXPECT_THAT(Holding({{.worker = 0, .received = true},
                       {.worker = 1, .stopped_reading = true}}),
              ElementsAre(Pair(0u, HasSubstr(kTimedOut)),
                          Pair(1u, HasSubstr(kTimedOut))));
}

// A worker that emitted the barrier holds nothing, whatever else is seen.
TEST(WorkersHoldingBarrierTest, AWorkerThatEmittedItHoldsNothing) {
  EXPECT_THAT(Holding({{.worker = 0,
                        .emitted = true,
                        .stopped_reading = true,
                        .received = true},
                       {.worker = 1, .received = true}}),
              ElementsAre(Pair(1u, HasSubstr(kTimedOut))));
}

// Not sent the barrier (this process's source, or its dispatcher blocked on
// another worker, holds it back), or its output unread by this process (the
// view or merge here stalls it): not the worker's fault.
TEST(WorkersHoldingBarrierTest, AStallThisProcessMayCauseIsNotAWorkers) {
  EXPECT_THAT(Holding({{.worker = 0}, {.worker = 1}}), IsEmpty());
  EXPECT_THAT(
      Holding({{.worker = 0, .received = true, .output_unread = true},
               {.worker = 1, .stopped_reading = true, .output_unread = true}}),
      IsEmpty());
  // The dispatcher blocks on worker 1, which stopped reading; worker 2,
  // served after it, was never sent the barrier.
  EXPECT_THAT(Holding({{.worker = 0, .emitted = true},
                       {.worker = 1, .stopped_reading = true},
                       {.worker = 2}}),
              ElementsAre(Pair(1u, HasSubstr("stopped reading"))));
}

}  // namespace
}  // namespace backfill
