#include "storage/rocksdb/rocksdb_committed_layer.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/mem_table.h"
#include "storage/rocksdb/mvcc_format.h"
#include "storage/rocksdb/mvcc_iterator.h"
#include "storage/rocksdb/status.h"
#include "storage/rocksdb/tombstone_counter.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace rocksdb_internal {

using storage_internal::CommitBatch;
using storage_internal::EpochPin;
using storage_internal::MemTablePk;
using storage_internal::MemTableVnode;

RocksDbCommittedLayer::RocksDbCommittedLayer(
    std::unique_ptr<Database> database, std::shared_ptr<GcEpochs> gc,
    const RocksDbStateStoreOptions& options,
    std::unique_ptr<AcknowledgedEpochWriter> acknowledged)
    : database_(std::move(database)),
      gc_(std::move(gc)),
      sync_(options.sync_on_checkpoint),
      acknowledged_(std::move(acknowledged)),
      gc_scheduler_(
          GcSchedulerOptions{
              // Read-only: no GC thread (it could only fail to compact).
              .tombstone_fraction =
                  options.read_only ? 0 : options.gc_tombstone_fraction,
              .min_tombstones = options.gc_min_tombstones},
          GcHooks{
              .full_compaction = [this] { return CompactEverything(); },
              .estimate_stored_versions =
                  [this] {
                    uint64_t stored = 0;
                    if (!database_->db().GetIntProperty(
                            database_->data(), "rocksdb.estimate-num-keys",
                            &stored)) {
                      stored = 0;
                    }
                    return stored;
                  },
              // Makes a running CompactRange return (Aborted).
              .abort_compaction =
                  [this] { database_->db().DisableManualCompaction(); },
          }) {}

RocksDbCommittedLayer::~RocksDbCommittedLayer() { gc_scheduler_.Stop(); }

std::unique_ptr<EpochPin> RocksDbCommittedLayer::Pin(Epoch epoch) {
  return gc_->Pin(epoch);
}

void RocksDbCommittedLayer::SetCommittedEpoch(Epoch epoch) {
  gc_->SetCommitted(epoch);
}

void RocksDbCommittedLayer::StopGarbageCollection() {
  gc_->Freeze();
  gc_scheduler_.Stop();
}

absl::Status RocksDbCommittedLayer::Commit(
    const std::vector<CommitBatch>& batches, Epoch committed_epoch) {
  if (database_->read_only()) return ReadOnlyError("checkpoint");
  rocksdb::WriteBatch batch;
  std::string key;
  std::string value;
  uint64_t tombstones = 0;
  for (const CommitBatch& commit : batches) {
    for (const auto& [memtable_key, entry] : *commit.data) {
      key.clear();
      AppendFullKey(commit.table_id, MemTableVnode(memtable_key),
                    MemTablePk(memtable_key), commit.epoch, &key);
      value.clear();
      if (entry.has_value()) {
        AppendRowValue(*entry, &value);
      } else {
        AppendTombstoneValue(&value);
        ++tombstones;
      }
      BACKFILL_RETURN_IF_ERROR(FromRocksDb(
          batch.Put(database_->data(), key, value), "checkpoint batch"));
    }
  }
  BACKFILL_RETURN_IF_ERROR(
      FromRocksDb(batch.Put(database_->meta(), kCommittedEpochKey,
                            EncodeCommittedEpoch(committed_epoch)),
                  "checkpoint batch"));
  rocksdb::WriteOptions write_options;
  write_options.sync = sync_;
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      database_->db().Write(write_options, &batch),
      absl::StrCat("checkpoint write of epoch ", committed_epoch.value(), " (",
                   batch.Count(), " entries)")));
  commits_.fetch_add(1, std::memory_order_release);
  if (acknowledged_ != nullptr) {
    acknowledged_->Write(AcknowledgedNow(database_->db(), committed_epoch));
  }
  if (tombstones > 0) gc_scheduler_.NoteTombstones(tombstones);
  return absl::OkStatus();
}

class RocksDbCommittedLayer::PointReader final
    : public storage_internal::PointReader {
 public:
  PointReader(RocksDbCommittedLayer& layer, TableId table_id)
      : layer_(layer), table_id_(table_id) {
    // Prefix mode: each seek consults the user-key bloom filters, and the
    // iterator ends at the end of the sought key's versions.
    options_.prefix_same_as_start = true;
    options_.total_order_seek = false;
  }

  absl::StatusOr<std::optional<std::string>> Get(VirtualNode vnode,
                                                 absl::string_view pk,
                                                 Epoch read_epoch) override {
    BACKFILL_RETURN_IF_ERROR(layer_.CheckHorizon(read_epoch));
    // Read before making the iterator: a Commit in between makes the next
    // call make another.
    const uint64_t commits = layer_.commits_.load(std::memory_order_acquire);
    if (iterator_ == nullptr || commits != commits_) {
      iterator_.reset(layer_.database_->db().NewIterator(
          options_, layer_.database_->data()));
      commits_ = commits;
    }
    // The newest version <= read_epoch sorts first among pk's versions from
    // read_epoch's suffix on.
    seek_key_.clear();
    AppendFullKey(table_id_, vnode, pk, read_epoch, &seek_key_);
    iterator_->Seek(ToSlice(seek_key_));
    if (!iterator_->Valid()) {
      BACKFILL_RETURN_IF_ERROR(FromRocksDb(
          iterator_->status(),
          absl::StrCat("point read of table ", table_id_, " vnode ", vnode)));
      return std::nullopt;
    }
    const absl::string_view key = ToStringView(iterator_->key());
    absl::StatusOr<FullKeyView> decoded = DecodeFullKey(key);
    if (!decoded.ok()) {
      return absl::DataLossError(
          absl::StrCat("corrupt state store key (", decoded.status().message(),
                       ") in a point read of table ", table_id_, " vnode ",
                       vnode, "; key ", absl::CHexEscape(key)));
    }
    if (decoded->table_id != table_id_ || decoded->vnode != vnode ||
        decoded->pk != pk) {
      return std::nullopt;  // No version of pk at or before read_epoch.
    }
    if (decoded->epoch == Epoch::Zero()) {
      return absl::DataLossError(absl::StrCat(
          "corrupt state store key (epoch 0 is never written) of table ",
          table_id_, " vnode ", vnode, "; key ", absl::CHexEscape(key)));
    }
    const absl::string_view stored = ToStringView(iterator_->value());
    absl::string_view row;
    switch (ParseMvccValue(stored, &row)) {
      case MvccValueKind::kRow:
        return std::string(row);
      case MvccValueKind::kTombstone:
        return std::nullopt;
      case MvccValueKind::kCorrupt:
        break;
    }
    return absl::DataLossError(absl::StrCat(
        "corrupt state store value (", DescribeCorruptValue(stored),
        ") of table ", table_id_, " vnode ", vnode, " pk ",
        absl::CHexEscape(pk), " @ ", decoded->epoch.DebugString()));
  }

 private:
  RocksDbCommittedLayer& layer_;
  const TableId table_id_;
  rocksdb::ReadOptions options_;
  std::unique_ptr<rocksdb::Iterator> iterator_;
  uint64_t commits_ = 0;
  std::string seek_key_;
};

std::unique_ptr<storage_internal::PointReader>
RocksDbCommittedLayer::NewPointReader(TableId table_id) {
  return std::make_unique<PointReader>(*this, table_id);
}

absl::StatusOr<std::optional<std::string>> RocksDbCommittedLayer::Get(
    TableId table_id, VirtualNode vnode, absl::string_view pk,
    Epoch read_epoch) {
  // One read: a reader of its own, whose iterator lives for this call.
  return PointReader(*this, table_id).Get(vnode, pk, read_epoch);
}

absl::StatusOr<std::unique_ptr<StateStoreIterator>>
RocksDbCommittedLayer::NewIterator(TableId table_id, VirtualNode vnode,
                                   const PkRange& range, Epoch read_epoch,
                                   const ScanOptions& options,
                                   std::unique_ptr<EpochPin> pin) {
  BACKFILL_RETURN_IF_ERROR(CheckHorizon(read_epoch));
  return std::unique_ptr<StateStoreIterator>(std::make_unique<MvccIterator>(
      MvccScan{.table_id = table_id,
               .vnode = vnode,
               .range = range,
               .read_epoch = read_epoch,
               .fill_cache = options.fill_cache},
      [this](const rocksdb::ReadOptions& read_options) {
        return database_->db().NewIterator(read_options, database_->data());
      },
      std::move(pin)));
}

absl::StatusOr<uint64_t> RocksDbCommittedLayer::CountStoredVersions() {
  rocksdb::ReadOptions options;
  options.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(
      database_->db().NewIterator(options, database_->data()));
  uint64_t count = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(it->status(), "count stored versions"));
  return count;
}

absl::StatusOr<std::vector<uint64_t>>
RocksDbCommittedLayer::ApproximateVnodeBytes(TableId table_id,
                                             int vnode_count) {
  if (vnode_count < 1 || vnode_count > kMaxVnodeCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("ApproximateVnodeBytes: vnode_count ", vnode_count,
                     " is not in [1, ", kMaxVnodeCount, "]"));
  }
  // Vnode v's keys are [table | v | ~max epoch, table | v + 1 | ~max epoch):
  // the empty pk at the newest epoch is the smallest key of a vnode (the
  // comparator orders by user key first, then the inverted epoch).
  std::vector<std::string> bounds(vnode_count + 1);
  for (int v = 0; v <= vnode_count; ++v) {
    AppendTableKeyPrefix(table_id, static_cast<VirtualNode>(v), &bounds[v]);
    AppendEpochSuffix(Epoch::Max(), &bounds[v]);
  }
  std::vector<rocksdb::Range> ranges;
  ranges.reserve(vnode_count);
  for (int v = 0; v < vnode_count; ++v) {
    ranges.emplace_back(bounds[v], bounds[v + 1]);
  }
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.include_files = true;
  // Precise (files_size_error_margin <= 0): a margin is a share of all the
  // files' size, which would swamp a small vnode. Still index blocks only.
  options.files_size_error_margin = -1;
  std::vector<uint64_t> sizes(vnode_count, 0);
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      database_->db().GetApproximateSizes(
          options, database_->data(), ranges.data(), vnode_count, sizes.data()),
      absl::StrCat("approximate sizes of table ", table_id, "'s ", vnode_count,
                   " vnodes")));
  return sizes;
}

absl::Status RocksDbCommittedLayer::CountStoredTombstones() {
  rocksdb::TablePropertiesCollection files;
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      database_->db().GetPropertiesOfAllTables(database_->data(), &files),
      "reading the table files' properties"));
  const uint64_t tombstones = StoredTombstones(files);
  if (tombstones > 0) gc_scheduler_.NoteTombstones(tombstones);
  return absl::OkStatus();
}

absl::Status RocksDbCommittedLayer::CheckHorizon(Epoch read_epoch) const {
  const Epoch horizon = gc_->horizon();
  if (read_epoch < horizon) {
    return absl::FailedPreconditionError(
        absl::StrCat("read at ", read_epoch.DebugString(),
                     " is older than the garbage-collection horizon ",
                     horizon.value(), "; versions it needs may be gone"));
  }
  return absl::OkStatus();
}

absl::Status RocksDbCommittedLayer::ReadOnlyError(
    absl::string_view operation) const {
  return absl::FailedPreconditionError(
      absl::StrCat(operation, ": the store at ", database_->path(),
                   " was opened read-only"));
}

absl::Status RocksDbCommittedLayer::CompactEverything() {
  if (database_->read_only()) return ReadOnlyError("full compaction");
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      database_->db().Flush(rocksdb::FlushOptions(), database_->data()),
      "flush before compaction"));
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  return FromRocksDb(database_->db().CompactRange(options, database_->data(),
                                                  nullptr, nullptr),
                     "full compaction");
}

}  // namespace rocksdb_internal
}  // namespace backfill
