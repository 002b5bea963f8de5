// JobMetricsRecorder: feeds JobMetrics (metrics/job_metrics.h) from what the
// runtime reports: the observer's JobProgress after every barrier, the
// recovery callback, and a MeteredStateStore for the storage-side series
// (checkpoint duration, view row writes).
//
//   BACKFILL_ASSIGN_OR_RETURN(auto recorder, JobMetricsRecorder::Create(
//       registry, options.upstream.table_id, options.view_table_id, clock));
//   MeteredStateStore& store = recorder->Meter(rocksdb_store.get());
//   options.on_recovery = [&](const absl::Status&, uint32_t) {
//     recorder->OnRecovery();
//   };
//   RunStreamingJob(store, options, &registry,
//                   [&](const JobProgress& p) { recorder->Observe(p); },
//                   clock);
//
// Counters grow by the increase of the runtime's cumulative figures since
// the previous observation (a figure that went back, as the source offset
// does after a recovery, restarts the baseline without counting). The
// progress ratio is max(vnodes completed / vnodes, snapshot rows / the
// estimated total), kept below 1 until the backfill is done, then 1, and
// never lower than an earlier value.
// Thread-safety: Observe and OnRecovery may be called from any one thread
// at a time (the runtime's coordinator); not concurrently with each other.
#ifndef TOOLS_JOB_METRICS_RECORDER_H_
#define TOOLS_JOB_METRICS_RECORDER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job.h"
#include "metrics/job_metrics.h"
#include "metrics/registry.h"
#include "tools/metered_state_store.h"

namespace backfill {

class JobMetricsRecorder {
 public:
  // Registers JobMetrics for `upstream_table` in `registry`; writes into
  // `view_table` are counted by the store Meter returns. `registry` and
  // `clock` must outlive the recorder.
  // Errors: AlreadyExists as JobMetrics::Create.
  static absl::StatusOr<std::unique_ptr<JobMetricsRecorder>> Create(
      Registry& registry, TableId upstream_table, TableId view_table,
      Clock& clock);

  // The store to give the runtime: forwards to `store` (set_target after a
  // reopen) and measures checkpoints and view writes. Valid as long as the
  // recorder.
  MeteredStateStore& Meter(StateStore* store);

  // After every barrier.
  void Observe(const JobProgress& progress);
  // When the runtime recovers from an error.
  void OnRecovery();

  const JobMetrics& metrics() const { return metrics_; }

 private:
  JobMetricsRecorder(JobMetrics metrics, TableId view_table, Clock& clock);

  const JobMetrics metrics_;
  const TableId view_table_;
  Clock& clock_;
  std::unique_ptr<MeteredStateStore> metered_;
  JobProgress last_;
  double progress_ratio_ = 0;
};

}  // namespace backfill

#endif  // TOOLS_JOB_METRICS_RECORDER_H_
