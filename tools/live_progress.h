// LiveProgress: the live progress line of //tools:backfill (issue 16 point
// 2), from the command's start to its end: a line at least every
// `tick_seconds`; before the backfill a labelled phase without a percentage
// ("starting", "bulk load | rows 412,000/1,000,000", "creating the view",
// "resuming from the last checkpoint", "recovering ..."); then, after every
// barrier, the share of the snapshot read (SnapshotProgress,
// snapshot_progress.h) with the vnodes done, the rows, the recent rate, the
// ETA and the job's figures (progress_display.h).
//
//   LiveProgress live(&std::cout, display_options, live_options, clock);
//   live.Start();                                  // the ticker thread
//   observer = [&](const JobProgress& p) {
//     recorder.ObserveSnapshotPercent(
//         live.Observe(p, *rocksdb_store, rocksdb_store.get()).percent);
//   };
//   options.on_recovery = [&](...) { live.OnRecovery(); ... };
//   RunStreamingJob(...);
//   live.Finish();
//
// The share is computed from the store, not from the actors: the per-vnode
// progress the backfill persisted (the progress table at the committed
// epoch, ReadCommittedVnodes in inspect.h: each vnode's rows read and
// whether it finished) weighed by the store's cheap per-vnode size estimate
// (VnodeSizeEstimator, taken once, at the first read that gets them; a
// failed estimate is tried again at the next read), with the initial row
// count as the prior. It never decreases, stays below 100 until every vnode
// finished, and is 100 once they all did. The progress table is read when
// the committed epoch moved and `min_read_interval_seconds` of job time
// passed since the last read (at once when the backfill finished or an
// actor's vnodes did), and no more once every vnode finished; a failed read
// keeps the previous estimate (the job itself reports storage errors).
//
// A snapshot backfill (BackfillKind::kSnapshot) keeps one progress row per
// actor, not per vnode, so there is no per-vnode table to read: its share
// is the actors' rows read (JobProgress::snapshot_rows) over the initial
// row count (the prior; the share of finished vnodes without one), its
// finished vnodes the actors' (JobProgress::vnodes_completed), and the
// store is not read at all.
//
// Thread-safety: thread-safe. Observe is meant for the runtime's observer
// (the coordinator thread, never concurrent with a reopen of the store);
// the ticker thread only formats and prints.
#ifndef TOOLS_LIVE_PROGRESS_H_
#define TOOLS_LIVE_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/streaming_job_options.h"
#include "storage/state_store.h"
#include "storage/vnode_size_estimator.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"
#include "tools/progress_display.h"
#include "tools/snapshot_progress.h"

namespace backfill {

struct LiveProgressOptions {
  // The job: its upstream table (vnode count, table id) and progress table.
  JobDefinition definition;
  // The job's backfill operator: kSnapshot persists no per-vnode progress
  // (see the file comment). Default kArrangement.
  BackfillKind backfill_kind = BackfillKind::kArrangement;
  // Rows the bulk load writes (the scenario's initial rows); also the prior
  // of the snapshot's size. 0 = unknown.
  uint64_t initial_rows = 0;
  // The data directory held a job whose initial load completed
  // (InitialLoadComplete): the phase before the backfill
  // is "resuming from the last checkpoint" (no bulk load to show).
  bool resuming = false;
  // Row writes into the upstream table so far (the bulk load's, then the
  // source's), e.g. JobMetrics::upstream_written_rows_total's value; called
  // by the ticker thread, so thread-safe. Empty: the bulk load is not shown.
  std::function<uint64_t()> upstream_written_rows;
  // Seconds between two ticks (> 0): before the backfill each tick shows
  // the phase; during it a tick repeats the last line when no barrier
  // showed one since the last tick. Default 1.
  double tick_seconds = 1;
  // Job seconds between two reads of the progress table (>= 0). Default 0.5.
  double min_read_interval_seconds = 0.5;
};

class LiveProgress {
 public:
  // `out` (may be null: nothing is shown, the estimates are still made)
  // and `clock` must outlive this object.
  LiveProgress(std::ostream* out, ProgressDisplayOptions display,
               LiveProgressOptions options, Clock& clock);
  // Finish().
  ~LiveProgress();
  LiveProgress(const LiveProgress&) = delete;
  LiveProgress& operator=(const LiveProgress&) = delete;

  // Starts the ticker thread (shows a line at once, then every
  // tick_seconds on the clock). Without `out`, or after Finish, does
  // nothing. REQUIRES: called at most once.
  void Start() ABSL_LOCKS_EXCLUDED(mu_);

  // After a barrier of the job: refreshes the estimate from `store` (see
  // the file comment; `sizes` may be null: no size estimate) and shows the
  // progress line. Returns the estimate (percent 0 until the first read).
  SnapshotProgressEstimate Observe(const JobProgress& progress,
                                   StateStore& store, VnodeSizeEstimator* sizes)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The runtime recovers from an error: ends the current line (so that a
  // message can follow it) and shows "recovering" until the next Observe.
  void OnRecovery() ABSL_LOCKS_EXCLUDED(mu_);

  // What the ticker thread does at each tick (public so that tests drive
  // it without a thread).
  void Tick() ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the ticker and ends the display (the last line completed).
  // Idempotent. Observe and OnRecovery after it compute but show nothing.
  void Finish() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Phase { kBeforeBackfill, kBackfill, kRecovering };

  // Seconds since construction on the clock.
  double Elapsed() const;
  // The phase line for `seconds`.
  PhaseSample PhaseAt(double seconds) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the committed progress and refreshes estimate_ (the read runs
  // without the lock).
  void Refresh(const JobProgress& progress, StateStore& store,
               VnodeSizeEstimator* sizes) ABSL_LOCKS_EXCLUDED(mu_);

  const LiveProgressOptions options_;
  Clock& clock_;
  const absl::Time start_;

  Mutex mu_;
  CondVar cv_;
  std::optional<ProgressDisplay> display_ ABSL_GUARDED_BY(mu_);
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kBeforeBackfill;
  SnapshotProgress snapshot_ ABSL_GUARDED_BY(mu_);
  SnapshotProgressEstimate estimate_ ABSL_GUARDED_BY(mu_);
  // The store's vnode sizes, taken once; nullopt until then.
  std::optional<std::vector<uint64_t>> vnode_bytes_ ABSL_GUARDED_BY(mu_);
  // The last read of the progress table: its epoch, job seconds, and the
  // actors' vnodes completed then.
  std::optional<Epoch> read_epoch_ ABSL_GUARDED_BY(mu_);
  double read_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t read_vnodes_completed_ ABSL_GUARDED_BY(mu_) = 0;
  // The upstream's rate over windows of at least a second.
  uint64_t rate_ops_ ABSL_GUARDED_BY(mu_) = 0;
  double rate_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  double upstream_ops_per_second_ ABSL_GUARDED_BY(mu_) = 0;
  // False until a second's worth of samples gave a rate.
  bool upstream_rate_known_ ABSL_GUARDED_BY(mu_) = false;
  // The last progress line's sample, and when a line was last shown.
  std::optional<JobProgressSample> last_sample_ ABSL_GUARDED_BY(mu_);
  double last_shown_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread ticker_;  // Started and joined by the owner's thread.
};

}  // namespace backfill

#endif  // TOOLS_LIVE_PROGRESS_H_
