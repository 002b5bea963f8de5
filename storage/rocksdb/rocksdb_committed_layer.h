// RocksDbCommittedLayer: the committed data of the state store in one
// RocksDB database (storage/FORMAT.md): what LayeredStateStore
// (storage/internal/layered_state_store.h) builds the StateStore protocol
// on. Atomic checkpoint writes, MVCC reads (MvccIterator), GC pins and
// horizon (GcEpochs), automatic full compactions (GcScheduler), and the
// acknowledged-epoch record after each synced checkpoint.
//
//   auto layer = std::make_unique<RocksDbCommittedLayer>(
//       std::move(database), gc, options, std::move(acknowledged_writer));
//   BACKFILL_RETURN_IF_ERROR(layer->CountStoredTombstones());
#ifndef STORAGE_ROCKSDB_ROCKSDB_COMMITTED_LAYER_H_
#define STORAGE_ROCKSDB_ROCKSDB_COMMITTED_LAYER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/committed_layer.h"
#include "storage/rocksdb/acknowledged_epoch.h"
#include "storage/rocksdb/database.h"
#include "storage/rocksdb/gc_scheduler.h"
#include "storage/rocksdb/mvcc_compaction_filter.h"
#include "storage/rocksdb/options.h"

namespace backfill {
namespace rocksdb_internal {

// Thread-safe (CommittedLayer's contract).
class RocksDbCommittedLayer final : public storage_internal::CommittedLayer {
 public:
  // `gc` is the one `database` was opened with. `acknowledged` (may be null:
  // sync_on_checkpoint off) records every successful checkpoint. Starts the
  // GC thread (options.gc_tombstone_fraction > 0).
  RocksDbCommittedLayer(std::unique_ptr<Database> database,
                        std::shared_ptr<GcEpochs> gc,
                        const RocksDbStateStoreOptions& options,
                        std::unique_ptr<AcknowledgedEpochWriter> acknowledged);
  // Stops the GC thread (aborting a running compaction), then closes.
  ~RocksDbCommittedLayer() override;

  std::unique_ptr<storage_internal::EpochPin> Pin(Epoch epoch) override;
  void SetCommittedEpoch(Epoch epoch) override;
  // Freezes the GC epochs and stops the GC scheduler.
  void StopGarbageCollection() override;
  absl::Status Commit(const std::vector<storage_internal::CommitBatch>& batches,
                      Epoch committed_epoch) override;
  absl::StatusOr<std::optional<std::string>> Get(TableId table_id,
                                                 VirtualNode vnode,
                                                 absl::string_view pk,
                                                 Epoch read_epoch) override;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options,
      std::unique_ptr<storage_internal::EpochPin> pin) override;
  // Keeps one RocksDB iterator (prefix-bloom seeks) until the next Commit:
  // a seek costs a fraction of making an iterator, which Get does per call.
  std::unique_ptr<storage_internal::PointReader> NewPointReader(
      TableId table_id) override;

  // RocksDbStateStore::Compact.
  absl::Status Compact() { return gc_scheduler_.RunFullCompaction(); }
  // RocksDbStateStore::WaitForGc.
  GcStats WaitForGc() { return gc_scheduler_.WaitForGc(); }
  // RocksDbStateStore::Stats.
  RocksDbStats Stats() const { return database_->Stats(); }
  // RocksDbStateStore::CountStoredVersions.
  absl::StatusOr<uint64_t> CountStoredVersions();
  // RocksDbStateStore::ApproximateVnodeBytes.
  absl::StatusOr<std::vector<uint64_t>> ApproximateVnodeBytes(TableId table_id,
                                                              int vnode_count);
  // The database, for the independent committed reader
  // (committed_table_reader.h).
  Database& database() const { return *database_; }
  // Restarts the GC's count from the tombstones the table files hold (what
  // earlier runs checkpointed and no full compaction has dropped yet); may
  // start a full compaction at once. Called once, after opening.
  absl::Status CountStoredTombstones();

 private:
  class PointReader;

  // FailedPrecondition if versions `read_epoch` needs may be collected.
  absl::Status CheckHorizon(Epoch read_epoch) const;
  // FailedPrecondition: `operation` needs a store opened for writing.
  absl::Status ReadOnlyError(absl::string_view operation) const;
  // Flushes and compacts every file of `data` (the GC hook).
  absl::Status CompactEverything();

  const std::unique_ptr<Database> database_;
  const std::shared_ptr<GcEpochs> gc_;
  const bool sync_;
  const std::unique_ptr<AcknowledgedEpochWriter> acknowledged_;
  // Successful Commits so far: a PointReader's iterator made before the
  // latest one misses its data and is made again.
  std::atomic<uint64_t> commits_{0};
  GcScheduler gc_scheduler_;  // Destroyed first: its thread uses database_.
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_ROCKSDB_COMMITTED_LAYER_H_
