// StreamingJobOptions: everything that defines one run of a streaming job
// (RunStreamingJob, executor/runtime/streaming_job.h): the upstream table,
// the view's columns, the demo workload, the backfill's parallelism, chunk
// size and rate limit, the barrier cadence, the timeline of actions, the
// recovery budget, the internal table ids. The one options type of the
// runtime layer: the scenario proto converts into it once
// (tools/scenario.h), and every runtime target reads it.
//
//   StreamingJobOptions options;
//   options.upstream = catalog;
//   options.parallelism = 4;
//   BACKFILL_RETURN_IF_ERROR(ValidateStreamingJobOptions(options));
//   TableCatalog view = ViewCatalog(options);
//
// Also the derived facts every part of the runtime agrees on: the view's
// columns and catalog, the job's definition (what a restart must match).
// Thread-safety: plain values and pure functions.
#ifndef EXECUTOR_RUNTIME_STREAMING_JOB_OPTIONS_H_
#define EXECUTOR_RUNTIME_STREAMING_JOB_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/runtime/demo/workload.h"
#include "executor/runtime/job_state.h"
#include "executor/runtime/job_state_table.h"
#include "ratelimit/rate_limit.h"
#include "storage/committed_rows.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"

namespace backfill {

// Snapshot rows per chunk when nothing says otherwise: the executor's own
// default (ArrangementBackfillOptions::chunk_size, RisingWave's
// stream_chunk_size). The runtime and the scenarios take it from here.
inline constexpr uint32_t kDefaultChunkSize = 256;

// The backfill's default per-epoch upstream buffer budget: the executor's
// (ArrangementBackfillOptions::upstream_buffer_budget_bytes).
inline constexpr uint64_t kDefaultUpstreamBufferBudgetBytes = uint64_t{16}
                                                              << 20;
// The largest budget accepted (64 GiB): a larger one is a mistake (e.g. a
// negative number converted).
inline constexpr uint64_t kMaxUpstreamBufferBudgetBytes = uint64_t{64} << 30;

// Deliberate defects planted in the runtime so that the simulation
// (tests/simulation) can show its oracle catches each class of bug. Test
// only: never set outside tests (the default plants nothing). Each field
// names the defect it plants.
struct RuntimeSabotageForTest {
  // The hash dispatcher loses every n-th chunk of upstream changes it is
  // given (0 = never).
  uint32_t drop_every_nth_change_chunk = 0;
  // Every backfill actor sends every n-th chunk it outputs twice (0 =
  // never).
  uint32_t duplicate_every_nth_output_chunk = 0;
  // A recovery or restart builds the backfill actors with the job's initial
  // rate limit (`rate_limit` below, not paused) instead of the job state's
  // (the defect of issue 14, point 2).
  bool forget_rate_limit_at_recovery = false;
};

// Which backfill operator builds the view (executor/README.md).
enum class BackfillKind {
  // ArrangementBackfillExecutor: per-vnode positions over a replicated
  // table, actors apart from the upstream, any parallelism, rescalable.
  kArrangement,
  // NoShuffleBackfillExecutor: the upstream table's writer runs as
  // `parallelism` actors with the backfill's vnode split, each with its
  // backfill in the same actor, reading the writer's own table; one position
  // per actor, so never rescaled.
  kNoShuffle,
  // SnapshotBackfillExecutor: reads the table committed at one epoch, logs
  // the changes after it in the state store, replays the log, then joins;
  // one log and position per actor, so never rescaled.
  kSnapshot,
};

// "arrangement", "no_shuffle", "snapshot".
const char* BackfillKindName(BackfillKind kind);

// Whether a job of `kind` may change its parallelism (a `rescale` action, a
// restart at another parallelism): only kArrangement; the other kinds keep
// one position (and a snapshot backfill one log) per actor for its vnodes.
bool BackfillKindRescales(BackfillKind kind);

struct StreamingJobOptions {
  // The upstream table (S1). Its table id must differ from the internal
  // ids below.
  TableCatalog upstream;
  // Indices of upstream columns the view keeps; empty = all.
  std::vector<int> output_columns;
  // Rows loaded before the view is created (keys 0 .. initial_rows - 1).
  uint64_t initial_rows = 0;
  // The demo upstream's changes (executor/runtime/demo/workload.h).
  WorkloadOptions workload;
  // The backfill operator. Default kArrangement. The kinds that do not
  // rescale (BackfillKindRescales: kNoShuffle, kSnapshot): no `rescale`
  // action, and a restart may not change the parallelism
  // (FailedPrecondition).
  BackfillKind backfill_kind = BackfillKind::kArrangement;
  // Backfill actors, 1 .. vnode count, of a new job. Default 2. A restart
  // keeps the saved parallelism unless `overrides` sets one.
  uint32_t parallelism = 2;
  // Snapshot rows per chunk. Default kDefaultChunkSize (256); 0 also means
  // the default (as in the backfill's plan node).
  uint32_t chunk_size = kDefaultChunkSize;
  // Job-wide snapshot rows/s of a new job, split among actors by vnode
  // share. Default Disabled. Not Pause (pausing is an action). A restart
  // keeps the saved rate limit unless `overrides` sets one.
  RateLimit rate_limit = RateLimit::Disabled();
  // Adaptive rate limit of a new job (CONTRACT §11): > 0 puts it in
  // adaptive mode, where the coordinator moves the job-wide snapshot rate to
  // keep each barrier's latency through the backfill (injection until every
  // backfill actor emitted it) under this target; `rate_limit` then caps the
  // controller. Default zero: not adaptive. Not negative. A restart keeps
  // the saved mode unless `overrides` sets one.
  absl::Duration adaptive_target_barrier_latency = absl::ZeroDuration();
  // The adaptive controller's floor, job-wide rows/s, so that the backfill
  // always finishes. Default 0: one chunk per 4 barrier intervals
  // (AdaptiveFloorRowsPerSecond). A Fixed `rate_limit` below it wins.
  uint32_t adaptive_min_rows_per_second = 0;
  // Explicit settings of this run, applied on top of the saved (or initial)
  // job state at the run's first barrier and persisted with the next
  // checkpoint. Default: none. Parallelism in [1, vnode count]; the rate
  // limit not Pause; the adaptive target not negative.
  JobStateOverrides overrides;
  // The byte budget of each backfill actor's per-epoch upstream buffer
  // (ArrangementBackfillOptions::upstream_buffer_budget_bytes, CONTRACT
  // §10): above it the actor freezes its snapshot position for the rest of
  // the epoch. Default kDefaultUpstreamBufferBudgetBytes (16 MiB, the
  // executor's default); 0 = never buffer; at most
  // kMaxUpstreamBufferBudgetBytes.
  uint64_t upstream_buffer_budget_bytes = kDefaultUpstreamBufferBudgetBytes;
  // kSnapshot only: each backfill actor's log budget
  // (SnapshotBackfillOptions::log_budget_bytes): above it the actor holds
  // the upstream while it can drain. Default 64 MiB (the executor's
  // kDefaultSnapshotLogBudgetBytes, kept equal by a test); at most
  // kMaxUpstreamBufferBudgetBytes.
  uint64_t snapshot_log_budget_bytes = uint64_t{64} << 20;
  // How the view (MaterializeExecutor) checks each write against the stored
  // row (StateTableOptions::op_consistency). Default kConsistentOldValue: a
  // point read per written row, and the first insert of an existing pk, or
  // delete or update of a missing or different row, fails the job (the
  // runtime's tests, the simulation's sabotage catches and the command rely
  // on this early, precise failure). kInconsistent writes without reading:
  // the fast path, sound because the backfill gives the view each pk's
  // changes in the upstream's order (the CONTRACT §5 invariant), and the
  // final check still compares the view with the table; a defect then shows
  // up there, not at the write.
  OpConsistency view_op_consistency = OpConsistency::kConsistentOldValue;
  // Time between two barriers. Default 100 ms.
  absl::Duration barrier_interval = absl::Milliseconds(100);
  // Every n-th barrier is a checkpoint (>= 1). Default 1.
  uint32_t checkpoint_frequency = 1;
  // The timeline; ValidateJobActions must accept it (else InvalidArgument).
  std::vector<JobAction> actions;
  // Checkpoints that keep the upstream running after the backfill finished.
  // Default 3.
  uint32_t extra_checkpoints_after_finish = 3;
  // The job fails with DeadlineExceeded after this long. Default 10 min.
  absl::Duration max_duration = absl::Minutes(10);
  // A barrier not collected this long after its injection fails the
  // attempt with Unavailable (so the job recovers from the last
  // checkpoint): an actor, or a process on the barrier's path, is stuck
  // while its connections stay up (a hung worker whose lease is still kept).
  // Threaded drivers only (BarrierCoordinator::WaitCollected). > 0. Default
  // infinite: only max_duration bounds a barrier.
  absl::Duration barrier_timeout = absl::InfiniteDuration();
  // Recoveries from errors before giving up. Default 3.
  uint32_t max_recoveries = 3;
  // Wait before the n-th consecutive recovery: recovery_backoff x 2^(n-1),
  // at most 5 s. Default 100 ms.
  absl::Duration recovery_backoff = absl::Milliseconds(100);
  // Capacity of each channel, in messages (>= 1). Default 16.
  size_t channel_capacity = 16;
  // Each channel's bound on the rows of its buffered chunks
  // (ChannelOptions::rows; channel_capacity then bounds barriers and
  // watermarks alone). 0 (default): channel_capacity bounds every message.
  // With a bound (say 4096, what 16 full chunks hold), an upstream emitting
  // small chunks (a row or two each, as the demo's steady DML source does
  // without workload.batch_interval) runs ahead of a busy backfill actor by
  // that many rows instead of 16 tiny chunks (under a millisecond of its
  // changes), so it is not blocked; but nothing then coalesces its chunks, and
  // the no-shuffle and snapshot backfills pay per chunk (tools/README.md, the
  // bench's --channel_rows).
  size_t channel_rows = 0;
  // Optional: called when the job is about to recover from `error`
  // (`recovery` counts from 1), before the back-off and the reopen. For logs.
  std::function<void(const absl::Status& error, uint32_t recovery)> on_recovery;
  // Optional: called when an attempt ended at a checkpoint for a reschedule
  // (BarrierCoordinator::RequestReschedule), with the request's reason,
  // before the next attempt starts. For logs.
  std::function<void(const std::string& reason)> on_reschedule;
  // Optional: closes the store and opens it again, returning the store to
  // use from then on (the old one is not used after the call). Called
  // between graphs, when nothing the job made on the old store is alive. A
  // failed reopen counts as a failed recovery (the next one calls it
  // again). Empty: the same store throughout, so a failed storage write
  // (after which the store refuses checkpoints) exhausts the recoveries.
  std::function<absl::StatusOr<StateStore*>()> reopen_store;
  // Optional: how the final check (executor/runtime/verifier.h) reads each
  // table's committed rows. Give the store's independent reader when it has
  // one (RocksDB: RocksDbStateStore::NewRawCommittedRowIterator, through
  // the store in use after any reopen_store). Empty: the store's own
  // committed iterator (NewStoreCommittedRowIterator; memory, shared).
  CommittedRowReader committed_rows;
  // Table ids of the internal tables.
  TableId source_offset_table_id = 1001;
  TableId view_table_id = 1002;
  TableId progress_table_id = 1003;
  // The job's catalog row (executor/runtime/job_state_table.h). Keep it the
  // same for every job run on a store, so that another job's store is told
  // apart.
  TableId job_state_table_id = 1004;
  // kSnapshot only: the snapshot backfill's log and progress tables.
  TableId snapshot_log_table_id = 1005;
  TableId snapshot_meta_table_id = 1006;
  // Test only (see RuntimeSabotageForTest). Default: no defect.
  RuntimeSabotageForTest sabotage_for_test;
};

// OK iff `options` can run: a valid upstream catalog, parallelism and
// overrides.parallelism in [1, vnode count], output columns in range, no
// Pause as a rate limit, no negative adaptive target (options' or
// overrides'), ValidateJobActions, channel_capacity >= 1,
// upstream_buffer_budget_bytes <= kMaxUpstreamBufferBudgetBytes, five distinct
// table ids (kSnapshot: seven, its log and progress tables too), no
// `rescale` action unless BackfillKindRescales. Otherwise InvalidArgument
// naming the field and the value.
absl::Status ValidateStreamingJobOptions(const StreamingJobOptions& options);

// Indices into options.upstream.columns of the view's visible columns:
// output_columns, or every column if it is empty.
std::vector<int> JobOutputColumns(const StreamingJobOptions& options);

// S1 indices of the view's columns (S2): the output columns, then the
// upstream pk columns missing from them (hidden, so the view is keyed by the
// upstream pk).
std::vector<int> ViewColumns(const StreamingJobOptions& options);

// The view's catalog for `options`: ViewColumns with ids 1..m, the
// upstream's pk and distribution re-indexed, positional values.
TableCatalog ViewCatalog(const StreamingJobOptions& options);

// What the job is, for the job-state table (a restart must match it).
JobDefinition JobDefinitionOf(const StreamingJobOptions& options);

// options.chunk_size, or kDefaultChunkSize when it is 0.
uint32_t EffectiveChunkSize(const StreamingJobOptions& options);

// The adaptive controller's floor in rows/s: adaptive_min_rows_per_second,
// or when 0 one chunk (chunk_size, 0 = kDefaultChunkSize) per 4 barrier
// intervals, at least 1. E.g. 256 rows at 100 ms barriers: 640 rows/s.
uint32_t AdaptiveFloorRowsPerSecond(const StreamingJobOptions& options);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_STREAMING_JOB_OPTIONS_H_
