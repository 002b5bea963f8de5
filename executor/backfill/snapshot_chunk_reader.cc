#include "executor/backfill/snapshot_chunk_reader.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "ratelimit/rate_limit.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

SnapshotChunkReader::SnapshotChunkReader(ReplicatedStateTable& table,
                                         const BackfillState& state,
                                         MonitoredRateLimiter& limiter,
                                         uint32_t chunk_size,
                                         uint32_t max_vnode_scans_per_read)
    : table_(table),
      state_(state),
      limiter_(limiter),
      chunk_size_(chunk_size),
      max_vnode_scans_per_read_(
          std::max<uint32_t>(max_vnode_scans_per_read, 1)),
      vnodes_(state.owned_vnodes()) {
  const TableCatalog& catalog = table_.catalog();
  for (int s1 : table_.output_indices()) {
    types_.push_back(catalog.columns[s1].type);
  }
}

uint32_t SnapshotChunkReader::chunk_capacity() const {
  return SnapshotChunkSize(limiter_.limit(), chunk_size_);
}

void SnapshotChunkReader::Resize() {
  builder_.reset();
  permits_ = 0;
}

SnapshotChunkReader::Stats SnapshotChunkReader::stats() const {
  Stats stats = stats_;
  stats.open_scans = scan_ != nullptr ? 1 : 0;
  stats.live_builders = builder_.has_value() ? 1 : 0;
  return stats;
}

void SnapshotChunkReader::OpenScan() {
  const VirtualNode vnode = vnodes_[cursor_];
  VnodeScanStart start{vnode, std::nullopt};
  if (const auto* in_progress = std::get_if<InProgress>(state_.Get(vnode))) {
    start.after = in_progress->current_pos;
  }
  scan_ = std::make_unique<VnodeSnapshotReader>(
      table_, std::vector<VnodeScanStart>{std::move(start)});
  scan_->SeekToFirst();
  ++stats_.scans_opened;
  stats_.peak_open_scans = std::max(stats_.peak_open_scans, 1);
}

void SnapshotChunkReader::SkipCompleted() {
  while (cursor_ < vnodes_.size() &&
         std::holds_alternative<Completed>(*state_.Get(vnodes_[cursor_]))) {
    ++cursor_;
  }
}

std::optional<VnodeChunk> SnapshotChunkReader::TakeBuilder() {
  if (!builder_.has_value()) return std::nullopt;
  std::optional<DataChunk> data = builder_->Finish();
  builder_.reset();
  if (!data.has_value()) return std::nullopt;
  return VnodeChunk{builder_vnode_, std::move(*data)};
}

bool SnapshotChunkReader::AcquirePermitsNow() {
  if (limiter_.limit().is_disabled() || permits_ > 0) return true;
  const uint64_t batch = chunk_capacity();
  if (!limiter_.TryAcquire(batch).granted) return false;
  permits_ = batch;
  return true;
}

absl::StatusOr<SnapshotRead> SnapshotChunkReader::Read(size_t max_rows) {
  SnapshotRead result;
  const bool limited = !limiter_.limit().is_disabled();
  uint32_t opened = 0;
  size_t read = 0;
  while (true) {
    if (scan_ == nullptr) {
      // The next vnode to read: Completed ones (earlier epochs, a restart)
      // are skipped without I/O; the cursor only moves forward.
      SkipCompleted();
      if (cursor_ == vnodes_.size()) {
        result.outcome = SnapshotRead::kExhausted;
        return result;
      }
      if (opened == max_vnode_scans_per_read_) {
        result.outcome = SnapshotRead::kRowLimit;
        return result;
      }
      OpenScan();
      ++opened;
    }
    if (!scan_->Valid()) {
      BACKFILL_RETURN_IF_ERROR(scan_->status());
      // The vnode's scan ended: all its rows are handed out below.
      const VirtualNode vnode = vnodes_[cursor_];
      scan_.reset();
      ++cursor_;
      ++stats_.vnodes_finished;
      result.finished_vnodes.push_back(vnode);
      if (std::optional<VnodeChunk> rest = TakeBuilder()) {
        result.chunk = std::move(rest);
        // The last vnode: say so now (no I/O needed to know).
        SkipCompleted();
        result.outcome = cursor_ == vnodes_.size() ? SnapshotRead::kExhausted
                                                   : SnapshotRead::kChunk;
        return result;
      }
      continue;
    }
    if (read == max_rows) {
      result.outcome = SnapshotRead::kRowLimit;
      return result;
    }
    if (limited && permits_ == 0) {
      const uint64_t batch = chunk_capacity();
      const RateLimiter::TryAcquireResult acquired = limiter_.TryAcquire(batch);
      if (!acquired.granted) {
        result.outcome = SnapshotRead::kBlocked;
        result.retry_at = acquired.retry_at;
        return result;
      }
      permits_ = batch;
    }
    if (!builder_.has_value()) {
      builder_.emplace(types_, chunk_capacity());
      builder_vnode_ = vnodes_[cursor_];
      stats_.peak_live_builders = std::max(stats_.peak_live_builders, 1);
    }
    // A batch of the vnode's rows decoded straight into the chunk's
    // columns, as many as the row budget, the permits and the chunk allow.
    size_t want = max_rows - read;
    if (limited) want = std::min<size_t>(want, permits_);
    const size_t got = builder_->AppendColumns(
        want, [this](size_t n, absl::Span<std::vector<Datum>> columns) {
          return scan_->ReadColumns(n, columns);
        });
    read += got;
    if (limited) permits_ -= got;
    // A failed read ends the scan: report it now, even with a full chunk in
    // hand, so that no later reset of the scan can swallow it.
    BACKFILL_RETURN_IF_ERROR(scan_->status());
    if (builder_->full()) {
      std::optional<DataChunk> full = builder_->Finish();
      builder_.reset();
      result.outcome = SnapshotRead::kChunk;
      result.chunk = VnodeChunk{builder_vnode_, std::move(*full)};
      return result;
    }
  }
}

absl::StatusOr<std::vector<VnodeChunk>> SnapshotChunkReader::Flush() {
  if (scan_ != nullptr) {
    const absl::Status status = scan_->status();
    scan_.reset();
    BACKFILL_RETURN_IF_ERROR(status);
  }
  std::vector<VnodeChunk> chunks;
  if (std::optional<VnodeChunk> rest = TakeBuilder()) {
    chunks.push_back(std::move(*rest));
  }
  return chunks;
}

}  // namespace backfill
