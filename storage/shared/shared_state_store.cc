#include "storage/shared/shared_state_store.h"

#include <utility>

#include "third_party/absl_extras/status_macros.h"

namespace backfill {

using shared_internal::SharedCommittedLayer;
using shared_internal::Version;
using shared_internal::VersionSst;

absl::StatusOr<std::unique_ptr<SharedStateStore>> SharedStateStore::Open(
    const SharedStateStoreOptions& options) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<SharedCommittedLayer> layer,
                            SharedCommittedLayer::Open(options));
  const Epoch committed = layer->current()->committed_epoch;
  std::unique_ptr<SharedStateStore> store(
      new SharedStateStore(std::move(layer), committed));
  // Compaction runs only after a commit of this store: none passes the
  // pins before they are held. The version's own horizon is persisted.
  BACKFILL_RETURN_IF_ERROR(store->RestoreEpochPins().status());
  return store;
}

SharedStateStore::SharedStateStore(std::unique_ptr<SharedCommittedLayer> layer,
                                   Epoch committed)
    : LayeredStateStore(std::move(layer), committed),
      layer_(static_cast<SharedCommittedLayer*>(&this->layer())) {}

uint64_t SharedStateStore::VersionId() const { return layer_->current()->id; }

std::vector<std::string> SharedStateStore::SstObjects() const {
  std::vector<std::string> keys;
  for (const VersionSst& sst : layer_->current()->ssts) {
    keys.push_back(sst.object_key);
  }
  return keys;
}

absl::Status SharedStateStore::Compact() { return layer_->Compact(); }

absl::StatusOr<VacuumStats> SharedStateStore::Vacuum() {
  return layer_->Vacuum();
}

absl::Status SharedStateStore::LastMaintenanceStatus() const {
  return layer_->last_maintenance_status();
}

absl::Status SharedStateStore::WaitForMaintenance() {
  return layer_->WaitForMaintenance();
}

absl::StatusOr<SharedStateStore::SyncResult> SharedStateStore::SyncCheckpoint(
    Epoch epoch) {
  return LayeredStateStore::SyncCheckpoint(epoch);
}

absl::StatusOr<SharedStateStore::CommittedVersion>
SharedStateStore::CommitCheckpoint(const std::vector<SyncResult>& syncs,
                                   Epoch epoch) {
  return CommitSyncedCheckpoint(syncs, epoch);
}

absl::Status SharedStateStore::ApplyCheckpoint(
    const CommittedVersion& version) {
  return ApplyCommittedCheckpoint(version);
}

}  // namespace backfill
