// StorageMetrics: the metric handles of the state store's own figures, taken
// from RocksDB's statistics and properties (never counted by the job), built
// from a shared Registry. //tools:job_metrics_recorder fills them from
// RocksDbStateStore::Stats (storage/rocksdb/options.h, RocksDbStats).
//
//   BACKFILL_ASSIGN_OR_RETURN(StorageMetrics metrics,
//                             StorageMetrics::Create(registry));
//   metrics.read_bytes_total.Increment(bytes);
//
// The series (no labels: one store per process):
// - backfill_rocksdb_read_bytes_total, backfill_rocksdb_written_bytes_total
//   (counters): bytes of keys and values read (point reads and iterators)
//   and written.
// - backfill_rocksdb_compaction_read_bytes_total,
//   backfill_rocksdb_compaction_written_bytes_total,
//   backfill_rocksdb_flush_written_bytes_total (counters): background I/O.
// - backfill_rocksdb_block_cache_hits_total,
//   backfill_rocksdb_block_cache_misses_total (counters).
// - backfill_rocksdb_pending_compaction_bytes, backfill_rocksdb_sst_files,
//   backfill_rocksdb_sst_bytes, backfill_rocksdb_memtable_bytes,
//   backfill_rocksdb_table_readers_bytes, backfill_rocksdb_block_cache_bytes
//   (gauges): bytes compactions still have to rewrite, live table files and
//   their bytes, bytes in memtables, bytes open table files hold outside
//   the block cache, bytes in the block cache.
#ifndef METRICS_STORAGE_METRICS_H_
#define METRICS_STORAGE_METRICS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/registry.h"

namespace backfill {

struct StorageMetrics {
  static constexpr absl::string_view kReadBytesTotal =
      "backfill_rocksdb_read_bytes_total";
  static constexpr absl::string_view kWrittenBytesTotal =
      "backfill_rocksdb_written_bytes_total";
  static constexpr absl::string_view kCompactionReadBytesTotal =
      "backfill_rocksdb_compaction_read_bytes_total";
  static constexpr absl::string_view kCompactionWrittenBytesTotal =
      "backfill_rocksdb_compaction_written_bytes_total";
  static constexpr absl::string_view kFlushWrittenBytesTotal =
      "backfill_rocksdb_flush_written_bytes_total";
  static constexpr absl::string_view kBlockCacheHitsTotal =
      "backfill_rocksdb_block_cache_hits_total";
  static constexpr absl::string_view kBlockCacheMissesTotal =
      "backfill_rocksdb_block_cache_misses_total";
  static constexpr absl::string_view kPendingCompactionBytes =
      "backfill_rocksdb_pending_compaction_bytes";
  static constexpr absl::string_view kSstFiles = "backfill_rocksdb_sst_files";
  static constexpr absl::string_view kSstBytes = "backfill_rocksdb_sst_bytes";
  static constexpr absl::string_view kMemtableBytes =
      "backfill_rocksdb_memtable_bytes";
  static constexpr absl::string_view kTableReadersBytes =
      "backfill_rocksdb_table_readers_bytes";
  static constexpr absl::string_view kBlockCacheBytes =
      "backfill_rocksdb_block_cache_bytes";

  // The handles, registering the families on first use (calling it again
  // returns the same series). Handles stay valid as long as `registry`.
  // Errors: AlreadyExists if `registry` holds one of these names with a
  // different definition. Thread-safe.
  static absl::StatusOr<StorageMetrics> Create(Registry& registry);

  // Default-constructed handles are detached (updates go nowhere).
  Counter read_bytes_total;
  Counter written_bytes_total;
  Counter compaction_read_bytes_total;
  Counter compaction_written_bytes_total;
  Counter flush_written_bytes_total;
  Counter block_cache_hits_total;
  Counter block_cache_misses_total;
  Gauge pending_compaction_bytes;
  Gauge sst_files;
  Gauge sst_bytes;
  Gauge memtable_bytes;
  Gauge table_readers_bytes;
  Gauge block_cache_bytes;
};

}  // namespace backfill

#endif  // METRICS_STORAGE_METRICS_H_
