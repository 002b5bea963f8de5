// SST files of the shared store (issue 18): a sealed set of MVCC entries
// written as one immutable RocksDB block-based table, and read back with the
// state store's rules. No RocksDB type appears here: storage/shared uses this
// header without seeing RocksDB.
//
//   SstFileInfo info;
//   BACKFILL_ASSIGN_OR_RETURN(std::string bytes, WriteSst(batches, {}, &info));
//   ... upload `bytes` as an object ...
//   BACKFILL_ASSIGN_OR_RETURN(std::shared_ptr<const SstReader> sst,
//       SstReader::OpenBytes("sst/0001.sst", bytes, {}));
//   BACKFILL_ASSIGN_OR_RETURN(std::optional<std::string> row,
//       GetFromSsts({sst}, table, vnode, pk, Epoch(7)));
//
// The bytes are storage/FORMAT.md's `data` column family entries: keys
// table_id | vnode | pk | ~epoch ordered by backfill.MvccKeyComparator.v1,
// values tagged row / tombstone, bloom filters of the user-key prefix (10
// bits per key, no whole-key filter) and the `backfill.tombstones` property,
// written by rocksdb::SstFileWriter (sequence number 0). See FORMAT.md,
// "Shared-store SST files".
//
// Reads resolve versions exactly like RocksDbStateStore (one MvccIterator):
// per pk the newest version <= the read epoch across all the files given;
// a tombstone hides the row. Corrupt bytes are DataLoss naming the object.
//
// Thread-safety: an SstReader is immutable after Open and thread-safe;
// iterators are used by one thread at a time and keep their files alive.
#ifndef STORAGE_ROCKSDB_SST_FILE_H_
#define STORAGE_ROCKSDB_SST_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/internal/committed_layer.h"
#include "storage/state_store.h"
#include "storage/table_key.h"

namespace backfill {

// What an SST holds, computed when it is written.
struct SstFileInfo {
  uint64_t num_entries = 0;     // versions, tombstones included
  uint64_t num_tombstones = 0;  // of which tombstones
  Epoch min_epoch;              // smallest epoch of any entry
  Epoch max_epoch;              // largest epoch of any entry
  std::string smallest_key;     // encoded full keys (table_key.h)
  std::string largest_key;
  uint64_t size_bytes = 0;  // of the file
};

struct SstWriteOptions {
  // Uncompressed size of a data block, in bytes. Default 4096 (RocksDB's);
  // >= 256.
  size_t block_size = 4096;
  // Bloom filter bits per user-key prefix. Default 10 (~1% false
  // positives); 0 writes no filter.
  int bloom_bits_per_key = 10;
};

// Writes every version of `batches` (each tagged with its batch's epoch) into
// one SST and returns its bytes; sets `*info` (may be null). Entries are
// sorted by the MVCC comparator; if two batches hold the same (table, vnode,
// pk, epoch), the later batch in `batches` wins (as in one RocksDB write
// batch). Errors: InvalidArgument if there is no entry at all, or an epoch
// is 0 or a vnode out of range; Internal for RocksDB failures.
absl::StatusOr<std::string> WriteSst(
    const std::vector<storage_internal::CommitBatch>& batches,
    const SstWriteOptions& options, SstFileInfo* info);

// A block cache shared by SST readers (an LRU cache of uncompressed blocks).
class SstBlockCache {
 public:
  // `capacity_bytes` > 0.
  static std::shared_ptr<SstBlockCache> Create(size_t capacity_bytes);
  ~SstBlockCache();
  // Bytes of blocks held now.
  size_t usage_bytes() const;

  class Rep;
  Rep& rep() const { return *rep_; }

 private:
  explicit SstBlockCache(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

struct SstReaderOptions {
  // Shared by the readers given it. Default null: no block cache (every
  // read decodes its block from the file).
  std::shared_ptr<SstBlockCache> block_cache;
  // Read and check every block's checksum when opening, so a corrupt
  // object is DataLoss at once rather than at the first read of the bad
  // block. Default true.
  bool verify_checksums = true;
};

class SstReader {
 public:
  // Opens the SST in the local file `path`; `name` (the object's key or
  // URL) is quoted in every error. Errors: DataLoss if the bytes are not an
  // SST of this format (bad magic, checksum, another comparator, a key that
  // no checkpoint writes); NotFound if the file is missing.
  static absl::StatusOr<std::shared_ptr<const SstReader>> OpenFile(
      std::string name, const std::string& path,
      const SstReaderOptions& options);
  // Opens an SST held in memory (copied). Errors as OpenFile.
  static absl::StatusOr<std::shared_ptr<const SstReader>> OpenBytes(
      std::string name, absl::string_view bytes,
      const SstReaderOptions& options);

  ~SstReader();

  const std::string& name() const;
  // Entry count (from the file's properties), smallest and largest keys
  // (from the file); the epochs and tombstones are not recorded in the file
  // and are left 0 (the version's descriptor carries them).
  const SstFileInfo& info() const;
  // How many lookups the bloom filter answered "absent" without reading a
  // data block, since the reader was opened (for tests and metrics).
  uint64_t bloom_filter_skips() const;

  class Rep;
  Rep& rep() const { return *rep_; }

 private:
  explicit SstReader(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

// Merges `inputs` (any order; for the same full key in two inputs the
// earlier input wins) into one SST through the garbage-collection rule of
// the RocksDB store (storage/FORMAT.md, "Garbage collection"): per user key,
// the newest version <= `safe` is what every read at or after `safe` sees,
// so the older versions are dropped, and that version too if it is a
// tombstone and `drop_tombstones` (the caller sets it only when `inputs` are
// every file that can hold the key: a full compaction). Returns the bytes
// and sets `*info` (may be null); if nothing survives, returns "" and
// info->num_entries == 0. Errors: DataLoss naming the object for corrupt
// bytes or keys; InvalidArgument for bad options; Internal for RocksDB.
absl::StatusOr<std::string> CompactSsts(
    const std::vector<std::shared_ptr<const SstReader>>& inputs, Epoch safe,
    bool drop_tombstones, const SstWriteOptions& options, SstFileInfo* info);

// The newest version <= read_epoch of one key over `files` (any order; the
// epochs decide; for the same epoch in two files the earlier file wins);
// nullopt if none or a tombstone. Files whose key range cannot hold the key
// are skipped, the others are asked through their bloom filters. Errors:
// DataLoss naming the object for corrupt bytes.
absl::StatusOr<std::optional<std::string>> GetFromSsts(
    const std::vector<std::shared_ptr<const SstReader>>& files,
    TableId table_id, VirtualNode vnode, absl::string_view pk,
    Epoch read_epoch);

// The live rows of (table, vnode) in `range` as of read_epoch over `files`
// (resolved as GetFromSsts). A StateStoreIterator (storage/state_store.h);
// it keeps the files and `pin` (may be null) until destroyed.
std::unique_ptr<StateStoreIterator> NewSstsIterator(
    std::vector<std::shared_ptr<const SstReader>> files, TableId table_id,
    VirtualNode vnode, const PkRange& range, Epoch read_epoch, bool fill_cache,
    std::unique_ptr<storage_internal::EpochPin> pin);

}  // namespace backfill

#endif  // STORAGE_ROCKSDB_SST_FILE_H_
