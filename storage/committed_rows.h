// CommittedRowIterator: one table's committed rows, decoded into whole rows,
// in the table's storage order (vnode, then pk bytes), read WITHOUT the
// state-table classes (StateTable, ReplicatedStateTable). Verdicts use it
// (executor/runtime/verifier.h): a check that read through the code it
// checks would share that code's bugs.
//
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<CommittedRowIterator> it,
//                             NewStoreCommittedRowIterator(store, catalog, e));
//   for (it->SeekToFirst(); it->Valid(); it->Next()) Use(it->vnode(),
//   it->row()); BACKFILL_RETURN_IF_ERROR(it->status());
//
// Two sources:
//  * RocksDbStateStore::NewRawCommittedRowIterator: a raw RocksDB iteration
//    with its own resolution of versions (storage/rocksdb/
//    committed_table_reader.h), independent of the store's MVCC iterator too.
//  * NewStoreCommittedRowIterator (below), for any StateStore: the store's own
//    committed iterator (StateStore::NewIterator at the read epoch), vnode by
//    vnode. For the memory and shared stores this is what a verdict uses: it
//    does not share the state tables' code, but it does share the store's
//    read path.
// Both decode with CommittedRowDecoder (the serde codecs and the catalog).
//
// Thread-safety: an iterator is used by one thread at a time and must not
// outlive the store it reads. A CommittedRowDecoder is immutable.
#ifndef STORAGE_COMMITTED_ROWS_H_
#define STORAGE_COMMITTED_ROWS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/memcmp_codec.h"
#include "serde/order_type.h"
#include "serde/row.h"
#include "serde/value_row_codec.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/state_store.h"
#include "storage/table_catalog.h"

namespace backfill {

// LevelDB-shaped, over whole rows. A new iterator is not positioned: call
// SeekToFirst. pk() and row() are valid until the next move. An error makes
// Valid() false and is sticky in status(): DataLoss for bytes that do not
// decode (naming the table, vnode and pk), storage errors with context.
class CommittedRowIterator {
 public:
  virtual ~CommittedRowIterator() = default;

  virtual bool Valid() const = 0;
  // Positions at the table's first row (vnode 0 first).
  virtual void SeekToFirst() = 0;
  // REQUIRES: Valid().
  virtual void Next() = 0;
  // The current row's vnode and memcomparable pk bytes. REQUIRES: Valid().
  virtual VirtualNode vnode() const = 0;
  virtual absl::string_view pk() const = 0;
  // The current row: one datum per catalog column. REQUIRES: Valid().
  virtual const Row& row() const = 0;
  virtual absl::Status status() const = 0;
};

// Opens a CommittedRowIterator over `catalog`'s rows as of `read_epoch`.
using CommittedRowReader =
    std::function<absl::StatusOr<std::unique_ptr<CommittedRowIterator>>(
        const TableCatalog& catalog, Epoch read_epoch)>;

// Turns a stored (vnode, pk, value) of a table into its whole row: the value
// columns from the value codec of catalog.value_encoding, the pk columns not
// stored in the value from the pk bytes.
class CommittedRowDecoder {
 public:
  // Errors: InvalidArgument if ValidateTableCatalog rejects `catalog`.
  static absl::StatusOr<CommittedRowDecoder> Create(
      const TableCatalog& catalog);

  // Decodes into *out (one datum per column). Errors: DataLoss
  // "table 7 (t) vnode 3 pk \001: corrupt value: <why>" (or ": corrupt
  // key: <why>" when the pk bytes do not decode).
  absl::Status Decode(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value, Row* out) const;

  const TableCatalog& catalog() const { return catalog_; }

 private:
  CommittedRowDecoder(TableCatalog catalog,
                      std::shared_ptr<const ValueRowCodec> codec,
                      KeySerde pk_serde);

  TableCatalog catalog_;
  std::shared_ptr<const ValueRowCodec> codec_;
  KeySerde pk_serde_;
  // (position in the pk, column index) of pk columns absent from the value.
  std::vector<std::pair<int, int>> pk_only_columns_;
  // The value holds every column, in order: it decodes straight into a row.
  bool value_is_whole_row_ = false;
};

// "table 7 (t) vnode 3 pk \001\002" (pk C-escaped, non-printable bytes in
// octal): how errors name a row.
std::string DescribeStoredRow(const TableCatalog& catalog, VirtualNode vnode,
                              absl::string_view pk);

// The store's committed iterator over every vnode of `catalog` in turn (see
// the file comment). Errors: InvalidArgument for a bad catalog; the store's
// errors with their code, prefixed "table 7 (t) vnode 3: ".
absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
NewStoreCommittedRowIterator(StateStore& store, const TableCatalog& catalog,
                             Epoch read_epoch);

}  // namespace backfill

#endif  // STORAGE_COMMITTED_ROWS_H_
