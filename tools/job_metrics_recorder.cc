#include "tools/job_metrics_recorder.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// Adds the increase from `last` to `now` to `counter`; a decrease (a replay
// after a recovery) adds nothing.
void AddIncrease(const Counter& counter, uint64_t last, uint64_t now) {
  if (now > last) counter.Increment(now - last);
}

// Just below 1: the ratio reaches 1 only with the backfill's end.
constexpr double kBeforeDone = 0.999;

}  // namespace

absl::StatusOr<std::unique_ptr<JobMetricsRecorder>> JobMetricsRecorder::Create(
    Registry& registry, TableId upstream_table, TableId view_table,
    Clock& clock) {
  BACKFILL_ASSIGN_OR_RETURN(JobMetrics metrics,
                            JobMetrics::Create(registry, upstream_table));
  return std::unique_ptr<JobMetricsRecorder>(
      new JobMetricsRecorder(std::move(metrics), view_table, clock));
}

JobMetricsRecorder::JobMetricsRecorder(JobMetrics metrics, TableId view_table,
                                       Clock& clock)
    : metrics_(std::move(metrics)), view_table_(view_table), clock_(clock) {}

MeteredStateStore& JobMetricsRecorder::Meter(StateStore* store) {
  if (metered_ == nullptr) {
    MeteredStateStoreOptions options;
    options.counted_table = view_table_;
    options.written_rows = metrics_.view_written_rows_total;
    options.checkpoint_duration = metrics_.checkpoint_duration_seconds;
    metered_ = std::make_unique<MeteredStateStore>(store, options, clock_);
  } else {
    metered_->set_target(store);
  }
  return *metered_;
}

void JobMetricsRecorder::Observe(const JobProgress& progress) {
  AddIncrease(metrics_.upstream_ops_total, last_.upstream_ops,
              progress.upstream_ops);
  AddIncrease(metrics_.epochs_total, last_.epochs, progress.epochs);
  AddIncrease(metrics_.checkpoints_total, last_.checkpoints,
              progress.checkpoints);
  metrics_.barrier_latency_seconds.Observe(
      progress.last_backfill_barrier_latency_ms / 1000.0);
  double ratio = 0;
  if (progress.vnodes_total > 0) {
    ratio = static_cast<double>(progress.vnodes_completed) /
            static_cast<double>(progress.vnodes_total);
  }
  if (progress.estimated_total_rows > 0) {
    ratio =
        std::max(ratio, static_cast<double>(progress.snapshot_rows) /
                            static_cast<double>(progress.estimated_total_rows));
  }
  ratio = progress.backfill_done ? 1.0 : std::min(ratio, kBeforeDone);
  progress_ratio_ = std::max(progress_ratio_, ratio);
  metrics_.progress_ratio.Set(progress_ratio_);
  metrics_.backfill_done.Set(progress.backfill_done ? 1 : 0);
  last_ = progress;
}

void JobMetricsRecorder::OnRecovery() { metrics_.recoveries_total.Increment(); }

}  // namespace backfill
