// VnodeSnapshotReader: the backfill's snapshot of the upstream table, read
// through the replicated state table vnode by vnode, each vnode in pk order
// starting strictly after its backfill position.
//
// clang-format off
//   VnodeSnapshotReader reader(*replicated, {{3, std::nullopt}, {7, pos}});
//   for (reader.SeekToFirst(); reader.Valid(); reader.Next()) {
//     Append(reader.vnode(), reader.row());
//   }
//   BACKFILL_RETURN_IF_ERROR(reader.status());   // then: end of snapshot
// clang-format on
//
// Positioning follows LevelDB's iterators (and StateStoreIterator's): a new
// reader is not positioned (Valid() is false) until SeekToFirst().
//
// Rows come from the replicated table's current epoch (committed upstream
// data plus the epochs this actor replicated), projected to S2. Vnodes are
// read one after the other in the order given (all rows of a vnode, then the
// next), so every run of rows belongs to one vnode and rows of one vnode come
// in pk order. A vnode's iterator is created only when the reader reaches it
// (no per-epoch cost for vnodes the epoch never gets to). A start position
// that is an empty row (a table with an empty pk) means the vnode's only
// possible row was already sent: the vnode is skipped.
//
// Thread-safety: one thread at a time. The table must outlive the reader;
// the reader must be dropped before the table is written or committed.
#ifndef EXECUTOR_BACKFILL_VNODE_SNAPSHOT_READER_H_
#define EXECUTOR_BACKFILL_VNODE_SNAPSHOT_READER_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "serde/row.h"
#include "serde/vnode.h"
#include "storage/replicated_state_table.h"

namespace backfill {

// Where the snapshot of one vnode starts.
struct VnodeScanStart {
  VirtualNode vnode = 0;
  // Absent: the vnode's first row. Present: strictly after this pk (pk
  // columns in pk order), the vnode's backfill position.
  std::optional<Row> after;
};

class VnodeSnapshotReader {
 public:
  // Not positioned: no read happens until SeekToFirst(). REQUIRES: every
  // vnode is owned by `table`.
  VnodeSnapshotReader(ReplicatedStateTable& table,
                      std::vector<VnodeScanStart> starts);
  VnodeSnapshotReader(const VnodeSnapshotReader&) = delete;
  VnodeSnapshotReader& operator=(const VnodeSnapshotReader&) = delete;

  // Positions the reader at the first row of the first vnode that has one
  // (opening that vnode's iterator and those of the empty vnodes before it),
  // starting again from the first vnode if already positioned. Errors
  // surface through status().
  void SeekToFirst();
  // False before SeekToFirst(), at the end of the snapshot, or on error.
  bool Valid() const { return status_.ok() && iterator_ != nullptr; }
  // REQUIRES: Valid().
  void Next();
  // The vnode and S2 row of the current position; the row is valid until the
  // next Next(). REQUIRES: Valid().
  VirtualNode vnode() const { return starts_[current_].vnode; }
  RowView row() const { return iterator_->row(); }
  // The batch form of Next: appends column c of up to `max_rows` rows of the
  // current vnode, from the current row on, to (*columns)[c] (decoded in
  // place: RowIterator::ReadColumns) and returns how many. A batch never
  // spans two vnodes: when it ends the vnode, the reader moves on to the
  // next vnode as Next does. Read vnode() before the call. REQUIRES: Valid()
  // and columns.size() the S2 width.
  size_t ReadColumns(size_t max_rows, absl::Span<std::vector<Datum>> columns);
  // OK, or the first error met (sticky), with the vnode in its message.
  const absl::Status& status() const { return status_; }

  // Vnodes whose snapshot has been fully read (in the order given).
  int num_vnodes_exhausted() const { return static_cast<int>(current_); }

 private:
  // After the iterator moved: on its error, keeps it; at its end, opens the
  // next vnode's.
  void AfterMove();
  // Opens iterators from `current_` on until one has a row or none is left.
  void Settle();

  ReplicatedStateTable& table_;
  std::vector<VnodeScanStart> starts_;
  size_t current_ = 0;
  std::unique_ptr<RowIterator> iterator_;
  absl::Status status_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_VNODE_SNAPSHOT_READER_H_
