// The embedded state store: StateStore (storage/state_store.h) over one
// RocksDB database directory. No RocksDB type appears here.
//
//   RocksDbStateStoreOptions options;
//   options.path = "/var/lib/backfill/state";
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStateStore> store,
//                             RocksDbStateStore::Open(options));
//   store->CommittedEpoch(table);   // restored from disk
//
// On-disk format: storage/FORMAT.md. Every checkpoint is one atomic RocksDB
// write batch holding all tables' data and the committed epoch, so after a
// crash the store holds exactly the last committed checkpoint. Versions that
// no reader can see any more are dropped by compaction (see Compact()).
//
// It is the protocol shared with the in-memory store (LayeredStateStore)
// over a RocksDB committed layer; the StateStore methods are that class's,
// and this one adds what only RocksDB has (Compact, WaitForGc,
// CountStoredVersions, Stats). Options: storage/rocksdb/options.h.
#ifndef STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_
#define STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/committed_rows.h"
#include "storage/epoch.h"
#include "storage/internal/layered_state_store.h"
#include "storage/rocksdb/options.h"
#include "storage/state_store.h"
#include "storage/table_catalog.h"
#include "storage/vnode_size_estimator.h"

namespace backfill {
namespace rocksdb_internal {
class RocksDbCommittedLayer;
}  // namespace rocksdb_internal

class RocksDbStateStore final : public storage_internal::LayeredStateStore,
                                public VnodeSizeEstimator {
 public:
  // Opens (or creates) the database at options.path and restores the
  // committed epoch. Errors: InvalidArgument for bad options; NotFound if
  // absent and !create_if_missing; DataLoss if any file is found corrupt
  // (CURRENT, MANIFEST, a write-ahead-log record, a table file block; never
  // skipped to open anyway), CURRENT is missing beside database files, or
  // the store restored an older checkpoint than it had acknowledged (see
  // FORMAT.md, ACKNOWLEDGED_EPOCH);
  // FailedPrecondition if the directory holds another format; storage
  // errors name the operation ("open ...").
  // With options.read_only nothing in the directory is created or written
  // (the checks above all run) and Checkpoint and Compact are
  // FailedPrecondition ("... opened read-only").
  static absl::StatusOr<std::unique_ptr<RocksDbStateStore>> Open(
      const RocksDbStateStoreOptions& options);

  // Flushes memtables and compacts the whole database, dropping every
  // version that no read at or after the safe epoch (min of the committed
  // epoch and the oldest pinned read) can see, tombstones included.
  // Flushes and background compactions drop shadowed versions too, but
  // tombstones only here (only a full compaction sees every older version).
  // The store also runs it by itself under churn (gc_tombstone_fraction).
  // Thread-safe; blocks.
  absl::Status Compact();

  // Blocks until no automatic garbage collection is due or running (for
  // tests, benchmarks and orderly shutdown), then returns its statistics.
  GcStats WaitForGc();

  // Blocks until RocksDB has no flush or compaction running or due (Stats():
  // running_* and pending_* all 0), polling every 10 ms: for tests and
  // benchmarks that measure the store as RocksDB's own background work
  // leaves it (deletion-triggered compactions included). Starts nothing.
  // DeadlineExceeded, with what is still running or due, after `timeout`.
  absl::Status WaitForBackgroundWork(absl::Duration timeout);

  // The number of stored versions (physical entries, tombstones included)
  // of all tables. Scans everything: for tests and operations.
  absl::StatusOr<uint64_t> CountStoredVersions();

  // The committed rows of `catalog` at `read_epoch` through the independent
  // raw reader (storage/rocksdb/committed_table_reader.h): this database
  // iterated by its own parsing and version resolution, not by the MVCC
  // iterator the StateStore reads use nor the state tables; for verdicts
  // (executor/runtime/verifier.h). Reads the database as of its creation.
  // Errors: InvalidArgument for a bad catalog, FailedPrecondition for a read
  // epoch above the committed one; the iterator's: DataLoss naming the
  // table, vnode, pk and epoch of corrupt bytes. The iterator must not
  // outlive the store. Thread-safe (each iterator: one thread at a time).
  absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
  NewRawCommittedRowIterator(const TableCatalog& catalog, Epoch read_epoch);

  // RocksDB's own statistics and properties of the store (bytes read and
  // written, compactions, block cache, table files; options.h). Cheap (no
  // data is read); thread-safe.
  RocksDbStats Stats() const;

  // VnodeSizeEstimator: rocksdb::DB::GetApproximateSizes over each vnode's
  // key range of the `data` column family, table files and memtables
  // (storage/vnode_size_estimator.h). Reads index blocks, not rows.
  absl::StatusOr<std::vector<uint64_t>> ApproximateVnodeBytes(
      TableId table_id, int vnode_count) override;

 private:
  RocksDbStateStore(
      std::unique_ptr<rocksdb_internal::RocksDbCommittedLayer> layer,
      Epoch committed);

  rocksdb_internal::RocksDbCommittedLayer* const layer_;  // Owned by the base.
};

}  // namespace backfill

#endif  // STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_
