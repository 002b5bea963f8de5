#include "executor/backfill/vnode_snapshot_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

// `status` with the vnode whose read failed in front of its message.
absl::Status VnodeReadError(VirtualNode vnode, const absl::Status& status) {
  return absl::Status(
      status.code(),
      absl::StrCat("snapshot read of vnode ", vnode, ": ", status.message()));
}

}  // namespace

VnodeSnapshotReader::VnodeSnapshotReader(ReplicatedStateTable& table,
                                         std::vector<VnodeScanStart> starts)
    : table_(table), starts_(std::move(starts)) {}

void VnodeSnapshotReader::SeekToFirst() {
  iterator_.reset();
  status_ = absl::OkStatus();
  current_ = 0;
  Settle();
}

void VnodeSnapshotReader::Next() {
  iterator_->Next();
  AfterMove();
}

size_t VnodeSnapshotReader::ReadColumns(
    size_t max_rows, absl::Span<std::vector<Datum>> columns) {
  const size_t n = iterator_->ReadColumns(max_rows, columns);
  AfterMove();
  return n;
}

void VnodeSnapshotReader::AfterMove() {
  if (!iterator_->Valid()) {
    if (!iterator_->status().ok()) {
      status_ = VnodeReadError(starts_[current_].vnode, iterator_->status());
      iterator_.reset();
      return;
    }
    iterator_.reset();
    ++current_;
    Settle();
  }
}

void VnodeSnapshotReader::Settle() {
  while (current_ < starts_.size()) {
    const VnodeScanStart& start = starts_[current_];
    if (start.after.has_value() && start.after->empty()) {
      ++current_;  // empty pk: the vnode's only row was already sent
      continue;
    }
    PkRowRange range;
    if (start.after.has_value()) range = PkRowRange::After(*start.after);
    absl::StatusOr<std::unique_ptr<RowIterator>> iterator =
        table_.IterWithVnode(start.vnode, range);
    if (!iterator.ok()) {
      status_ = VnodeReadError(start.vnode, iterator.status());
      return;
    }
    (*iterator)->SeekToFirst();
    if ((*iterator)->Valid()) {
      iterator_ = std::move(*iterator);
      return;
    }
    if (!(*iterator)->status().ok()) {
      status_ = VnodeReadError(start.vnode, (*iterator)->status());
      return;
    }
    ++current_;
  }
}

}  // namespace backfill
