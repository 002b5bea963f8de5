// SnapshotProgress: the share of a backfill's snapshot read so far, as a
// percentage a user can trust, and an ETA (issue 16 point 2). The progress
// line (progress_display.h) prints what it computes.
//
//   SnapshotProgress progress({.expected_total_rows = initial_rows});
//   // At every barrier, one entry per vnode of the upstream table:
//   SnapshotProgressEstimate estimate = progress.Update(seconds, vnodes);
//   sample.snapshot_percent = estimate.percent;   // monotone
//   sample.eta_seconds = estimate.eta_seconds;
//
// The total is estimated per vnode: a finished vnode counts the rows it
// read; any other counts max(rows read, its estimated bytes / bytes per row),
// where the estimated bytes are the store's cheap approximate size of the
// vnode's key range (VnodeSizeEstimator, storage/vnode_size_estimator.h),
// and bytes per row is learnt from the finished vnodes (their bytes over
// their rows) pooled with the prior `expected_total_rows` (all bytes over
// it) for the rows the finished vnodes do not account for yet: the prior
// weighs less as more is read, and a few finished vnodes with coarse size
// estimates cannot swing the total. Without a prior the finished vnodes
// alone; without bytes the prior alone; without either, the share of
// finished vnodes stands in.
//
// The percentage never decreases (a total refined upwards holds it until
// the reads catch up), never reaches 100 before every vnode is finished
// (capped at `max_percent_before_end`), and is 100 once they all are. The
// ETA is the estimated remaining rows over the rate of the last
// `eta_window_seconds` (so it follows a throttle or a pause).
//
// Nothing here reads a clock: samples carry their own time.
// Thread-safety: not thread-safe (one display thread).
#ifndef TOOLS_SNAPSHOT_PROGRESS_H_
#define TOOLS_SNAPSHOT_PROGRESS_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/types/span.h"

namespace backfill {

// One vnode of the upstream table at a barrier.
struct VnodeSnapshotProgress {
  // The store's approximate size of the vnode's key range (0 = unknown or
  // empty). Taken once, when the view is created, is enough.
  uint64_t estimated_bytes = 0;
  // Snapshot rows read from the vnode so far (persisted progress included).
  uint64_t rows_read = 0;
  // Every snapshot row of the vnode has been read.
  bool finished = false;
};

struct SnapshotProgressOptions {
  // Rows the snapshot is expected to hold (e.g. the table's row count at
  // creation); 0 = unknown. Only a prior: the finished vnodes replace it.
  uint64_t expected_total_rows = 0;
  // Width of the window the ETA's rate is measured over, seconds; > 0.
  // Default 10.
  double eta_window_seconds = 10;
  // The highest percentage shown while some vnode is unfinished, in
  // (0, 100). Default 99.9.
  double max_percent_before_end = 99.9;
};

struct SnapshotProgressEstimate {
  // Share of the snapshot read, in [0, 100]; never below an earlier one;
  // 100 iff every vnode is finished.
  double percent = 0;
  // Snapshot rows read so far, and the estimated total (>= rows_read; 0 =
  // unknown).
  uint64_t rows_read = 0;
  uint64_t estimated_total_rows = 0;
  // Rows per second over the recent window (0 until two samples span time:
  // rate_known says which).
  double rows_per_second = 0;
  bool rate_known = false;
  // Seconds until the snapshot is read at that rate: 0 once finished;
  // nullopt when the rate or the total is unknown.
  std::optional<double> eta_seconds;
  uint64_t vnodes_finished = 0;
  uint64_t vnodes_total = 0;
};

class SnapshotProgress {
 public:
  explicit SnapshotProgress(SnapshotProgressOptions options = {});

  // The estimate after a sample at `seconds` (non-decreasing across calls)
  // with every vnode's state.
  SnapshotProgressEstimate Update(
      double seconds, absl::Span<const VnodeSnapshotProgress> vnodes);

 private:
  const SnapshotProgressOptions options_;
  double percent_ = 0;
  // (seconds, rows read) samples within the window, oldest first.
  std::deque<std::pair<double, uint64_t>> window_;
};

}  // namespace backfill

#endif  // TOOLS_SNAPSHOT_PROGRESS_H_
