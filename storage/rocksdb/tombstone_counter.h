// Counts the tombstones of each table file of the `data` column family into
// its user property "backfill.tombstones" (decimal), so that the count of
// tombstones waiting for a full compaction survives restarts: at open the
// store sums the property over every live file (storage/FORMAT.md).
//
//   family_options.table_properties_collector_factories.push_back(
//       std::make_shared<TombstoneCounterFactory>());
//   uint64_t pending = StoredTombstones(all_table_properties);
#ifndef STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_
#define STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_

#include <cstdint>

#include "rocksdb/db.h"
#include "rocksdb/table_properties.h"

namespace backfill {
namespace rocksdb_internal {

// Never change: persisted.
inline constexpr char kTombstonesProperty[] = "backfill.tombstones";

// One collector per table file being written (RocksDB's contract: used by
// one thread).
class TombstoneCounter final : public rocksdb::TablePropertiesCollector {
 public:
  // Counts plain values whose tag says tombstone (storage/FORMAT.md).
  rocksdb::Status AddUserKey(const rocksdb::Slice& key,
                             const rocksdb::Slice& value,
                             rocksdb::EntryType type,
                             rocksdb::SequenceNumber seq,
                             uint64_t file_size) override;
  rocksdb::Status Finish(rocksdb::UserCollectedProperties* properties) override;
  rocksdb::UserCollectedProperties GetReadableProperties() const override;
  const char* Name() const override { return "backfill.TombstoneCounter"; }

 private:
  uint64_t tombstones_ = 0;
};

class TombstoneCounterFactory final
    : public rocksdb::TablePropertiesCollectorFactory {
 public:
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context context) override;
  const char* Name() const override {
    return "backfill.TombstoneCounterFactory";
  }
};

// The sum of kTombstonesProperty over `files` (saturating; files as
// rocksdb::DB::GetPropertiesOfAllTables returns them). A file without
// the property (written before it existed) or with an unparsable one counts
// 0.
uint64_t StoredTombstones(const rocksdb::TablePropertiesCollection& files);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_TOMBSTONE_COUNTER_H_
