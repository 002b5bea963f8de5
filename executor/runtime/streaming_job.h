// StreamingJob: the small streaming runtime that runs one backfill end to
// end: a DML source over an upstream table, a hash dispatcher, N
// ArrangementBackfillExecutor actors, a merge + materialize actor writing the
// new view, and a barrier coordinator; one thread per actor, bounded
// channels between them. RunStreamingJob puts the parts together:
//
//   streaming_job_options.h  StreamingJobOptions (the one options type)
//   demo/bulk_load.h         the initial rows (demo/: the test/demo inputs)
//   job_graph.h              the actors, built from the options, no threads
//   barrier_coordinator.h    barriers, job state, checkpoints (one attempt)
//   threaded_driver.h        one thread per actor
//   recovery_policy.h        which errors are retried, the back-off
//   verifier.h               the final check: view == table
//
//   StreamingJobOptions options = ...;   // table, workload, parallelism
//   BACKFILL_ASSIGN_OR_RETURN(
//       JobResult result,
//       RunStreamingJob(*store, options, &registry, observer, clock));
//   if (!result.consistent) ...          // view != table
//
// Lifecycle: on a fresh store the initial rows are bulk-loaded and
// checkpointed; then the job starts at {committed + 1, committed} (Initial
// barrier). On a store that already holds the job (a restart after a crash,
// possibly at another parallelism) everything resumes from the last
// checkpoint: the source from its persisted offset, each backfill actor from
// its vnodes' persisted progress; a finished job just keeps the view in sync.
// The coordinator injects a barrier every `barrier_interval` (every
// `checkpoint_frequency`-th a checkpoint, which commits all tables in one
// atomic write), delivers the scenario's mutations, and after the backfill
// finished runs `extra_checkpoints_after_finish` more checkpoints, stops the
// upstream, stops the actors, and compares the view with the table.
// An error (an actor's, a checkpoint's, the bulk load's or the final
// check's reads) tears the graph down and recovers from the last checkpoint:
// after a growing back-off it reopens the store if the caller gave a way to
// (options.reopen_store: a store whose write or sync failed
// refuses further checkpoints until reopened), checks that the reopened
// store still holds every acknowledged checkpoint, and starts a new graph.
// At most `max_recoveries` times; then the last error is returned. DataLoss
// (corrupt bytes) and DeadlineExceeded are never retried.
//
// The coordinator owns the job (executor/runtime/job_state.h): the mutations
// in force (paused, the job-wide rate limit, the parallelism, whether the
// upstream was stopped) and the barriers counted since the view's creation
// are a row of the job-state table, written at every barrier in the same
// epoch as the view, the progress and the source offset, so each checkpoint
// commits all of them. Every attempt (the first, each in-process recovery,
// each restart of the process) builds its actors from the committed row, so
// a recovery or a kill never changes the job's rate, pause state or
// parallelism, and an action that already applied (its barrier committed)
// never fires again; one that had applied after the last checkpoint fires
// again, as the rest of that epoch is redone. On a restart the saved state
// wins over `parallelism` and `rate_limit` below; `overrides` (explicit
// settings of this run) apply on top of it at the run's first barrier. All
// actions at one barrier apply in order and the barrier carries one Throttle
// for the net change (see job_state.h). A `rescale` action changes the
// backfill's parallelism online at the next checkpoint barrier: the old
// actors stop there, new ones start from the progress it commits, the
// upstream keeps running, and no recovery happens (barrier_coordinator.h;
// JobResult::rescales, rescale_upstream_blocked_seconds). A reschedule
// (BarrierCoordinator::RequestReschedule, from a driver or a placement: e.g.
// a worker joined a job split over processes) ends the attempt cleanly at
// its next checkpoint barrier, and the next attempt, built and placed anew,
// starts from that checkpoint at once: nothing is redone and it is not a
// recovery (JobResult::reschedules, options.on_reschedule). The job's
// definition (the upstream and view catalogs, the output columns, the internal
// table ids) is saved at creation; a store that holds another job is
// FailedPrecondition naming the first difference, before anything is read or
// written.
#ifndef EXECUTOR_RUNTIME_STREAMING_JOB_H_
#define EXECUTOR_RUNTIME_STREAMING_JOB_H_

#include <functional>

#include "absl/status/statusor.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/streaming_job_options.h"
#include "metrics/registry.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

class BarrierCoordinator;

// Runs the job to completion (see the file comment). `registry` (may be
// null) receives the backfill metrics; `observer` (may be empty) is called
// after every barrier. `store` is used until options.reopen_store replaces
// it. Errors: InvalidArgument for bad options; FailedPrecondition if the
// store holds another job (CheckSameJob); storage and actor errors
// (after `max_recoveries`, at once for DataLoss) with context; DataLoss if
// a reopened store lost an acknowledged checkpoint; DeadlineExceeded.
absl::StatusOr<JobResult> RunStreamingJob(
    StateStore& store, const StreamingJobOptions& options, Registry* registry,
    std::function<void(const JobProgress&)> observer, Clock& clock);

// One attempt's driver: runs `graph` with `coordinator` until the attempt
// completes (OK) or fails (its error): RunThreaded (threaded_driver.h) or
// RunDeterministic (deterministic_driver.h).
using AttemptDriver = std::function<absl::Status(
    JobGraph& graph, BarrierCoordinator& coordinator)>;

// One attempt's placement of a job whose actors are split over processes
// (issue 19): the RemoteActors its graph is built with (the source and the
// view local: the coordinator's process), and the start and end of the
// actors other processes run for the attempt.
class AttemptPlacement : public RemoteActors {
 public:
  // The attempt's graph is built for `state`: start the remote actors of
  // the attempt. Their progress events must reach
  // `graph.in_force().tracker`, their barrier reports `coordinator` (a
  // BarrierListener), and a failure of theirs `coordinator.Fail`. An error
  // fails the attempt.
  virtual absl::Status StartRemote(const JobState& state, JobGraph& graph,
                                   BarrierCoordinator& coordinator) = 0;
  // The attempt's driver returned: end the remote actors (they stopped at
  // the stop barrier, or their exchange edges end them) and return the
  // first error of one that did not stop.
  virtual absl::Status EndRemote() = 0;
};

// Makes each attempt's placement, for the job state its graph is built for
// (its parallelism: how many backfill actors to place); empty: every actor
// runs in this process.
using PlacementFactory =
    std::function<absl::StatusOr<std::unique_ptr<AttemptPlacement>>(
        const JobState& state)>;

// RunStreamingJob with `driver` for every attempt (RunStreamingJob's is
// RunThreaded with options.barrier_interval). Everything else is the same:
// the definition, the bulk load, the recoveries, the verdict. The recovery
// back-off sleeps on `clock`: with a SimulatedClock and a driver that never
// blocks, set options.recovery_backoff to zero.
absl::StatusOr<JobResult> RunStreamingJobWithDriver(
    StateStore& store, const StreamingJobOptions& options, Registry* registry,
    std::function<void(const JobProgress&)> observer, Clock& clock,
    const AttemptDriver& driver, const PlacementFactory& placement = {});

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_STREAMING_JOB_H_
