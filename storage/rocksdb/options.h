// The options of the RocksDB state store and the types they use: what a
// caller configures (RocksDbStateStoreOptions, a FaultInjector) and what the
// store reports about its garbage collection (GcStats). No RocksDB type.
//
//   RocksDbStateStoreOptions options;
//   options.path = "/var/lib/backfill/state";
//   options.gc_tombstone_fraction = 0;   // no automatic GC
//   BACKFILL_RETURN_IF_ERROR(ValidateOptions(options));
#ifndef STORAGE_ROCKSDB_OPTIONS_H_
#define STORAGE_ROCKSDB_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

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
  // Open for reading only (rocksdb::DB::OpenForReadOnly), for inspecting a
  // stopped job's directory: nothing in `path` is created, written, renamed
  // or locked (no format version for a new database, no ACKNOWLEDGED_EPOCH
  // rewrite, no flush, compaction or GC; a write-ahead log is replayed in
  // memory only), while every check of a normal open still runs
  // (ACKNOWLEDGED_EPOCH and the MANIFEST prefix, paranoid checks,
  // verify_checksums_on_open). create_if_missing is ignored (a missing
  // database is NotFound); Checkpoint and Compact are FailedPrecondition.
  // Default false.
  bool read_only = false;
  // Block cache capacity in bytes (LRU). Default 64 MiB; 0 disables the
  // cache. Table files' index and filter blocks are cached in it too (at
  // high priority), so they count against it rather than growing with the
  // data; with no cache they are held in memory per open file.
  size_t block_cache_bytes = 64 << 20;
  // Target size of a table file's data block, uncompressed
  // (rocksdb::BlockBasedTableOptions::block_size). Default 4 KiB; in
  // [1 KiB, 1 MiB].
  size_t block_bytes = 4 << 10;
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
  // can only go in a compaction over every file (see
  // RocksDbStateStore::Compact()). The store runs one on a background thread
  // once the tombstones checkpointed since the last one (counted across
  // restarts: table files record theirs) reach max(gc_min_tombstones,
  // gc_tombstone_fraction x the estimated number of stored versions).
  // Default 0.2, in [0, 1]; 0 disables automatic GC (call Compact()
  // yourself).
  double gc_tombstone_fraction = 0.2;
  // Default 65536 tombstones; >= 1.
  uint64_t gc_min_tombstones = 65536;
  // Deletion-triggered compaction, long before a full one: a table file of
  // `data` written with at least kMinTombstonesToMarkFile tombstones that
  // are at least this fraction of its entries, or of some 131,072
  // consecutive ones (a run of deletes flushed with other writes), is marked
  // for compaction (RocksDB's TablePropertiesCollector::NeedCompact, as its
  // CompactOnDeletionCollector does for its own deletions, which this format
  // does not use). RocksDB's background threads then compact it into the next
  // level, where the compaction filter drops the versions its tombstones
  // shadow, so a scan of a half-deleted table skips one entry per deleted
  // row instead of two (the tombstones themselves still wait for a full
  // compaction). Default 0.5, in [0, 1]; 0 disables.
  double tombstone_compaction_fraction = 0.5;
};

// InvalidArgument naming the field and the value if `options` is outside the
// documented ranges; OK otherwise.
absl::Status ValidateOptions(const RocksDbStateStoreOptions& options);

// What automatic garbage collection has done (RocksDbStateStore::WaitForGc).
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

// What RocksDB itself counts for the store (RocksDbStateStore::Stats), for
// operations and metrics: its statistics tickers, cumulative since the store
// was opened (a reopened store starts again at 0), and its properties and
// file metadata as they are now. Nothing here is counted by the state store.
struct RocksDbStats {
  // Bytes of keys and values returned by point reads and iterators
  // (tickers BYTES_READ + ITER_BYTES_READ).
  uint64_t read_bytes = 0;
  // Bytes of keys and values written (ticker BYTES_WRITTEN).
  uint64_t written_bytes = 0;
  // Bytes compactions read and wrote, and flushes wrote (tickers
  // COMPACT_READ_BYTES, COMPACT_WRITE_BYTES, FLUSH_WRITE_BYTES).
  uint64_t compaction_read_bytes = 0;
  uint64_t compaction_written_bytes = 0;
  uint64_t flush_written_bytes = 0;
  // Block cache lookups that hit and missed (BLOCK_CACHE_HIT,
  // BLOCK_CACHE_MISS).
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;
  // Now, summed over the column families: bytes compactions still have to
  // rewrite (rocksdb.estimate-pending-compaction-bytes), the table files of
  // the current version and their bytes (both from the column families'
  // metadata, GetColumnFamilyMetaData), bytes in memtables
  // (rocksdb.cur-size-all-mem-tables).
  uint64_t pending_compaction_bytes = 0;
  uint64_t sst_files = 0;
  uint64_t sst_bytes = 0;
  uint64_t memtable_bytes = 0;
  // Now: bytes the open table files hold outside the block cache
  // (rocksdb.estimate-table-readers-mem; small, since their index and filter
  // blocks are cached) and bytes in the block cache
  // (rocksdb.block-cache-usage, at most block_cache_bytes).
  uint64_t table_readers_bytes = 0;
  uint64_t block_cache_bytes = 0;
  // Now: RocksDB's background work. Flushes and compactions running
  // (rocksdb.num-running-flushes, rocksdb.num-running-compactions), and
  // column families with a flush or a compaction due but not started
  // (rocksdb.mem-table-flush-pending, rocksdb.compaction-pending: a level
  // over its target size, or files marked for compaction). All 0: RocksDB
  // is idle until the next write.
  uint64_t running_flushes = 0;
  uint64_t running_compactions = 0;
  uint64_t pending_flushes = 0;
  uint64_t pending_compactions = 0;
};

}  // namespace backfill

#endif  // STORAGE_ROCKSDB_OPTIONS_H_
