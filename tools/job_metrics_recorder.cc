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

// Adds RocksDB ticker `now` to `counter`: its increase since `last`, or all
// of it when it went back (a reopened store's tickers start again at 0).
void AddTicker(const Counter& counter, uint64_t last, uint64_t now) {
  counter.Increment(now >= last ? now - last : now);
}

// Just below 1: the ratio reaches 1 only with the backfill's end.
constexpr double kBeforeDone = 0.999;

}  // namespace

absl::StatusOr<std::unique_ptr<JobMetricsRecorder>> JobMetricsRecorder::Create(
    Registry& registry, TableId upstream_table, TableId view_table,
    Clock& clock) {
  BACKFILL_ASSIGN_OR_RETURN(JobMetrics metrics,
                            JobMetrics::Create(registry, upstream_table));
  BACKFILL_ASSIGN_OR_RETURN(StorageMetrics storage_metrics,
                            StorageMetrics::Create(registry));
  return std::unique_ptr<JobMetricsRecorder>(
      new JobMetricsRecorder(std::move(metrics), std::move(storage_metrics),
                             upstream_table, view_table, clock));
}

JobMetricsRecorder::JobMetricsRecorder(JobMetrics metrics,
                                       StorageMetrics storage_metrics,
                                       TableId upstream_table,
                                       TableId view_table, Clock& clock)
    : metrics_(std::move(metrics)),
      storage_metrics_(std::move(storage_metrics)),
      upstream_table_(upstream_table),
      view_table_(view_table),
      clock_(clock) {}

MeteredStateStore& JobMetricsRecorder::Meter(StateStore* store) {
  if (metered_ == nullptr) {
    MeteredStateStoreOptions options;
    options.counted_tables = {
        {view_table_, metrics_.view_written_rows_total},
        {upstream_table_, metrics_.upstream_written_rows_total}};
    options.checkpoint_duration = metrics_.checkpoint_duration_seconds;
    metered_ = std::make_unique<MeteredStateStore>(store, options, clock_);
  } else {
    metered_->set_target(store);
    // A reopened store: its tickers count from 0 again, even where they
    // have already passed the old store's last values.
    last_storage_ = RocksDbStats{};
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
  if (progress.backfill_done) RaiseProgressRatio(1.0);
  metrics_.backfill_done.Set(progress.backfill_done ? 1 : 0);
  metrics_.adaptive_target_unreachable.Set(
      progress.adaptive_target_unreachable ? 1 : 0);
  last_ = progress;
}

void JobMetricsRecorder::ObserveSnapshotPercent(double percent) {
  if (!(percent >= 0)) return;  // NaN
  RaiseProgressRatio(std::min(percent / 100.0, kBeforeDone));
}

void JobMetricsRecorder::RaiseProgressRatio(double ratio) {
  progress_ratio_ = std::max(progress_ratio_, ratio);
  metrics_.progress_ratio.Set(progress_ratio_);
}

void JobMetricsRecorder::RecordStorage(const RocksDbStats& stats) {
  const StorageMetrics& m = storage_metrics_;
  const RocksDbStats& last = last_storage_;
  AddTicker(m.read_bytes_total, last.read_bytes, stats.read_bytes);
  AddTicker(m.written_bytes_total, last.written_bytes, stats.written_bytes);
  AddTicker(m.compaction_read_bytes_total, last.compaction_read_bytes,
            stats.compaction_read_bytes);
  AddTicker(m.compaction_written_bytes_total, last.compaction_written_bytes,
            stats.compaction_written_bytes);
  AddTicker(m.flush_written_bytes_total, last.flush_written_bytes,
            stats.flush_written_bytes);
  AddTicker(m.block_cache_hits_total, last.block_cache_hits,
            stats.block_cache_hits);
  AddTicker(m.block_cache_misses_total, last.block_cache_misses,
            stats.block_cache_misses);
  m.pending_compaction_bytes.Set(
      static_cast<double>(stats.pending_compaction_bytes));
  m.sst_files.Set(static_cast<double>(stats.sst_files));
  m.sst_bytes.Set(static_cast<double>(stats.sst_bytes));
  m.memtable_bytes.Set(static_cast<double>(stats.memtable_bytes));
  m.table_readers_bytes.Set(static_cast<double>(stats.table_readers_bytes));
  m.block_cache_bytes.Set(static_cast<double>(stats.block_cache_bytes));
  last_storage_ = stats;
}

void JobMetricsRecorder::OnRecovery() { metrics_.recoveries_total.Increment(); }

}  // namespace backfill
