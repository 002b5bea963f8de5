#include "metrics/backfill_metrics.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

const std::vector<std::string>& LabelNames() {
  static const std::vector<std::string>* const names =
      new std::vector<std::string>{"table_id", "actor_id"};
  return *names;
}

}  // namespace

std::vector<double> BackfillMetrics::BarrierLatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60};
}

absl::StatusOr<BackfillMetrics> BackfillMetrics::Create(Registry& registry,
                                                        uint32_t table_id,
                                                        uint32_t actor_id) {
  const std::string table = absl::StrCat(table_id);
  const std::string actor = absl::StrCat(actor_id);
  const std::vector<absl::string_view> labels = {table, actor};

  auto counter = [&](absl::string_view name,
                     absl::string_view help) -> absl::StatusOr<Counter> {
    BACKFILL_ASSIGN_OR_RETURN(
        CounterFamily * family,
        registry.AddCounterFamily(name, help, LabelNames()));
    return family->WithLabels(labels);
  };
  auto gauge = [&](absl::string_view name,
                   absl::string_view help) -> absl::StatusOr<Gauge> {
    BACKFILL_ASSIGN_OR_RETURN(
        GaugeFamily * family,
        registry.AddGaugeFamily(name, help, LabelNames()));
    return family->WithLabels(labels);
  };

  BackfillMetrics metrics;
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.snapshot_read_row_count,
      counter(kSnapshotReadRowsTotal,
              "Snapshot rows emitted by the backfill executor."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.upstream_output_row_count,
      counter(kUpstreamOutputRowsTotal,
              "Upstream rows processed by the backfill executor (buffered "
              "rows before filtering)."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.rate_limit_rows_per_second,
      gauge(kRateLimitRowsPerSecond,
            "Current snapshot read rate limit in rows per second (+Inf: "
            "disabled, 0: paused)."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.upstream_buffer_rows,
      gauge(kUpstreamBufferRows,
            "Upstream rows buffered in the current epoch."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.upstream_buffer_bytes,
      gauge(kUpstreamBufferBytes,
            "Size in bytes of the upstream rows buffered in the current "
            "epoch."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.vnodes_completed,
      gauge(kVnodesCompleted, "Vnodes whose backfill has completed."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.vnodes_assigned,
      gauge(kVnodesAssigned, "Vnodes owned by the backfill actor."));
  BACKFILL_ASSIGN_OR_RETURN(
      HistogramFamily * latency,
      registry.AddHistogramFamily(
          kBarrierLatencySeconds,
          "Time a barrier spends inside the backfill executor, in seconds.",
          LabelNames(), BarrierLatencyBuckets()));
  BACKFILL_ASSIGN_OR_RETURN(metrics.barrier_latency_seconds,
                            latency->WithLabels(labels));
  return metrics;
}

}  // namespace backfill
