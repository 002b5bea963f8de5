#include "storage/rocksdb/tombstone_counter.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "storage/rocksdb/mvcc_format.h"
#include "third_party/absl_extras/saturating.h"

namespace backfill {
namespace rocksdb_internal {

TombstoneCounter::TombstoneCounter(double compaction_fraction)
    : compaction_fraction_(compaction_fraction),
      window_threshold_(compaction_fraction > 0
                            ? static_cast<uint64_t>(std::ceil(
                                  compaction_fraction *
                                  static_cast<double>(kTombstoneWindowEntries)))
                            : 0) {}

rocksdb::Status TombstoneCounter::AddUserKey(const rocksdb::Slice& /*key*/,
                                             const rocksdb::Slice& value,
                                             rocksdb::EntryType type,
                                             rocksdb::SequenceNumber /*seq*/,
                                             uint64_t /*file_size*/) {
  absl::string_view row;
  const bool tombstone =
      type == rocksdb::kEntryPut &&
      ParseMvccValue(ToStringView(value), &row) == MvccValueKind::kTombstone;
  const uint64_t slot = entries_ % kTombstoneWindowEntries;
  ++entries_;
  if (tombstone) ++tombstones_;
  if (compaction_fraction_ <= 0 || dense_run_) return rocksdb::Status::OK();
  if (window_.empty()) window_.resize(kTombstoneWindowEntries / 64);
  uint64_t& word = window_[slot / 64];
  const uint64_t bit = uint64_t{1} << (slot % 64);
  // The entry kTombstoneWindowEntries back leaves the window.
  if ((word & bit) != 0) --window_tombstones_;
  if (tombstone) {
    word |= bit;
    ++window_tombstones_;
  } else {
    word &= ~bit;
  }
  dense_run_ = entries_ >= kTombstoneWindowEntries &&
               window_tombstones_ >= window_threshold_;
  return rocksdb::Status::OK();
}

rocksdb::Status TombstoneCounter::Finish(
    rocksdb::UserCollectedProperties* properties) {
  properties->emplace(kTombstonesProperty, absl::StrCat(tombstones_));
  return rocksdb::Status::OK();
}

rocksdb::UserCollectedProperties TombstoneCounter::GetReadableProperties()
    const {
  return {{kTombstonesProperty, absl::StrCat(tombstones_)}};
}

bool TombstoneCounter::NeedCompact() const {
  return compaction_fraction_ > 0 && tombstones_ >= kMinTombstonesToMarkFile &&
         (dense_run_ ||
          static_cast<double>(tombstones_) >=
              compaction_fraction_ * static_cast<double>(entries_));
}

rocksdb::TablePropertiesCollector*
TombstoneCounterFactory::CreateTablePropertiesCollector(
    rocksdb::TablePropertiesCollectorFactory::Context /*context*/) {
  return new TombstoneCounter(compaction_fraction_);
}

uint64_t StoredTombstones(const rocksdb::TablePropertiesCollection& files) {
  uint64_t tombstones = 0;
  for (const auto& [name, properties] : files) {
    const auto it =
        properties->user_collected_properties.find(kTombstonesProperty);
    uint64_t count = 0;
    if (it != properties->user_collected_properties.end() &&
        absl::SimpleAtoi(it->second, &count)) {
      tombstones = SaturatingAdd(tombstones, count);
    }
  }
  return tombstones;
}

}  // namespace rocksdb_internal
}  // namespace backfill
