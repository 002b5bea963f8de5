// JobProgress and JobResult: what a streaming job reports while it runs (to
// an observer, after every barrier) and when it ends (RunStreamingJob,
// executor/runtime/streaming_job.h). Plain values.
//
//   observer = [](const JobProgress& p) { Print(p.vnodes_completed); };
//   BACKFILL_ASSIGN_OR_RETURN(JobResult result, RunStreamingJob(...));
#ifndef EXECUTOR_RUNTIME_JOB_RESULT_H_
#define EXECUTOR_RUNTIME_JOB_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "executor/runtime/job_state.h"

namespace backfill {

// A periodic observation for progress displays.
struct JobProgress {
  double seconds = 0;
  uint64_t vnodes_completed = 0;
  uint64_t vnodes_total = 0;
  uint64_t snapshot_rows = 0;
  // Of those, the rows read in this run (JobResult::snapshot_rows_this_run).
  uint64_t snapshot_rows_this_run = 0;
  // Upstream changes generated in this run (JobResult::upstream_ops).
  uint64_t upstream_ops = 0;
  uint64_t epochs = 0;
  uint64_t checkpoints = 0;
  // Backfill actors in force (after a rescale, the new ones).
  uint32_t parallelism = 0;
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
  // The latest barrier's time from injection until every backfill actor
  // emitted it.
  double last_backfill_barrier_latency_ms = 0;
  bool backfill_done = false;
  // The job-wide snapshot rate limit in force (JobState::EffectiveRateLimit:
  // in adaptive mode the controller's rate).
  RateLimit rate_limit;
  // In adaptive mode: the controller judges its target unreachable at this
  // load (AdaptiveRateController::target_unreachable: cutting the rate did
  // not make the barriers faster) and paces the backfill against the
  // latency the upstream has without it instead.
  bool adaptive_target_unreachable = false;
  // The job state in force (its rate policy, adaptive target and rate,
  // pauses, parallelism), as the next checkpoint persists it.
  JobState job_state;
  // JobResult::backfill_seconds once the backfill finished in this run.
  std::optional<double> backfill_seconds;
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
  // The snapshot rows an earlier run of the job had persisted, as the
  // actors of the run's first attempt to pass a barrier loaded them
  // (JobProgressTracker::persisted_rows; 0 for a job this run created):
  // snapshot_rows_this_run is snapshot_rows minus these, so that rows read
  // by attempts a recovery ended count too.
  std::optional<uint64_t> snapshot_rows_before_run;
  // Upstream changes the source generated in this run: its offset at the
  // end minus upstream_ops_before_run, the offset its persisted state held
  // when the run's first attempt started it (0 for a new job).
  uint64_t upstream_ops = 0;
  std::optional<uint64_t> upstream_ops_before_run;
  uint64_t epochs = 0;
  uint64_t checkpoints = 0;
  // Backfill actors at the end of the run (after its rescales).
  uint32_t parallelism = 0;
  // The job state in force at the end (as persisted by the last checkpoint).
  JobState job_state;
  // The run started from a job an earlier run had checkpointed (its source
  // resumed from a persisted offset), not one it created. A recovery within
  // the run does not make it resumed (that is `recoveries`).
  bool resumed = false;
  // Recoveries from errors in this run (each reopened the store if it could).
  uint32_t recoveries = 0;
  // Attempts that ended at a checkpoint on request
  // (BarrierCoordinator::RequestReschedule), each followed by a new attempt
  // from that checkpoint; not recoveries.
  uint32_t reschedules = 0;
  // The whole run: from RunStreamingJob's start (before a new job's
  // definition and bulk load) until the job ended (the view's final check
  // not included).
  double seconds = 0;
  // The injection of the run's first barrier (the view's creation or the
  // job's resumption), kept over the run's attempts: where the backfill's
  // time starts. A new job's bulk load comes before it.
  std::optional<absl::Time> first_barrier_at;
  // From first_barrier_at to the first barrier collected with every
  // backfill actor done; nullopt if the backfill did not finish in this
  // run. The run goes on after it (the finish barrier, extra checkpoints, a
  // scenario's upstream), so `seconds` overstates the backfill's time.
  std::optional<double> backfill_seconds;
  // snapshot_rows_this_run ÷ backfill_seconds (÷ seconds for a run that
  // ended before the backfill finished).
  double snapshot_rows_per_second = 0;
  // Injection until the view collected the barrier, over all barriers.
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
  // Injection until every backfill actor emitted the barrier: while the
  // backfill ran, and after it finished (the same pipeline without it).
  double backfill_barrier_latency_p50_ms = 0;
  double backfill_barrier_latency_p99_ms = 0;
  // The barriers the first two are over: this run's barriers up to the
  // first collected with every backfill actor done (a finished job's rerun
  // has that one); 0: none, and both are 0. The adaptive controller's target
  // applies to these barriers' latency.
  uint64_t backfill_barriers = 0;
  double steady_barrier_latency_p50_ms = 0;
  double steady_barrier_latency_p99_ms = 0;
  // The longest a single upstream send waited for a full backfill input
  // (back-pressure onto the upstream).
  double upstream_blocked_seconds = 0;
  // Sum over actors of the most upstream change data each buffered in one
  // epoch (StreamChunk::EstimatedBytes); with rescales, the largest such sum
  // of one set of actors.
  uint64_t peak_buffer_bytes = 0;
  // A snapshot backfill: the sum over actors of each one's peak log bytes
  // (SnapshotBackfillExecutor::peak_log_bytes; per attempt, the largest).
  // 0 for the other kinds.
  uint64_t peak_snapshot_log_bytes = 0;
  // Online rescales completed in this run (their checkpoint committed).
  uint32_t rescales = 0;
  // The longest the upstream was blocked around one rescale
  // (HashDispatcher::max_rescale_blocked): from the rescale barrier until
  // the barrier after it reached every new actor. 0 without rescales.
  double rescale_upstream_blocked_seconds = 0;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_JOB_RESULT_H_
