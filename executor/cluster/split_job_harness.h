// (testonly) A streaming job split over two graphs of one process that
// only the gRPC data exchange connects, standing for two processes: the
// coordinator's graph runs the source, the view and the odd backfill actors
// (101, ...); a second graph, the "worker", runs the even ones (100, 102,
// ...), each attempt anew, over its own store (or the same one). The
// worker's progress and actor ends reach the coordinator directly, as a
// worker process's would be forwarded.
//
//   SplitRun run = RunSplit(store, store,
//   SplitJobOptions(BackfillKind::kArrangement));
#ifndef EXECUTOR_CLUSTER_SPLIT_JOB_HARNESS_H_
#define EXECUTOR_CLUSTER_SPLIT_JOB_HARNESS_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/streaming_job_options.h"
#include "storage/state_store.h"

namespace backfill {

// A 4000-row table over 16 vnodes, parallelism 3, a live upstream with
// primary-key updates, a fixed rate limit, checkpoints every 2nd barrier.
StreamingJobOptions SplitJobOptions(BackfillKind kind);

struct SplitRun {
  absl::StatusOr<JobResult> result = absl::UnknownError("not run");
  // Per attempt: the actors each side ran.
  std::vector<size_t> host_actors;
  std::vector<size_t> worker_actors;
};

// Runs the job: the coordinator's graph over `host_store`, the worker's over
// `worker_store` (the same store or another process's view of it). The
// first `broken_attempts` attempts lose the worker's exchange server after
// `break_after`.
SplitRun RunSplit(StateStore& host_store, StateStore& worker_store,
                  const StreamingJobOptions& options, int broken_attempts = 0,
                  absl::Duration break_after = absl::ZeroDuration());

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_SPLIT_JOB_HARNESS_H_
