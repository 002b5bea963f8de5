#include "tools/snapshot_progress.h"

#include <algorithm>
#include <cmath>

namespace backfill {

SnapshotProgress::SnapshotProgress(SnapshotProgressOptions options)
    : options_(options) {}

SnapshotProgressEstimate SnapshotProgress::Update(
    double seconds, absl::Span<const VnodeSnapshotProgress> vnodes) {
  SnapshotProgressEstimate estimate;
  estimate.vnodes_total = vnodes.size();
  double all_bytes = 0, finished_bytes = 0, finished_rows = 0;
  for (const VnodeSnapshotProgress& vnode : vnodes) {
    estimate.rows_read += vnode.rows_read;
    all_bytes += static_cast<double>(vnode.estimated_bytes);
    if (vnode.finished) {
      ++estimate.vnodes_finished;
      finished_bytes += static_cast<double>(vnode.estimated_bytes);
      finished_rows += static_cast<double>(vnode.rows_read);
    }
  }
  const bool all_finished = estimate.vnodes_finished == estimate.vnodes_total;

  // Bytes per row: the finished vnodes' bytes over their rows, pooled with
  // the prior's rows not yet accounted for by them (at the prior's bytes
  // per row), so that a few finished vnodes whose size estimates are off
  // (a store's estimate of a small range is coarse) do not swing the total;
  // the prior fades as the finished rows reach it.
  double bytes_per_row = 0;
  const double prior_rows = static_cast<double>(options_.expected_total_rows);
  if (prior_rows > 0 && all_bytes > 0) {
    const double unaccounted_rows = std::max(0.0, prior_rows - finished_rows);
    bytes_per_row =
        (finished_bytes + unaccounted_rows * (all_bytes / prior_rows)) /
        (finished_rows + unaccounted_rows);
  } else if (finished_rows > 0 && finished_bytes > 0) {
    bytes_per_row = finished_bytes / finished_rows;
  }
  double total = 0;
  if (bytes_per_row > 0) {
    for (const VnodeSnapshotProgress& vnode : vnodes) {
      const double rows = static_cast<double>(vnode.rows_read);
      total += vnode.finished
                   ? rows
                   : std::max(rows, static_cast<double>(vnode.estimated_bytes) /
                                        bytes_per_row);
    }
  } else if (options_.expected_total_rows > 0) {
    total = std::max(static_cast<double>(options_.expected_total_rows),
                     static_cast<double>(estimate.rows_read));
  }
  estimate.estimated_total_rows = static_cast<uint64_t>(std::llround(total));

  double raw = 0;
  if (total > 0) {
    raw = 100.0 * static_cast<double>(estimate.rows_read) / total;
  } else if (estimate.vnodes_total > 0) {
    raw = 100.0 * static_cast<double>(estimate.vnodes_finished) /
          static_cast<double>(estimate.vnodes_total);
  }
  if (all_finished) {
    percent_ = 100;
  } else {
    percent_ =
        std::max(percent_, std::min(raw, options_.max_percent_before_end));
  }
  estimate.percent = percent_;

  // The rate over the window: the oldest sample still inside it (and the
  // newest one before it, so a window is spanned even between sparse
  // samples).
  window_.emplace_back(seconds, estimate.rows_read);
  while (window_.size() > 2 &&
         window_[1].first <= seconds - options_.eta_window_seconds) {
    window_.pop_front();
  }
  const auto& [oldest_seconds, oldest_rows] = window_.front();
  if (seconds > oldest_seconds && estimate.rows_read >= oldest_rows) {
    estimate.rate_known = true;
    estimate.rows_per_second =
        static_cast<double>(estimate.rows_read - oldest_rows) /
        (seconds - oldest_seconds);
  }
  if (all_finished) {
    estimate.eta_seconds = 0;
  } else if (estimate.rows_per_second > 0 && total > 0) {
    estimate.eta_seconds =
        std::max(0.0, total - static_cast<double>(estimate.rows_read)) /
        estimate.rows_per_second;
  }
  return estimate;
}

}  // namespace backfill
