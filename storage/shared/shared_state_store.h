// SharedStateStore: the state store (storage/state_store.h) whose committed
// data are SST objects in an ObjectStore and whose versions (the SST list
// per committed epoch) are committed to etcd by compare-and-swap (issue 18).
// The StateStore protocol is LayeredStateStore's; the committed layer is
// shared_committed_layer.h. Versions: storage/shared/README.md.
//
//   SharedStateStoreOptions options;
//   options.object_store = std::move(objects);   // LocalDirectory or S3
//   options.etcd = std::move(etcd);              // EtcdClient
//   options.etcd_prefix = "backfill/job-7/";
//   options.cache_dir = "/var/cache/backfill/job-7";
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<SharedStateStore> store,
//                             SharedStateStore::Open(options));
//
// Opening loads the current version (its committed epoch and SSTs). One
// process commits at a time: a process whose view of the version is stale
// (another opened the store and committed since) has its Checkpoint refused
// with FailedPrecondition and must reopen. Commits compact the SSTs (size-
// tiered, through the GC rule) and vacuum unreferenced objects (README.md).
// Not yet: version checkpoints, following another committer's versions
// without reopening.
#ifndef STORAGE_SHARED_SHARED_STATE_STORE_H_
#define STORAGE_SHARED_SHARED_STATE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/internal/layered_state_store.h"
#include "storage/shared/shared_committed_layer.h"

namespace backfill {

class SharedStateStore final : public storage_internal::LayeredStateStore {
 public:
  // Errors: InvalidArgument for bad options; those of
  // SharedCommittedLayer::Open (DataLoss naming an etcd key or object).
  static absl::StatusOr<std::unique_ptr<SharedStateStore>> Open(
      const SharedStateStoreOptions& options);

  // The current version's id (0 before the first commit) and the object keys
  // of its SSTs, in commit order. For tests and operations.
  uint64_t VersionId() const;
  std::vector<std::string> SstObjects() const;

  // Compaction and vacuum by hand, in the calling thread
  // (SharedCommittedLayer::Compact and ::Vacuum; after checkpoints the
  // layer's maintenance thread runs them as the options say).
  absl::Status Compact();
  absl::StatusOr<VacuumStats> Vacuum();
  // The last maintenance (compaction, vacuum, version checkpoint) the
  // maintenance thread ran (OK if it did not fail).
  absl::Status LastMaintenanceStatus() const;
  // Waits until the maintenance every checkpoint so far made due has run;
  // returns LastMaintenanceStatus().
  absl::Status WaitForMaintenance();

 private:
  SharedStateStore(std::unique_ptr<shared_internal::SharedCommittedLayer> layer,
                   Epoch committed);

  shared_internal::SharedCommittedLayer* const layer_;  // Owned by the base.
};

}  // namespace backfill

#endif  // STORAGE_SHARED_SHARED_STATE_STORE_H_
