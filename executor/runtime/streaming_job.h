// StreamingJob: the small streaming runtime that runs one backfill end to
// end: a DML source over an upstream table, a hash dispatcher, N
// ArrangementBackfillExecutor actors, a merge + materialize actor writing the
// new view, and a barrier coordinator; one thread per actor, bounded
// channels between them.
//
//   StreamingJobOptions options = ...;             // table, workload, parallelism
//   BACKFILL_ASSIGN_OR_RETURN(JobResult result,
//                             RunStreamingJob(*store, options, &registry, observer));
//   if (!result.consistent) ...                    // view != table
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
// for the net change (see job_state.h). The job's definition (the upstream
// and view catalogs, the output columns, the internal table ids) is saved at
// creation; a store that holds another job is FailedPrecondition naming the
// first difference, before anything is read or written.
#ifndef EXECUTOR_RUNTIME_STREAMING_JOB_H_
#define EXECUTOR_RUNTIME_STREAMING_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/runtime/job_state.h"
#include "executor/runtime/workload.h"
#include "metrics/registry.h"
#include "ratelimit/rate_limit.h"
#include "serde/row.h"
#include "storage/state_store.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct StreamingJobOptions {
  // The upstream table (S1). Its table id must differ from the internal
  // ids below.
  TableCatalog upstream;
  // Indices of upstream columns the view keeps; empty = all.
  std::vector<int> output_columns;
  // Rows loaded before the view is created (keys 0 .. initial_rows - 1).
  uint64_t initial_rows = 0;
  WorkloadOptions workload;
  // Backfill actors, 1 .. vnode count, of a new job. Default 2. A restart
  // keeps the saved parallelism unless `overrides` sets one.
  uint32_t parallelism = 2;
  // Snapshot rows per chunk. Default 256.
  uint32_t chunk_size = 256;
  // Job-wide snapshot rows/s of a new job, split among actors by vnode
  // share. Default Disabled. Not Pause (pausing is an action). A restart
  // keeps the saved rate limit unless `overrides` sets one.
  RateLimit rate_limit = RateLimit::Disabled();
  // Explicit settings of this run, applied on top of the saved (or initial)
  // job state at the run's first barrier and persisted with the next
  // checkpoint. Default: none. Parallelism in [1, vnode count]; the rate
  // limit not Pause.
  JobStateOverrides overrides;
  absl::Duration barrier_interval = absl::Milliseconds(100);
  // Every n-th barrier is a checkpoint (>= 1). Default 1.
  uint32_t checkpoint_frequency = 1;
  // The timeline; ValidateJobActions must accept it (else InvalidArgument).
  std::vector<JobAction> actions;
  // Checkpoints that keep the upstream running after the backfill finished.
  uint32_t extra_checkpoints_after_finish = 3;
  // The job fails with DeadlineExceeded after this long. Default 10 min.
  absl::Duration max_duration = absl::Minutes(10);
  // Recoveries from errors before giving up. Default 3.
  uint32_t max_recoveries = 3;
  // Wait before the n-th consecutive recovery: recovery_backoff x 2^(n-1),
  // at most 5 s. Default 100 ms.
  absl::Duration recovery_backoff = absl::Milliseconds(100);
  // Capacity of each channel, in messages. Default 16.
  size_t channel_capacity = 16;
  // Optional: called when the job is about to recover from `error`
  // (`recovery` counts from 1), before the back-off and the reopen. For logs.
  std::function<void(const absl::Status& error, uint32_t recovery)> on_recovery;
  // Optional: closes the store and opens it again, returning the store to
  // use from then on (the old one is not used after the call). Called
  // between graphs, when nothing the job made on the old store is alive. A
  // failed reopen counts as a failed recovery (the next one calls it
  // again). Empty: the same store throughout, so a failed storage write
  // (after which the store refuses checkpoints) exhausts the recoveries.
  std::function<absl::StatusOr<StateStore*>()> reopen_store;
  // Table ids of the internal tables.
  TableId source_offset_table_id = 1001;
  TableId view_table_id = 1002;
  TableId progress_table_id = 1003;
  // The job's catalog row (executor/runtime/job_state_table.h). Keep it the
  // same for every job run on a store, so that another job's store is told
  // apart.
  TableId job_state_table_id = 1004;
};

// A periodic observation for progress displays.
struct JobProgress {
  double seconds = 0;
  uint64_t vnodes_completed = 0;
  uint64_t vnodes_total = 0;
  uint64_t snapshot_rows = 0;
  uint64_t estimated_total_rows = 0;
  uint64_t upstream_ops = 0;
  uint64_t epochs = 0;
  uint64_t checkpoints = 0;
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
  // The latest barrier's time from injection until every backfill actor
  // emitted it.
  double last_backfill_barrier_latency_ms = 0;
  bool backfill_done = false;
};

struct JobResult {
  bool consistent = false;
  // Why not consistent: the first differing rows.
  std::string mismatch;
  uint64_t upstream_rows = 0;
  uint64_t view_rows = 0;
  // Snapshot rows sent in total (persisted progress included) and in this
  // run only (what snapshot_rows_per_second is computed from).
  uint64_t snapshot_rows = 0;
  uint64_t snapshot_rows_this_run = 0;
  uint64_t upstream_ops = 0;
  uint64_t epochs = 0;
  uint64_t checkpoints = 0;
  uint32_t parallelism = 0;
  // The job state in force at the end (as persisted by the last checkpoint).
  JobState job_state;
  bool resumed = false;
  // Recoveries from errors in this run (each reopened the store if it could).
  uint32_t recoveries = 0;
  double seconds = 0;
  double snapshot_rows_per_second = 0;
  // Injection until the view collected the barrier, over all barriers.
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
  // Injection until every backfill actor emitted the barrier: while the
  // backfill ran, and after it finished (the same pipeline without it).
  double backfill_barrier_latency_p50_ms = 0;
  double backfill_barrier_latency_p99_ms = 0;
  double steady_barrier_latency_p50_ms = 0;
  double steady_barrier_latency_p99_ms = 0;
  // The longest a single upstream send waited for a full backfill input
  // (back-pressure onto the upstream).
  double upstream_blocked_seconds = 0;
  // Sum over actors of the most upstream change data each buffered in one
  // epoch (StreamChunk::EstimatedBytes).
  uint64_t peak_buffer_bytes = 0;
};

// The view's catalog for `options`: the output columns, then any upstream pk
// column not among them (hidden, so the view is keyed by the upstream pk).
TableCatalog ViewCatalog(const StreamingJobOptions& options);

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

// Loads options.initial_rows rows into options.upstream and marks the load
// done (in the source's offset table) in the same checkpoint, unless an
// earlier load completed. RunStreamingJob calls it first; benchmarks call it
// to build a table once. Returns true if it loaded the rows now.
absl::StatusOr<bool> LoadInitialRows(StateStore& store,
                                     const StreamingJobOptions& options);

// The committed rows of `catalog` projected to `columns`, sorted by their
// memcomparable encoding (a canonical order). For dumps and verification.
absl::StatusOr<std::vector<Row>> ReadCommittedRows(
    StateStore& store, const TableCatalog& catalog,
    const std::vector<int>& columns);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_STREAMING_JOB_H_
