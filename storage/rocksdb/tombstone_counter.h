// Counts the tombstones of each table file of the `data` column family into
// its user property "backfill.tombstones" (decimal), so that the count of
// tombstones waiting for a full compaction survives restarts: at open the
// store sums the property over every live file (storage/FORMAT.md). Also
// marks a file made mostly of tombstones, or holding a dense run of them,
// for compaction (RocksDbStateStoreOptions::tombstone_compaction_fraction).
//
//   family_options.table_properties_collector_factories.push_back(
//       std::make_shared<TombstoneCounterFactory>(/*compaction_fraction=*/0.5));
//   uint64_t pending = StoredTombstones(all_table_properties);
#ifndef STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_
#define STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_

#include <cstdint>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/table_properties.h"

namespace backfill {
namespace rocksdb_internal {

// Never change: persisted.
inline constexpr char kTombstonesProperty[] = "backfill.tombstones";

// A file needs at least this many tombstones to be marked for compaction
// (so that small flushes with a few deletes do not compact over and over).
inline constexpr uint64_t kMinTombstonesToMarkFile = 1024;

// The sliding window of a dense run: a file is marked too when some
// kTombstoneWindowEntries consecutive entries are tombstones in at least the
// compaction fraction (as RocksDB's CompactOnDeletionCollector does), so
// that a run of deletes flushed together with other writes is compacted
// even though the whole file's fraction is below it.
inline constexpr uint64_t kTombstoneWindowEntries = uint64_t{1} << 17;

// One collector per table file being written (RocksDB's contract: used by
// one thread).
class TombstoneCounter final : public rocksdb::TablePropertiesCollector {
 public:
  // `compaction_fraction` as RocksDbStateStoreOptions::
  // tombstone_compaction_fraction (0 never marks a file).
  explicit TombstoneCounter(double compaction_fraction = 0);

  // Counts plain values whose tag says tombstone (storage/FORMAT.md).
  rocksdb::Status AddUserKey(const rocksdb::Slice& key,
                             const rocksdb::Slice& value,
                             rocksdb::EntryType type,
                             rocksdb::SequenceNumber seq,
                             uint64_t file_size) override;
  rocksdb::Status Finish(rocksdb::UserCollectedProperties* properties) override;
  rocksdb::UserCollectedProperties GetReadableProperties() const override;
  const char* Name() const override { return "backfill.TombstoneCounter"; }
  // True iff compaction_fraction > 0, the file has >=
  // kMinTombstonesToMarkFile tombstones, and they are >= compaction_fraction
  // of its entries or of some kTombstoneWindowEntries consecutive ones:
  // RocksDB then marks it for compaction.
  bool NeedCompact() const override;

 private:
  double compaction_fraction_;
  uint64_t tombstones_ = 0;
  uint64_t entries_ = 0;
  // The last kTombstoneWindowEntries entries, one bit each (set: a
  // tombstone), as a ring; allocated at the first entry when
  // compaction_fraction > 0.
  std::vector<uint64_t> window_;
  uint64_t window_tombstones_ = 0;
  // Tombstones in a full window that make a dense run:
  // ceil(compaction_fraction x kTombstoneWindowEntries), set once.
  uint64_t window_threshold_;
  bool dense_run_ = false;
};

class TombstoneCounterFactory final
    : public rocksdb::TablePropertiesCollectorFactory {
 public:
  // Its collectors mark files as TombstoneCounter(compaction_fraction).
  explicit TombstoneCounterFactory(double compaction_fraction = 0)
      : compaction_fraction_(compaction_fraction) {}

  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context context) override;
  const char* Name() const override {
    return "backfill.TombstoneCounterFactory";
  }

 private:
  double compaction_fraction_;
};

// The sum of kTombstonesProperty over `files` (saturating; files as
// rocksdb::DB::GetPropertiesOfAllTables returns them). A file without
// the property (written before it existed) or with an unparsable one counts
// 0.
uint64_t StoredTombstones(const rocksdb::TablePropertiesCollection& files);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_
