// JobMetricsRecorder: feeds JobMetrics (metrics/job_metrics.h) from what the
// runtime reports: the observer's JobProgress after every barrier, the
// recovery callback, and a MeteredStateStore for the storage-side series
// (checkpoint duration, view and upstream row writes); and StorageMetrics
// (metrics/storage_metrics.h) from RocksDB's own figures
// (RocksDbStateStore::Stats).
//
//   BACKFILL_ASSIGN_OR_RETURN(auto recorder, JobMetricsRecorder::Create(
//       registry, options.upstream.table_id, options.view_table_id, clock));
//   MeteredStateStore& store = recorder->Meter(rocksdb_store.get());
//   options.on_recovery = [&](const absl::Status&, uint32_t) {
//     recorder->OnRecovery();
//   };
//   RunStreamingJob(store, options, &registry, [&](const JobProgress& p) {
//     recorder->Observe(p);
//     recorder->ObserveSnapshotPercent(live_progress.percent);
//     recorder->RecordStorage(rocksdb_store->Stats());
//   }, clock);
//
// Counters grow by the increase of the runtime's cumulative figures since
// the previous observation (a figure that went back, as the source offset
// does after a recovery, restarts the baseline without counting; after
// Meter re-targets to a reopened store, and for a RocksDB ticker that went
// back, RocksDB's tickers count from 0). The
// progress ratio is the snapshot's share read (ObserveSnapshotPercent / 100,
// the progress line's percentage), kept below 1 until the backfill is done,
// then 1, and never lower than an earlier value.
// Thread-safety: Observe, ObserveSnapshotPercent, RecordStorage and
// OnRecovery may be called from any one thread at a time (the runtime's
// coordinator); not concurrently with each other.
#ifndef TOOLS_JOB_METRICS_RECORDER_H_
#define TOOLS_JOB_METRICS_RECORDER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job.h"
#include "metrics/job_metrics.h"
#include "metrics/registry.h"
#include "metrics/storage_metrics.h"
#include "storage/rocksdb/options.h"
#include "tools/metered_state_store.h"

namespace backfill {

class JobMetricsRecorder {
 public:
  // Registers JobMetrics for `upstream_table` and StorageMetrics in
  // `registry`; writes into `view_table` and `upstream_table` are counted by
  // the store Meter returns. `registry` and `clock` must outlive the
  // recorder. Errors: AlreadyExists as JobMetrics::Create and
  // StorageMetrics::Create.
  static absl::StatusOr<std::unique_ptr<JobMetricsRecorder>> Create(
      Registry& registry, TableId upstream_table, TableId view_table,
      Clock& clock);

  // The store to give the runtime: forwards to `store` (set_target after a
  // reopen, and RecordStorage then counts the new store's tickers from 0)
  // and measures checkpoints and view writes. Valid as long as the
  // recorder.
  MeteredStateStore& Meter(StateStore* store);

  // After every barrier.
  void Observe(const JobProgress& progress);
  // The share of the snapshot read, in [0, 100] (SnapshotProgress, as the
  // progress line shows it).
  void ObserveSnapshotPercent(double percent);
  // RocksDB's figures now (cumulative tickers since the store was opened).
  void RecordStorage(const RocksDbStats& stats);
  // When the runtime recovers from an error.
  void OnRecovery();

  const JobMetrics& metrics() const { return metrics_; }
  const StorageMetrics& storage_metrics() const { return storage_metrics_; }

 private:
  JobMetricsRecorder(JobMetrics metrics, StorageMetrics storage_metrics,
                     TableId upstream_table, TableId view_table, Clock& clock);

  // Sets the progress ratio to max(earlier, ratio).
  void RaiseProgressRatio(double ratio);

  const JobMetrics metrics_;
  const StorageMetrics storage_metrics_;
  const TableId upstream_table_;
  const TableId view_table_;
  Clock& clock_;
  std::unique_ptr<MeteredStateStore> metered_;
  JobProgress last_;
  RocksDbStats last_storage_;
  double progress_ratio_ = 0;
};

}  // namespace backfill

#endif  // TOOLS_JOB_METRICS_RECORDER_H_
