#include "storage/rocksdb/rocksdb_state_store.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/rocksdb/acknowledged_epoch.h"
#include "storage/rocksdb/committed_table_reader.h"
#include "storage/rocksdb/database.h"
#include "storage/rocksdb/mvcc_compaction_filter.h"
#include "storage/rocksdb/rocksdb_committed_layer.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

using rocksdb_internal::AcknowledgedEpoch;
using rocksdb_internal::AcknowledgedEpochWriter;
using rocksdb_internal::AcknowledgedNow;
using rocksdb_internal::Database;
using rocksdb_internal::GcEpochs;
using rocksdb_internal::RocksDbCommittedLayer;

absl::StatusOr<std::unique_ptr<RocksDbStateStore>> RocksDbStateStore::Open(
    const RocksDbStateStoreOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateOptions(options));
  // Read and checked before RocksDB replaces the MANIFEST it describes.
  BACKFILL_ASSIGN_OR_RETURN(
      std::optional<AcknowledgedEpoch> acknowledged,
      rocksdb_internal::ReadAcknowledgedEpoch(options.path));
  if (acknowledged.has_value()) {
    BACKFILL_RETURN_IF_ERROR(
        rocksdb_internal::CheckManifestPrefix(options.path, *acknowledged));
  }
  // Epoch 0 until the metadata is read: a compaction during the open keeps
  // everything.
  auto gc = std::make_shared<GcEpochs>(Epoch::Zero());
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<Database> database,
                            Database::Open(options, gc));
  BACKFILL_ASSIGN_OR_RETURN(const Epoch committed,
                            database->LoadCommittedEpoch());
  if (acknowledged.has_value() && acknowledged->epoch > committed) {
    return absl::DataLossError(absl::StrCat(
        "open ", options.path, ": the store restored checkpoint ",
        committed.value(), " but checkpoint ", acknowledged->epoch.value(),
        " had been acknowledged (", rocksdb_internal::kAcknowledgedEpochFile,
        "): the write-ahead log or MANIFEST lost its tail"));
  }
  std::unique_ptr<AcknowledgedEpochWriter> acknowledged_writer;
  // Read-only: the checks above ran; nothing is recorded.
  if (options.sync_on_checkpoint && !options.read_only) {
    BACKFILL_ASSIGN_OR_RETURN(acknowledged_writer,
                              AcknowledgedEpochWriter::Open(options.path));
    // Covers what this open wrote to the new MANIFEST at once.
    acknowledged_writer->Write(AcknowledgedNow(database->db(), committed));
  }
  Database& opened = *database;
  auto layer = std::make_unique<RocksDbCommittedLayer>(
      std::move(database), gc, options, std::move(acknowledged_writer));
  std::unique_ptr<RocksDbStateStore> store(
      new RocksDbStateStore(std::move(layer), committed));
  // Until SetCommitted, compactions keep every version: the persisted
  // epoch pins are held before any can pass them.
  BACKFILL_ASSIGN_OR_RETURN(const std::optional<Epoch> oldest_pin,
                            store->RestoreEpochPins());
  gc->SetCommitted(committed);
  // Earlier processes compacted with safe epochs up to `committed`, but
  // never past a pin they persisted: a read below that may miss versions,
  // and is refused rather than answered wrong.
  gc->RaiseHorizon(oldest_pin.has_value() ? std::min(committed, *oldest_pin)
                                          : committed);
  // Now that compactions drop what the committed epoch lets them drop.
  BACKFILL_RETURN_IF_ERROR(opened.EnableAutoCompactions());
  // Only now: the tombstones counted may start a full compaction at once,
  // which must see the committed epoch (before it, it kept every version).
  BACKFILL_RETURN_IF_ERROR(
      opened.NameCorruptFile(store->layer_->CountStoredTombstones()));
  return store;
}

RocksDbStateStore::RocksDbStateStore(
    std::unique_ptr<RocksDbCommittedLayer> layer, Epoch committed)
    : LayeredStateStore(std::move(layer), committed),
      layer_(static_cast<RocksDbCommittedLayer*>(&this->layer())) {}

absl::Status RocksDbStateStore::Compact() { return layer_->Compact(); }
GcStats RocksDbStateStore::WaitForGc() { return layer_->WaitForGc(); }
RocksDbStats RocksDbStateStore::Stats() const { return layer_->Stats(); }

absl::Status RocksDbStateStore::WaitForBackgroundWork(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const RocksDbStats stats = Stats();
    if (stats.running_flushes == 0 && stats.running_compactions == 0 &&
        stats.pending_flushes == 0 && stats.pending_compactions == 0) {
      return absl::OkStatus();
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "RocksDB still busy after ", absl::FormatDuration(timeout), ": ",
          stats.running_flushes, " flushes and ", stats.running_compactions,
          " compactions running, ", stats.pending_flushes, " flushes and ",
          stats.pending_compactions, " compactions due"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}
absl::StatusOr<uint64_t> RocksDbStateStore::CountStoredVersions() {
  return layer_->CountStoredVersions();
}
absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
RocksDbStateStore::NewRawCommittedRowIterator(const TableCatalog& catalog,
                                              Epoch read_epoch) {
  return rocksdb_internal::NewRawCommittedRowIterator(layer_->database(),
                                                      catalog, read_epoch);
}
absl::StatusOr<std::vector<uint64_t>> RocksDbStateStore::ApproximateVnodeBytes(
    TableId table_id, int vnode_count) {
  return layer_->ApproximateVnodeBytes(table_id, vnode_count);
}

}  // namespace backfill
