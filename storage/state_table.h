// StateTable: rows of one table (as its catalog describes them) over one
// LocalStateStore: primary-key encoding, vnode computation from the
// distribution key, value encoding, op-consistency checks, epoch protocol.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(auto table, StateTable::Create(catalog, store,
//                                                            owned_vnodes, {}));
//   BACKFILL_RETURN_IF_ERROR(table->InitEpoch(first_barrier_epoch, wait));
//   BACKFILL_RETURN_IF_ERROR(table->Insert({int64_t{1}, std::string("a")}));
//   BACKFILL_RETURN_IF_ERROR(table->Commit(next_barrier_epoch));
// clang-format on
//
// Protocol: InitEpoch once (it waits until the table's committed epoch
// reaches `first.prev`: reading earlier would miss data), then writes and
// reads, then Commit(next) at every barrier with next.prev == epoch();
// anything else is FailedPrecondition, never silent.
//
// Thread-safety: one thread at a time (an actor's), like its LocalStateStore.
// The StateStore must outlive the table.
#ifndef STORAGE_STATE_TABLE_H_
#define STORAGE_STATE_TABLE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "serde/memcmp_codec.h"
#include "serde/row.h"
#include "serde/value_codec.h"
#include "serde/vnode.h"
#include "serde/vnode_bitmap.h"
#include "serde/vnode_hash.h"
#include "storage/cancellation.h"
#include "storage/epoch.h"
#include "storage/state_store.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// How writes are checked against the table's current content.
enum class OpConsistency {
  // Insert requires the pk to be absent; Delete and Update require the stored
  // row to equal the given old row. A violation is FailedPrecondition.
  kConsistentOldValue,
  // No checks: the last write of a pk wins; Delete of an absent pk writes a
  // tombstone. (The replicated table mirrors another actor's checked writes.)
  kInconsistent,
};

struct StateTableOptions {
  // Default kConsistentOldValue.
  OpConsistency op_consistency = OpConsistency::kConsistentOldValue;
  // Default false: see LocalOptions::replicated. Set by ReplicatedStateTable.
  bool replicated = false;
  // Scans (IterWithVnode) add blocks to the cache; default true.
  bool fill_cache = true;
};

// How InitEpoch waits for the committed epoch.
struct InitWait {
  // Default: wait forever (until cancelled).
  absl::Time deadline = absl::InfiniteFuture();
  // Default: never cancelled.
  Cancellation* cancellation = nullptr;
  // Default: Clock::Real().
  Clock* clock = nullptr;
};

// A pk range of one vnode in row terms. Bounds are pk rows (or pk prefixes:
// fewer columns than the pk) under the table's pk order.
struct PkRowRange {
  // Absent: from the vnode's first row.
  std::optional<Row> start;
  // With a start: true = rows > start (and rows having start as a prefix are
  // skipped), false = rows >= start.
  bool start_exclusive = true;
  // Absent: to the vnode's last row. Rows >= end (or having end as a prefix)
  // are excluded.
  std::optional<Row> exclusive_end;

  static PkRowRange All() { return {}; }
  static PkRowRange After(Row pk) {
    return PkRowRange{std::move(pk), true, {}};
  }
};

// Rows of one vnode in pk order. LevelDB-shaped, with the storage iterators'
// positioning rule (as StateStoreIterator): a new iterator is not positioned
// (Valid() is false) until SeekToFirst().
//
//   for (it->SeekToFirst(); it->Valid(); it->Next()) Use(it->row());
//   BACKFILL_RETURN_IF_ERROR(it->status());
//
// row() and pk_bytes() are valid until the next move. Errors are sticky in
// status() and end iteration.
class RowIterator {
 public:
  virtual ~RowIterator() = default;
  virtual bool Valid() const = 0;
  // Positions at the first row of the iterator's range.
  virtual void SeekToFirst() = 0;
  // REQUIRES: Valid().
  virtual void Next() = 0;
  // The row (in the table's output columns). REQUIRES: Valid().
  virtual RowView row() const = 0;
  // The memcomparable pk bytes of the row. REQUIRES: Valid().
  virtual absl::string_view pk_bytes() const = 0;
  virtual absl::Status status() const = 0;

  // The batch form of `for (; Valid() && k < max_rows; Next(), ++k)` taking
  // row(): appends column c of each row, from the current one on, to
  // (*columns)[c] and returns how many rows it appended; the iterator is
  // left on the row after them. A scan that builds column-major chunks
  // decodes straight into them this way: no Row, no copy, one call per
  // batch. An error stops the batch (the rows before it are appended) and
  // is status()'s, as Next's would be.
  // REQUIRES: columns.size() is the rows' width.
  virtual size_t ReadColumns(size_t max_rows,
                             absl::Span<std::vector<Datum>> columns);
};

class StateTable {
 public:
  // Validates the catalog (InvalidArgument naming the field), that
  // `owned_vnodes` has catalog.vnode_count bits (InvalidArgument), and
  // creates the table's local instance in `store`. No I/O.
  static absl::StatusOr<std::unique_ptr<StateTable>> Create(
      const TableCatalog& catalog, StateStore& store, VnodeBitmap owned_vnodes,
      const StateTableOptions& options = {});

  StateTable(const StateTable&) = delete;
  StateTable& operator=(const StateTable&) = delete;
  ~StateTable();

  // True iff InitEpoch(first) would not wait: the committed epoch of the
  // table is >= first.prev. For drivers that must never block.
  bool ReadyToInit(EpochPair first) const;
  // Waits until the committed epoch >= first.prev (see InitWait), then makes
  // first.curr the current epoch. Errors: DeadlineExceeded, Cancelled,
  // FailedPrecondition if already initialised.
  absl::Status InitEpoch(EpochPair first, const InitWait& wait = {});

  // Writes of full rows (catalog column order). Errors: InvalidArgument for
  // a row of the wrong shape or types; FailedPrecondition for a row in an
  // unowned vnode, before InitEpoch, or (consistent mode) an inconsistent op,
  // each naming the table, vnode and pk.
  absl::Status Insert(RowView row);
  absl::Status Delete(RowView row);
  absl::Status Update(RowView old_row, RowView new_row);

  // The row with primary key `pk` (pk columns in pk order) at the current
  // epoch, or nullopt. Errors: as writes, plus DataLoss for corrupt values.
  absl::StatusOr<std::optional<Row>> GetRow(RowView pk);

  // Rows of `vnode` within `range`, in pk order, at the current epoch. The
  // iterator is not positioned: call SeekToFirst.
  // REQUIRES nothing of ownership for reads of owned vnodes; reading an
  // unowned vnode is FailedPrecondition.
  absl::StatusOr<std::unique_ptr<RowIterator>> IterWithVnode(
      VirtualNode vnode, const PkRowRange& range = {});

  // Seals this epoch's writes (for the next checkpoint, or privately for a
  // replicated table) and makes next.curr the current epoch.
  // Errors: FailedPrecondition unless next.prev == epoch().
  absl::Status Commit(EpochPair next);

  Epoch epoch() const { return local_->epoch(); }
  // The store the table lives in (for commit notifications).
  StateStore& store() const { return store_; }
  const TableCatalog& catalog() const { return catalog_; }
  const VnodeBitmap& vnodes() const { return vnodes_; }
  const KeySerde& pk_serde() const { return pk_serde_; }

  // The vnode of a full row / of a pk row (pk columns in pk order): the
  // vnode column's value if the catalog has one, else the hash of the
  // distribution key; vnode 0 for a singleton table. A vnode column value
  // outside [0, vnode_count) gives vnode_count (owned by nobody, so writes
  // fail with FailedPrecondition and reads find nothing).
  VirtualNode ComputeVnode(RowView row) const;
  VirtualNode ComputeVnodeByPk(RowView pk) const;

  // Decodes a stored row (as read from the store) into catalog columns:
  // value columns from the value, pk columns not in the value from the key;
  // other columns NULL. Errors: DataLoss naming the table, vnode and key.
  absl::Status DecodeRow(VirtualNode vnode, absl::string_view pk_bytes,
                         absl::string_view value, Row* out) const;
  // As DecodeRow, appending column c to (*columns)[c]; on an error the
  // columns are as they were. REQUIRES: columns.size() == the catalog's.
  absl::Status DecodeRowAppend(VirtualNode vnode, absl::string_view pk_bytes,
                               absl::string_view value,
                               absl::Span<std::vector<Datum>> columns) const;

 private:
  StateTable(TableCatalog catalog, VnodeBitmap vnodes, KeySerde pk_serde,
             VnodeHasher row_hasher, VnodeHasher pk_hasher,
             std::unique_ptr<ValueRowCodec> value_codec,
             std::unique_ptr<LocalStateStore> local, StateStore& store,
             StateTableOptions options);

  absl::Status Put(RowView row, VirtualNode vnode, absl::string_view pk_bytes);
  std::string ErrorContext(VirtualNode vnode, absl::string_view pk_bytes) const;
  // OK, or the codec's `decoded` error as DataLoss naming the table, vnode
  // and key.
  absl::Status CorruptValue(const absl::Status& decoded, VirtualNode vnode,
                            absl::string_view pk_bytes) const;
  absl::Status CheckWritable(RowView row, VirtualNode* vnode,
                             std::string* pk_bytes);

  TableCatalog catalog_;
  VnodeBitmap vnodes_;
  KeySerde pk_serde_;
  std::unique_ptr<ValueRowCodec> value_codec_;
  std::unique_ptr<LocalStateStore> local_;
  StateStore& store_;
  StateTableOptions options_;
  // The table's vnode function over full rows and over pk rows (the same
  // dist key, indexed in the row or in the pk).
  VnodeHasher row_hasher_;
  VnodeHasher pk_hasher_;
  // Position of the vnode column in the pk, or -1.
  int vnode_column_in_pk_ = -1;
  std::vector<DataType> column_types_;
  // Pk columns that are not stored in the value: (position in pk, column).
  std::vector<std::pair<int, int>> pk_only_columns_;
  // The value holds every column in order (the default): a stored row
  // decodes straight into the output row, reusing its storage.
  bool value_is_whole_row_ = false;
  bool initialised_ = false;
  // Scratch buffers reused by writes.
  std::string scratch_value_;
  Row scratch_row_;
};

}  // namespace backfill

#endif  // STORAGE_STATE_TABLE_H_
