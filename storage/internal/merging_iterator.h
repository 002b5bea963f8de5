// MergingIterator: a LocalStateStore's read view of one (table, vnode, range):
// the committed iterator under a stack of overlays (the unsealed buffer, then
// sealed batches newest first). For a pk present in several sources, the
// first overlay that has it wins, then the committed data; a winning
// tombstone hides the row.
#ifndef STORAGE_INTERNAL_MERGING_ITERATOR_H_
#define STORAGE_INTERNAL_MERGING_ITERATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/internal/mem_table.h"
#include "storage/state_store.h"
#include "storage/table_key.h"

namespace backfill {
namespace storage_internal {

class MergingIterator final : public StateStoreIterator {
 public:
  // `overlays` in priority order (newest first); each non-empty in the
  // range. `base` is the committed iterator over the same vnode and range.
  MergingIterator(std::unique_ptr<StateStoreIterator> base,
                  std::vector<std::shared_ptr<const MemTable>> overlays,
                  VirtualNode vnode, PkRange range);

  bool Valid() const override { return current_ != kNone; }
  void SeekToFirst() override { Seek(range_.inclusive_min); }
  void Seek(absl::string_view pk) override;
  void Next() override;
  absl::string_view key() const override;
  absl::string_view value() const override;
  absl::Status status() const override { return base_->status(); }

 private:
  static constexpr int kNone = -2;
  static constexpr int kBase = -1;

  struct Cursor {
    std::shared_ptr<const MemTable> table;
    MemTable::const_iterator it;
    MemTable::const_iterator end;
    bool AtEnd() const { return it == end; }
    absl::string_view pk() const { return MemTablePk(it->first); }
  };

  // Positions `current_` at the first live row at or after the sources'
  // positions.
  void FindCurrent();
  // Advances every source positioned at `pk`; `pk` must stay valid, so the
  // base moves last.
  void AdvancePast(absl::string_view pk, int winner);

  std::unique_ptr<StateStoreIterator> base_;
  std::vector<Cursor> cursors_;
  VirtualNode vnode_;
  PkRange range_;
  int current_ = kNone;
  std::string seek_key_;
};

}  // namespace storage_internal
}  // namespace backfill

#endif  // STORAGE_INTERNAL_MERGING_ITERATOR_H_
