// JobMetrics: the metric handles of one streaming job (the pipeline around
// the backfill: upstream, view, checkpoints, recoveries, barriers), labeled
// by the upstream table, built from a shared Registry. The per-actor
// backfill series are BackfillMetrics (metrics/backfill_metrics.h).
//
//   BACKFILL_ASSIGN_OR_RETURN(JobMetrics metrics,
//                             JobMetrics::Create(registry, table_id));
//   metrics.upstream_ops_total.Increment(ops);
//
// Every series has the label table_id (the upstream table):
// - backfill_job_upstream_ops_total (counter): upstream changes (inserts,
//   updates, deletes) the source applied to the table.
// - backfill_job_view_written_rows_total (counter): row writes (inserts and
//   deletes; an update is both) the view's materialize actor made.
// - backfill_job_upstream_written_rows_total (counter): row writes into the
//   upstream table: the initial bulk load's and the source's.
// - backfill_job_epochs_total, backfill_job_checkpoints_total (counters):
//   barriers completed, checkpoints committed.
// - backfill_job_recoveries_total (counter): recoveries from errors (each
//   tears the graph down and resumes from the last checkpoint).
// - backfill_job_checkpoint_duration_seconds (histogram): time to commit one
//   checkpoint to the state store (the atomic write of every table).
// - backfill_job_barrier_latency_seconds (histogram): time from a barrier's
//   injection until every backfill actor emitted it.
// - backfill_job_progress_ratio (gauge, 0 to 1): the share of the snapshot
//   read (the progress line's percentage / 100); 1 exactly when every actor
//   finished; never decreases within a process.
// - backfill_job_backfill_done (gauge, 0 or 1): the backfill finished.
// - backfill_job_adaptive_target_unreachable (gauge, 0 or 1): an adaptive
//   rate's controller judges its barrier-latency target unreachable at this
//   load (cutting the rate did not make the barriers faster) and paces the
//   backfill against the latency the upstream has without it; 0 otherwise
//   (also without an adaptive rate, and once the backfill finished).
#ifndef METRICS_JOB_METRICS_H_
#define METRICS_JOB_METRICS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/registry.h"

namespace backfill {

struct JobMetrics {
  static constexpr absl::string_view kUpstreamOpsTotal =
      "backfill_job_upstream_ops_total";
  static constexpr absl::string_view kViewWrittenRowsTotal =
      "backfill_job_view_written_rows_total";
  static constexpr absl::string_view kUpstreamWrittenRowsTotal =
      "backfill_job_upstream_written_rows_total";
  static constexpr absl::string_view kEpochsTotal = "backfill_job_epochs_total";
  static constexpr absl::string_view kCheckpointsTotal =
      "backfill_job_checkpoints_total";
  static constexpr absl::string_view kRecoveriesTotal =
      "backfill_job_recoveries_total";
  static constexpr absl::string_view kCheckpointDurationSeconds =
      "backfill_job_checkpoint_duration_seconds";
  static constexpr absl::string_view kBarrierLatencySeconds =
      "backfill_job_barrier_latency_seconds";
  static constexpr absl::string_view kProgressRatio =
      "backfill_job_progress_ratio";
  static constexpr absl::string_view kBackfillDone =
      "backfill_job_backfill_done";
  static constexpr absl::string_view kAdaptiveTargetUnreachable =
      "backfill_job_adaptive_target_unreachable";

  // Bucket upper bounds of checkpoint_duration_seconds: 0.5 ms to 30 s.
  static std::vector<double> CheckpointDurationBuckets();
  // Bucket upper bounds of barrier_latency_seconds: 1 ms to 60 s (as
  // BackfillMetrics::BarrierLatencyBuckets).
  static std::vector<double> BarrierLatencyBuckets();

  // The handles for `table_id`, registering the families on first use;
  // calling it again for the same table returns the same series. Handles
  // stay valid as long as `registry`.
  // Errors: AlreadyExists if `registry` holds one of these names with a
  // different definition. Thread-safe.
  static absl::StatusOr<JobMetrics> Create(Registry& registry,
                                           uint32_t table_id);

  // Default-constructed handles are detached (updates go nowhere).
  Counter upstream_ops_total;
  Counter view_written_rows_total;
  Counter upstream_written_rows_total;
  Counter epochs_total;
  Counter checkpoints_total;
  Counter recoveries_total;
  Histogram checkpoint_duration_seconds;
  Histogram barrier_latency_seconds;
  Gauge progress_ratio;
  Gauge backfill_done;
  Gauge adaptive_target_unreachable;
};

}  // namespace backfill

#endif  // METRICS_JOB_METRICS_H_
