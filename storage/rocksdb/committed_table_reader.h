// The RocksDB store's independent reader of committed rows: a raw iteration
// of the `data` column family (storage/FORMAT.md) with its own parsing of
// keys and values and its own resolution of versions, decoded into whole
// rows with the serde codecs and the table's catalog (CommittedRowDecoder).
// It shares neither the state-table classes nor the store's MVCC iterator
// (mvcc_iterator.h), so a verdict read through it does not share their bugs
// (a key they skip is still seen here).
//
//   BACKFILL_ASSIGN_OR_RETURN(auto it,
//       store.NewRawCommittedRowIterator(catalog, store.CommittedEpoch(id)));
//   for (it->SeekToFirst(); it->Valid(); it->Next()) Use(it->row());
//
// Resolution, written from FORMAT.md: the table's entries come in
// (vnode, pk) order, each row's versions newest first; per row, the versions
// above the read epoch are skipped, the first version at or below it decides
// (a row version is emitted, a tombstone hides the row), older ones are
// skipped. It checks what it relies on: every key parses (at least the
// table and vnode prefix and the epoch suffix; epoch 0 is corrupt), the
// vnode is below the catalog's vnode count, entries come in that order, and
// every value is a row or a bare tombstone; anything else is DataLoss naming
// the table, vnode, pk and epoch. A read epoch above the committed epoch the
// directory records (its own read of `committed_epoch`) is
// FailedPrecondition.
//
// The iteration reads the database as of its creation (RocksDB's implicit
// iterator snapshot, which pins the files it reads): a concurrent flush or
// compaction changes nothing it sees; a checkpoint after its creation is not
// seen. Memory: one row and RocksDB's read-ahead, whatever the table's size
// (blocks are read without filling the cache).
//
// Thread-safety: one thread at a time. It must not outlive the database.
#ifndef STORAGE_ROCKSDB_COMMITTED_TABLE_READER_H_
#define STORAGE_ROCKSDB_COMMITTED_TABLE_READER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "storage/committed_rows.h"
#include "storage/epoch.h"
#include "storage/table_catalog.h"

namespace backfill {
namespace rocksdb_internal {

class Database;

// The committed rows of `catalog` at `read_epoch` in `database` (see the
// file comment). Errors: InvalidArgument for a bad catalog; DataLoss for a
// corrupt committed epoch; FailedPrecondition for a read epoch above it.
absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
NewRawCommittedRowIterator(Database& database, const TableCatalog& catalog,
                           Epoch read_epoch);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_COMMITTED_TABLE_READER_H_
