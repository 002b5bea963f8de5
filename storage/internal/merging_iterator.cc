#include "storage/internal/merging_iterator.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace backfill {
namespace storage_internal {

MergingIterator::MergingIterator(
    std::unique_ptr<StateStoreIterator> base,
    std::vector<std::shared_ptr<const MemTable>> overlays, VirtualNode vnode,
    PkRange range)
    : base_(std::move(base)), vnode_(vnode), range_(std::move(range)) {
  cursors_.reserve(overlays.size());
  for (auto& table : overlays) {
    Cursor cursor;
    MemTableRange(*table, vnode_, range_, &cursor.it, &cursor.end);
    cursor.table = std::move(table);
    cursor.it = cursor.end;  // Unpositioned until a Seek.
    cursors_.push_back(std::move(cursor));
  }
}

void MergingIterator::Seek(absl::string_view pk) {
  absl::string_view target =
      std::max(pk, absl::string_view(range_.inclusive_min));
  base_->Seek(target);
  SetMemTableKey(vnode_, target, &seek_key_);
  for (Cursor& cursor : cursors_) {
    cursor.it = cursor.table->lower_bound(seek_key_);
    // lower_bound may land past the range's end: clamp.
    if (cursor.end != cursor.table->end() &&
        (cursor.it == cursor.table->end() ||
         cursor.it->first >= cursor.end->first)) {
      cursor.it = cursor.end;
    }
  }
  FindCurrent();
}

void MergingIterator::FindCurrent() {
  while (true) {
    if (!base_->status().ok()) {
      current_ = kNone;
      return;
    }
    int winner = base_->Valid() ? kBase : kNone;
    absl::string_view best =
        winner == kBase ? base_->key() : absl::string_view();
    for (int i = static_cast<int>(cursors_.size()) - 1; i >= 0; --i) {
      // Walk from the lowest priority up so that on equal keys the highest
      // priority (lowest index) overlay wins.
      const Cursor& cursor = cursors_[i];
      if (cursor.AtEnd()) continue;
      absl::string_view pk = cursor.pk();
      if (winner == kNone || pk <= best) {
        winner = i;
        best = pk;
      }
    }
    if (winner == kNone) {
      current_ = kNone;
      return;
    }
    if (winner >= 0 && !cursors_[winner].it->second.has_value()) {
      AdvancePast(best, winner);  // Tombstone: skip the pk everywhere.
      continue;
    }
    current_ = winner;
    return;
  }
}

void MergingIterator::AdvancePast(absl::string_view pk, int winner) {
  // `pk` points into the winner's storage; overlay keys are stable (the
  // tables are immutable while we hold them), the base's key is not: move
  // the base last.
  for (Cursor& cursor : cursors_) {
    if (!cursor.AtEnd() && cursor.pk() == pk) ++cursor.it;
  }
  if (base_->Valid() && (winner == kBase || base_->key() == pk)) {
    base_->Next();
  }
}

void MergingIterator::Next() {
  assert(Valid());
  AdvancePast(key(), current_);
  FindCurrent();
}

absl::string_view MergingIterator::key() const {
  assert(Valid());
  return current_ == kBase ? base_->key() : cursors_[current_].pk();
}

absl::string_view MergingIterator::value() const {
  assert(Valid());
  return current_ == kBase ? base_->value()
                           : absl::string_view(*cursors_[current_].it->second);
}

}  // namespace storage_internal
}  // namespace backfill
