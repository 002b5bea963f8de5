#include "executor/vnode_snapshot_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {

VnodeSnapshotReader::VnodeSnapshotReader(ReplicatedStateTable& table,
                                         std::vector<VnodeScanStart> starts)
    : table_(table), starts_(std::move(starts)) {
  Settle();
}

void VnodeSnapshotReader::Next() {
  iterator_->Next();
  if (!iterator_->Valid()) {
    if (!iterator_->status().ok()) {
      status_ = absl::Status(
          iterator_->status().code(),
          absl::StrCat("snapshot read of vnode ", starts_[current_].vnode, ": ",
                       iterator_->status().message()));
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
      status_ =
          absl::Status(iterator.status().code(),
                       absl::StrCat("snapshot read of vnode ", start.vnode,
                                    ": ", iterator.status().message()));
      return;
    }
    (*iterator)->SeekToFirst();
    if ((*iterator)->Valid()) {
      iterator_ = std::move(*iterator);
      return;
    }
    if (!(*iterator)->status().ok()) {
      status_ =
          absl::Status((*iterator)->status().code(),
                       absl::StrCat("snapshot read of vnode ", start.vnode,
                                    ": ", (*iterator)->status().message()));
      return;
    }
    ++current_;
  }
}

}  // namespace backfill
