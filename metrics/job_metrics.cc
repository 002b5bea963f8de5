#include "metrics/job_metrics.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "metrics/backfill_metrics.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

std::vector<double> JobMetrics::CheckpointDurationBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
          0.25,   0.5,   1,      2.5,   5,    10,    30};
}

std::vector<double> JobMetrics::BarrierLatencyBuckets() {
  return BackfillMetrics::BarrierLatencyBuckets();
}

absl::StatusOr<JobMetrics> JobMetrics::Create(Registry& registry,
                                              uint32_t table_id) {
  const std::vector<std::string> label_names = {"table_id"};
  const std::string table = absl::StrCat(table_id);
  const std::vector<absl::string_view> labels = {table};

  auto counter = [&](absl::string_view name,
                     absl::string_view help) -> absl::StatusOr<Counter> {
    BACKFILL_ASSIGN_OR_RETURN(
        CounterFamily * family,
        registry.AddCounterFamily(name, help, label_names));
    return family->WithLabels(labels);
  };
  auto gauge = [&](absl::string_view name,
                   absl::string_view help) -> absl::StatusOr<Gauge> {
    BACKFILL_ASSIGN_OR_RETURN(GaugeFamily * family,
                              registry.AddGaugeFamily(name, help, label_names));
    return family->WithLabels(labels);
  };
  auto histogram =
      [&](absl::string_view name, absl::string_view help,
          std::vector<double> buckets) -> absl::StatusOr<Histogram> {
    BACKFILL_ASSIGN_OR_RETURN(HistogramFamily * family,
                              registry.AddHistogramFamily(
                                  name, help, label_names, std::move(buckets)));
    return family->WithLabels(labels);
  };

  JobMetrics metrics;
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.upstream_ops_total,
      counter(kUpstreamOpsTotal,
              "Upstream changes (inserts, updates, deletes) applied to the "
              "table."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.view_written_rows_total,
      counter(kViewWrittenRowsTotal,
              "Row writes (inserts and deletes) to the view."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.upstream_written_rows_total,
      counter(kUpstreamWrittenRowsTotal,
              "Row writes (inserts and deletes) to the upstream table: the "
              "bulk load's and the source's."));
  BACKFILL_ASSIGN_OR_RETURN(metrics.epochs_total,
                            counter(kEpochsTotal, "Barriers completed."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.checkpoints_total,
      counter(kCheckpointsTotal, "Checkpoints committed."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.recoveries_total,
      counter(kRecoveriesTotal,
              "Recoveries from errors (resumed from the last checkpoint)."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.checkpoint_duration_seconds,
      histogram(kCheckpointDurationSeconds,
                "Time to commit one checkpoint to the state store, in "
                "seconds.",
                CheckpointDurationBuckets()));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.barrier_latency_seconds,
      histogram(kBarrierLatencySeconds,
                "Time from a barrier's injection until every backfill actor "
                "emitted it, in seconds.",
                BarrierLatencyBuckets()));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.progress_ratio,
      gauge(kProgressRatio,
            "Share of the backfill's snapshot read, from 0 to 1 (1 exactly "
            "when it finished)."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.backfill_done,
      gauge(kBackfillDone, "1 once the backfill finished, else 0."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.adaptive_target_unreachable,
      gauge(kAdaptiveTargetUnreachable,
            "1 while an adaptive rate's controller judges its barrier-latency "
            "target unreachable at this load (the backfill is paced against "
            "the upstream's own latency instead), else 0."));
  return metrics;
}

}  // namespace backfill
