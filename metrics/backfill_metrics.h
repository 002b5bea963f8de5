// BackfillMetrics: the metric handles of one backfill actor (CONTRACT §8),
// labeled by upstream table and actor, built from a shared Registry.
//
//   BACKFILL_ASSIGN_OR_RETURN(
//       BackfillMetrics metrics,
//       BackfillMetrics::Create(registry, table_id, actor_id));
//   metrics.snapshot_read_row_count.Increment(chunk.num_rows());
//
// Every series carries the labels table_id (the upstream table) and actor_id.
// Names follow Prometheus's conventions (counters end in `_total`, the unit
// is in the name), so `promtool check metrics` is silent; RisingWave's names
// are given where ours differ, for porting its dashboards:
// - stream_backfill_snapshot_read_rows_total (counter): snapshot rows
//   emitted (RisingWave: stream_backfill_snapshot_read_row_count).
// - stream_backfill_upstream_output_rows_total (counter): upstream rows
//   processed, buffered rows before filtering, as in RisingWave
//   (RisingWave: stream_backfill_upstream_output_row_count).
// - stream_backfill_rate_limit_rows_per_second (gauge): the current limit;
//   +Inf when disabled, 0 when paused.
// - stream_backfill_upstream_buffer_rows / _bytes (gauges): upstream rows
//   buffered in the current epoch, and their size.
// - stream_backfill_barrier_latency_seconds (histogram): time a barrier
//   spends inside the executor.
// - stream_backfill_vnodes_completed / _assigned (gauges): per-vnode progress
//   (vnodes_assigned, not vnodes_total: Prometheus reserves `_total` for
//   counters).
// The C++ member names (snapshot_read_row_count, ...) are the executor's and
// predate the rename; each says which series it feeds.
#ifndef METRICS_BACKFILL_METRICS_H_
#define METRICS_BACKFILL_METRICS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/registry.h"

namespace backfill {

struct BackfillMetrics {
  static constexpr absl::string_view kSnapshotReadRowsTotal =
      "stream_backfill_snapshot_read_rows_total";
  static constexpr absl::string_view kUpstreamOutputRowsTotal =
      "stream_backfill_upstream_output_rows_total";
  static constexpr absl::string_view kRateLimitRowsPerSecond =
      "stream_backfill_rate_limit_rows_per_second";
  static constexpr absl::string_view kUpstreamBufferRows =
      "stream_backfill_upstream_buffer_rows";
  static constexpr absl::string_view kUpstreamBufferBytes =
      "stream_backfill_upstream_buffer_bytes";
  static constexpr absl::string_view kBarrierLatencySeconds =
      "stream_backfill_barrier_latency_seconds";
  static constexpr absl::string_view kVnodesCompleted =
      "stream_backfill_vnodes_completed";
  static constexpr absl::string_view kVnodesAssigned =
      "stream_backfill_vnodes_assigned";

  // Bucket upper bounds of barrier_latency_seconds: 1 ms to 60 s.
  static std::vector<double> BarrierLatencyBuckets();

  // The handles for (table_id, actor_id), registering the families on first
  // use. Calling it again for the same or another actor reuses the families
  // (and, for the same pair, the same series). Handles stay valid as long as
  // `registry`.
  // Errors: AlreadyExists if `registry` holds one of these names with a
  // different definition. Thread-safe.
  static absl::StatusOr<BackfillMetrics> Create(Registry& registry,
                                                uint32_t table_id,
                                                uint32_t actor_id);

  // Default-constructed handles are detached (updates go nowhere): an
  // executor built without metrics can use BackfillMetrics{}.
  // stream_backfill_snapshot_read_rows_total.
  Counter snapshot_read_row_count;
  // stream_backfill_upstream_output_rows_total.
  Counter upstream_output_row_count;
  Gauge rate_limit_rows_per_second;
  Gauge upstream_buffer_rows;
  Gauge upstream_buffer_bytes;
  Histogram barrier_latency_seconds;
  Gauge vnodes_completed;
  Gauge vnodes_assigned;
};

}  // namespace backfill

#endif  // METRICS_BACKFILL_METRICS_H_
