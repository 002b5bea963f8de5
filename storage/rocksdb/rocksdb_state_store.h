// The embedded state store: StateStore (storage/state_store.h) over one
// RocksDB database directory. No RocksDB type appears here (pimpl).
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
#ifndef STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_
#define STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/state_store.h"

namespace backfill {

// Fails file operations of a store on demand (tests, chaos runs). Called on
// RocksDB's foreground and background threads: must be thread-safe.
class FaultInjector {
 public:
  enum class Operation {
    kRead,   // Reading a file (SST blocks, WAL and MANIFEST on recovery, ...).
    kWrite,  // Appending to a file (WAL, SST, MANIFEST).
    kSync,   // Syncing a file to stable storage.
  };
  virtual ~FaultInjector() = default;
  // Called before each operation on `file_name` (a path); a non-OK status
  // fails the operation (RocksDB sees an I/O error; ResourceExhausted is a
  // full disk, ENOSPC "No space left on device").
  virtual absl::Status Check(Operation operation,
                             absl::string_view file_name) = 0;
};

struct RocksDbStateStoreOptions {
  // The database directory. Required.
  std::string path;
  // Create the database if `path` holds none. Default true; when false a
  // missing database is NotFound.
  bool create_if_missing = true;
  // Block cache capacity in bytes (LRU). Default 64 MiB; 0 disables the
  // cache.
  size_t block_cache_bytes = 64 << 20;
  // RocksDB write buffer (memtable) size in bytes. Default 64 MiB; >= 64 KiB.
  size_t write_buffer_bytes = 64 << 20;
  // fsync the write-ahead log at every checkpoint. Default true. When false a
  // machine crash (not a process crash) may lose the newest checkpoints, but
  // never leaves a partial one.
  bool sync_on_checkpoint = true;
  // Verify the checksum of every block of every table file when opening: a
  // corrupt file is DataLoss from Open instead of from whichever read first
  // reaches the block. Default false (it reads the whole database).
  bool verify_checksums_on_open = false;
  // Background flush and compaction threads. Default 2; >= 1.
  int max_background_jobs = 2;
  // Optional fault injection into every file operation. Default none.
  std::shared_ptr<FaultInjector> fault_injector;
  // Automatic garbage collection of tombstones. Flushes and compactions drop
  // versions shadowed by a newer one that every reader sees, but a tombstone
  // can only go in a compaction over every file (see Compact()). The store
  // runs one on a background thread once the tombstones checkpointed since
  // the last one (counted across restarts: table files record theirs) reach
  // max(gc_min_tombstones, gc_tombstone_fraction x the estimated number of
  // stored versions). Default 0.2, in [0, 1];
  // 0 disables automatic GC (call Compact() yourself).
  double gc_tombstone_fraction = 0.2;
  // Default 65536 tombstones; >= 1.
  uint64_t gc_min_tombstones = 65536;
};

// What automatic garbage collection has done (RocksDbStateStore::GcStats).
struct GcStats {
  // Full compactions run, by the background thread or Compact().
  uint64_t full_compactions = 0;
  // Tombstones checkpointed since the last full compaction started; at
  // open, the tombstones the table files hold (what earlier runs wrote).
  uint64_t pending_tombstones = 0;
  // The last background compaction's error (OK if none). A failed background
  // compaction is retried at the next trigger; it never fails a checkpoint.
  absl::Status last_error;
};

class RocksDbStateStore final : public StateStore {
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
  static absl::StatusOr<std::unique_ptr<RocksDbStateStore>> Open(
      const RocksDbStateStoreOptions& options);

  // REQUIRES: every LocalStateStore and iterator it made is destroyed.
  ~RocksDbStateStore() override;

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override;
  absl::Status Checkpoint(Epoch epoch) override;
  Epoch CommittedEpoch(TableId table_id) const override;
  bool IsCommitted(TableId table_id, Epoch epoch) const override;
  absl::Status WaitCommitted(TableId table_id, Epoch epoch, absl::Time deadline,
                             Cancellation& cancellation, Clock& clock) override;
  uint64_t AddCommitListener(std::function<void(Epoch)> listener) override;
  void RemoveCommitListener(uint64_t id) override;
  absl::StatusOr<std::optional<std::string>> Get(const TableKey& key,
                                                 Epoch read_epoch) override;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options = {}) override;

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

  // The number of stored versions (physical entries, tombstones included)
  // of all tables. Scans everything: for tests and operations.
  absl::StatusOr<uint64_t> CountStoredVersions();

 private:
  class Impl;
  explicit RocksDbStateStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace backfill

#endif  // STORAGE_ROCKSDB_ROCKSDB_STATE_STORE_H_
