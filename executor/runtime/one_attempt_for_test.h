// RunOneAttemptForTest: (testonly) one attempt of a job as RunStreamingJob
// makes it, with the driver of the caller's choice: define the job, load its
// initial rows, create the coordinator, build the graph, drive it, record
// the attempt's end, then verify the view and read the saved job state.
//
//   OneAttempt run = RunOneAttemptForTest(
//       *store, options, clock, [&](JobGraph& g, BarrierCoordinator& c) {
//         return RunThreaded(g, c, options.barrier_interval, clock);
//       });
//   EXPECT_TRUE(run.verdict->consistent);
//
// Thread-safety: as the driver's.
#ifndef EXECUTOR_RUNTIME_ONE_ATTEMPT_FOR_TEST_H_
#define EXECUTOR_RUNTIME_ONE_ATTEMPT_FOR_TEST_H_

#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/streaming_job_options.h"
#include "executor/runtime/verifier.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct OneAttempt {
  // The first error: the set-up's, the driver's, the verification's.
  absl::Status status;
  JobResult result;
  // Set when the driver succeeded.
  std::optional<ViewVerdict> verdict;
  std::optional<SavedJob> saved;
};

using DriveFn = std::function<absl::Status(JobGraph&, BarrierCoordinator&)>;

// `before_attempt` (optional) runs after the load, before the coordinator
// (to prepare the store, e.g. plant a conflicting view row).
OneAttempt RunOneAttemptForTest(
    StateStore& store, const StreamingJobOptions& options, Clock& clock,
    const DriveFn& drive,
    const std::function<absl::Status(StateStore&)>& before_attempt = {});

// Writes the first committed upstream row into the view table (as the view
// would hold it) and checkpoints: the view's first insert of that key then
// fails (a consistent materialize refuses a duplicate key).
absl::Status PlantConflictingViewRow(StateStore& store,
                                     const StreamingJobOptions& options);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_ONE_ATTEMPT_FOR_TEST_H_
