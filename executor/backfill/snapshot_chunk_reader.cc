#include "executor/backfill/snapshot_chunk_reader.h"

#include <utility>
#include <variant>

#include "ratelimit/rate_limit.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

SnapshotChunkReader::SnapshotChunkReader(ReplicatedStateTable& table,
                                         const BackfillState& state,
                                         MonitoredRateLimiter& limiter,
                                         uint32_t chunk_size)
    : table_(table), state_(state), limiter_(limiter), chunk_size_(chunk_size) {
  const TableCatalog& catalog = table_.catalog();
  for (int s1 : table_.output_indices()) {
    types_.push_back(catalog.columns[s1].type);
  }
  Resize();
}

uint32_t SnapshotChunkReader::chunk_capacity() const {
  return SnapshotChunkSize(limiter_.limit(), chunk_size_);
}

void SnapshotChunkReader::Resize() {
  const size_t capacity = chunk_capacity();
  builders_.clear();
  current_builder_ = nullptr;
  for (VirtualNode vnode : state_.owned_vnodes()) {
    builders_.emplace(vnode, DataChunkBuilder(types_, capacity));
  }
  permits_ = 0;
}

void SnapshotChunkReader::OpenReader() {
  std::vector<VnodeScanStart> starts;
  for (VirtualNode vnode : state_.owned_vnodes()) {
    const VnodeProgress* progress = state_.Get(vnode);
    if (std::holds_alternative<Completed>(*progress)) continue;
    VnodeScanStart start{vnode, std::nullopt};
    if (const InProgress* in_progress = std::get_if<InProgress>(progress)) {
      start.after = in_progress->current_pos;
    }
    starts.push_back(std::move(start));
  }
  reader_ = std::make_unique<VnodeSnapshotReader>(table_, std::move(starts));
  reader_->SeekToFirst();
}

bool SnapshotChunkReader::AcquirePermitsNow() {
  if (limiter_.limit().is_disabled() || permits_ > 0) return true;
  const uint64_t batch = chunk_capacity();
  if (!limiter_.TryAcquire(batch).granted) return false;
  permits_ = batch;
  return true;
}

absl::StatusOr<SnapshotRead> SnapshotChunkReader::Read(size_t max_rows) {
  if (reader_ == nullptr) OpenReader();
  SnapshotRead result;
  const bool limited = !limiter_.limit().is_disabled();
  for (size_t read = 0; read < max_rows; ++read) {
    if (!reader_->Valid()) {
      BACKFILL_RETURN_IF_ERROR(reader_->status());
      result.outcome = SnapshotRead::kExhausted;
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
    const VirtualNode vnode = reader_->vnode();
    if (current_builder_ == nullptr || current_builder_vnode_ != vnode) {
      current_builder_ = &builders_.at(vnode);
      current_builder_vnode_ = vnode;
    }
    std::optional<DataChunk> full = current_builder_->Append(reader_->row());
    if (limited) --permits_;
    reader_->Next();
    // A failed read ends the reader: report it now, even with a full chunk
    // in hand, so that no later reset of the reader can swallow it.
    BACKFILL_RETURN_IF_ERROR(reader_->status());
    if (full.has_value()) {
      result.outcome = SnapshotRead::kChunk;
      result.chunk = VnodeChunk{vnode, std::move(*full)};
      return result;
    }
  }
  result.outcome = SnapshotRead::kRowLimit;
  return result;
}

absl::StatusOr<std::vector<VnodeChunk>> SnapshotChunkReader::Flush() {
  if (reader_ != nullptr) {
    const absl::Status status = reader_->status();
    reader_.reset();
    BACKFILL_RETURN_IF_ERROR(status);
  }
  std::vector<VnodeChunk> chunks;
  for (auto& [vnode, builder] : builders_) {
    if (std::optional<DataChunk> data = builder.Finish()) {
      chunks.push_back(VnodeChunk{vnode, std::move(*data)});
    }
  }
  return chunks;
}

}  // namespace backfill
