// MvccIterator: the committed rows of one (table, vnode) within a PkRange as
// of one read epoch, over a RocksDB iterator of the `data` column family
// (storage/FORMAT.md, "Reads"). Per pk it yields the newest version <=
// the read epoch unless that version is a tombstone.
//
//   MvccIterator it(MvccScan{.table_id = 7, .vnode = 3, .range = range,
//                            .read_epoch = Epoch(42)},
//                   [&](const rocksdb::ReadOptions& options) {
//                     return db->NewIterator(options, data_family);
//                   },
//                   /*pin=*/nullptr);
//   for (it.SeekToFirst(); it.Valid(); it.Next()) Use(it.key(), it.value());
//
// The RocksDB iterator starts at the range (iterate_lower_bound); a range
// with a max is also bounded there (iterate_upper_bound), one without ends
// at the first key past the vnode, which the iterator reads but never
// returns (no bound: RocksDB would compare every key to it). Keys are decoded
// with storage/table_key.h (DecodeFullKey, SplitEncodedFullKey); a key or value
// that no checkpoint can have written is DataLoss naming the table, vnode
// and key. Positioning, views and errors as StateStoreIterator.
#ifndef STORAGE_ROCKSDB_MVCC_ITERATOR_H_
#define STORAGE_ROCKSDB_MVCC_ITERATOR_H_

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/slice.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/internal/committed_layer.h"
#include "storage/state_store.h"
#include "storage/table_key.h"

namespace backfill {
namespace rocksdb_internal {

// What an MvccIterator reads.
struct MvccScan {
  TableId table_id = 0;
  VirtualNode vnode = 0;
  PkRange range;
  Epoch read_epoch;
  // ScanOptions::fill_cache. Default true.
  bool fill_cache = true;
  // True for a read of one pk (Get): the RocksDB iterator may then use the
  // user-key prefix bloom filters (prefix_same_as_start); a scan crosses
  // prefixes and reads in total order. Default false.
  bool point_lookup = false;
};

class MvccIterator final : public StateStoreIterator {
 public:
  // `open` makes the RocksDB iterator from read options whose bounds point
  // into this object (called once, in the constructor). `pin` (may be null)
  // is held until the iterator is destroyed.
  MvccIterator(
      MvccScan scan,
      absl::FunctionRef<rocksdb::Iterator*(const rocksdb::ReadOptions&)> open,
      std::unique_ptr<storage_internal::EpochPin> pin);

  bool Valid() const override { return valid_; }
  void SeekToFirst() override { Seek(scan_.range.inclusive_min); }
  void Seek(absl::string_view pk) override;
  void Next() override;
  absl::string_view key() const override { return key_; }
  absl::string_view value() const override { return value_; }
  absl::Status status() const override { return status_; }
  // The rows in one loop: no virtual call per row.
  size_t VisitRows(size_t max_rows,
                   absl::FunctionRef<bool(absl::string_view, absl::string_view)>
                       visit) override;

 private:
  // From the RocksDB iterator's position (the first candidate version of
  // some pk), finds the first live row or fails; `skipping`: first moves
  // past the versions of the row SkipFrom saved. The one place that skips
  // older versions (after a row, and after a tombstone).
  void Settle(bool skipping);
  // Saves `key`'s user key as the row whose older versions Settle skips.
  void SkipFrom(absl::string_view key);
  bool IsSkipped(absl::string_view key) const;
  absl::Status CorruptKey(absl::string_view key,
                          absl::string_view reason) const;

  const MvccScan scan_;
  const std::unique_ptr<storage_internal::EpochPin> pin_;
  std::string lower_;
  std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  // Declared after the bounds it points to.
  std::unique_ptr<rocksdb::Iterator> iterator_;
  std::string seek_key_;
  std::string skipped_user_key_;  // its first bytes (may be longer)
  size_t skipped_key_size_ = 0;   // the full key's size
  bool valid_ = false;
  absl::string_view key_;
  absl::string_view value_;
  absl::Status status_;
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_MVCC_ITERATOR_H_
