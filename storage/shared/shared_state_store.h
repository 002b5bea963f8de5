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
//
// Several processes can share one store's checkpoints (README.md, "Checkpoints
// over several processes"): each process syncs its own sealed batches
// (SyncCheckpoint), one committer commits every process's sync results as
// one version (CommitCheckpoint), and every other process applies that
// version (ApplyCheckpoint), after which it reads the others' rows. The
// transport between them is not here (executor/cluster carries it over
// gRPC).
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
  // What one process's sync made durable (its SST descriptors, opaque
  // bytes) and a committed version's id and epoch: the values a transport
  // carries between the processes of a checkpoint.
  using SyncResult = storage_internal::SyncResult;
  using CommittedVersion = storage_internal::CommittedVersion;

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

  // ---- A checkpoint over several processes, each with its own store object
  // opened on the same etcd prefix and object store (and its own cache
  // directory). Not mixed with Checkpoint on the same store object.
  //
  // Every process, for epoch e: uploads its sealed batches <= e as one SST
  // (none if they hold no row) and returns its descriptor. Nothing becomes
  // visible; the batches stay readable here until a version committing e is
  // applied (if e never commits, the next sync uploads them again and the
  // object of this one is vacuumed once a later epoch commits). From the
  // call on, no instance may Init at or below e. Errors: FailedPrecondition
  // if e <= CommittedEpoch, an instance has not sealed e, or an earlier
  // commit failed; object-store errors naming the object.
  absl::StatusOr<SyncResult> SyncCheckpoint(Epoch epoch);
  // The committer only (one process per store at a time), once every
  // process synced e: commits the version adding every sync result's SSTs
  // (in the given order; another process's SSTs are fetched and checked)
  // at epoch e, fenced as Checkpoint is; then this store publishes e (as
  // ApplyCheckpoint) and runs the maintenance a commit leaves due. Errors:
  // InvalidArgument for a descriptor that does not decode (nothing sent);
  // FailedPrecondition if e <= CommittedEpoch or this store has data sealed
  // <= e it did not sync (both: nothing sent), or another committer took
  // over; object-store and etcd errors. After an error other
  // than the two marked "nothing sent", this store object accepts no later
  // commit or checkpoint (an etcd write that failed may have applied): reopen
  // it.
  absl::StatusOr<CommittedVersion> CommitCheckpoint(
      const std::vector<SyncResult>& syncs, Epoch epoch);
  // Every other process, with the committer's version: reads go to it (or
  // to a newer version etcd has), CommittedEpoch becomes its epoch, the
  // sealed batches at or below it are dropped, WaitCommitted waiters wake
  // and commit listeners run (on this thread). A version at or below
  // CommittedEpoch is a no-op. Errors: FailedPrecondition if this store has
  // data sealed at or below the version's epoch that it did not sync (they
  // cannot be in it); Unavailable if etcd has not got the version; etcd and
  // object-store errors (nothing changes; a later version may still be
  // applied).
  absl::Status ApplyCheckpoint(const CommittedVersion& version);
  // Before a restart from CommittedEpoch (a checkpoint after it failed):
  // forgets this process's syncs after it, so that instances may Init at
  // CommittedEpoch + 1 again. Errors: FailedPrecondition if `epoch` is not
  // CommittedEpoch or an instance still holds data sealed after it.
  absl::Status AbandonUncommittedSyncs(Epoch epoch) {
    return LayeredStateStore::AbandonUncommittedSyncs(epoch);
  }

 private:
  SharedStateStore(std::unique_ptr<shared_internal::SharedCommittedLayer> layer,
                   Epoch committed);

  shared_internal::SharedCommittedLayer* const layer_;  // Owned by the base.
};

}  // namespace backfill

#endif  // STORAGE_SHARED_SHARED_STATE_STORE_H_
