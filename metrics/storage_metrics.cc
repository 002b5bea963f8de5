#include "metrics/storage_metrics.h"

#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::StatusOr<StorageMetrics> StorageMetrics::Create(Registry& registry) {
  auto counter = [&](absl::string_view name,
                     absl::string_view help) -> absl::StatusOr<Counter> {
    BACKFILL_ASSIGN_OR_RETURN(CounterFamily * family,
                              registry.AddCounterFamily(name, help, {}));
    return family->WithLabels({});
  };
  auto gauge = [&](absl::string_view name,
                   absl::string_view help) -> absl::StatusOr<Gauge> {
    BACKFILL_ASSIGN_OR_RETURN(GaugeFamily * family,
                              registry.AddGaugeFamily(name, help, {}));
    return family->WithLabels({});
  };

  StorageMetrics metrics;
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.read_bytes_total,
      counter(kReadBytesTotal,
              "Bytes of keys and values RocksDB returned to point reads and "
              "iterators."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.written_bytes_total,
      counter(kWrittenBytesTotal,
              "Bytes of keys and values written to RocksDB."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.compaction_read_bytes_total,
      counter(kCompactionReadBytesTotal, "Bytes RocksDB compactions read."));
  BACKFILL_ASSIGN_OR_RETURN(metrics.compaction_written_bytes_total,
                            counter(kCompactionWrittenBytesTotal,
                                    "Bytes RocksDB compactions wrote."));
  BACKFILL_ASSIGN_OR_RETURN(metrics.flush_written_bytes_total,
                            counter(kFlushWrittenBytesTotal,
                                    "Bytes RocksDB memtable flushes wrote."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.block_cache_hits_total,
      counter(kBlockCacheHitsTotal, "RocksDB block cache lookups that hit."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.block_cache_misses_total,
      counter(kBlockCacheMissesTotal,
              "RocksDB block cache lookups that missed."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.pending_compaction_bytes,
      gauge(kPendingCompactionBytes,
            "Bytes RocksDB estimates its compactions still have to rewrite."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.sst_files, gauge(kSstFiles, "Live RocksDB table (SST) files."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.sst_bytes,
      gauge(kSstBytes, "Bytes of the live RocksDB table (SST) files."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.memtable_bytes,
      gauge(kMemtableBytes, "Bytes in RocksDB memtables."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.table_readers_bytes,
      gauge(kTableReadersBytes,
            "Bytes RocksDB's open table files hold outside the block cache."));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics.block_cache_bytes,
      gauge(kBlockCacheBytes, "Bytes in RocksDB's block cache."));
  return metrics;
}

}  // namespace backfill
