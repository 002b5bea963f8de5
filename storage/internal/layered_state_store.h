// LayeredStateStore: the StateStore protocol (local instances, sealing,
// checkpoints, replicated batches, waiting, listeners) over a CommittedLayer
// that holds the committed data. MemoryStateStore is this class over its own
// layer, and RocksDbStateStore derives from it to add RocksDB's maintenance
// methods; the protocol is written once.
//
// Locking: `mu_` guards the committed epoch and every instance's sealed
// batches (so a reader's snapshot of both is consistent); an instance's
// unsealed buffer is private to its (single) user thread. `checkpoint_mu_`
// serialises checkpoints; the layer's Commit (I/O) runs without `mu_`.
// Committed reads through an instance are clipped to the committed epoch of
// its snapshot, so data being written by an in-flight checkpoint is never
// seen twice or early.
#ifndef STORAGE_INTERNAL_LAYERED_STATE_STORE_H_
#define STORAGE_INTERNAL_LAYERED_STATE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/epoch.h"
#include "storage/internal/committed_layer.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace storage_internal {

class LayeredStateStore : public StateStore {
 public:
  LayeredStateStore(std::unique_ptr<CommittedLayer> layer,
                    Epoch committed_epoch);
  // REQUIRES: every LocalStateStore and iterator it made is destroyed.
  ~LayeredStateStore() override;

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override;
  absl::Status Checkpoint(Epoch epoch) override;
  Epoch CommittedEpoch(TableId table_id) const override;
  bool IsCommitted(TableId table_id, Epoch epoch) const override;
  absl::Status WaitCommitted(TableId table_id, Epoch epoch, absl::Time deadline,
                             Cancellation& cancellation, Clock& clock) override;
  uint64_t AddCommitListener(std::function<void(Epoch)> listener) override;
  void RemoveCommitListener(uint64_t id) override;
  absl::StatusOr<std::optional<std::string>> Get(const TableKey& key,
                                                 Epoch read_epoch) override;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options = {}) override;

  absl::Status PinEpoch(absl::string_view owner, Epoch epoch) override;
  absl::Status ReleaseEpochPin(absl::string_view owner, Epoch epoch) override;
  std::map<std::string, Epoch> EpochPins() const override;

  CommittedLayer& layer() { return *layer_; }

 protected:
  // Reads the pins of the committed epoch back (a persistent store calls it
  // once, right after opening, before garbage collection may run) and holds
  // them in the layer. Returns the oldest, if any: no garbage collection of
  // an earlier process went past it. Errors: DataLoss for a pin whose
  // epoch does not decode; the layer's read errors.
  absl::StatusOr<std::optional<Epoch>> RestoreEpochPins();
  // A checkpoint over several processes (committed_layer.h, the three
  // steps), for stores whose layer implements them; a derived store exposes
  // them. Each process's store takes part with its own instances: every
  // process calls SyncCheckpoint(e) and sends the result to the committer,
  // which calls CommitSyncedCheckpoint(all results, e) and sends the version
  // to every other process, which calls ApplyCommittedCheckpoint(version).
  //
  // SyncCheckpoint(e) syncs the sealed batches <= e of the non-replicated
  // instances (the layer's Sync) and returns what it made durable; they stay
  // sealed and readable here until a version committing e is applied (a
  // checkpoint that never commits leaves them for the next sync, which
  // includes them again). From the call on, no instance may Init at or
  // below e. Errors: FailedPrecondition if e <= the committed epoch, an
  // instance has not sealed e, or an earlier commit failed; the layer's
  // (Unimplemented for layers without the steps).
  absl::StatusOr<SyncResult> SyncCheckpoint(Epoch epoch)
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_);
  // The committer: commits the version of `syncs` (every process's sync of
  // `epoch`, this one's included if it synced) at `epoch` (the layer's
  // CommitVersion), then publishes it here as ApplyCommittedCheckpoint does
  // and runs the layer's AfterCommit. Errors: FailedPrecondition if epoch <=
  // the committed epoch, an earlier commit failed, or this store has sealed
  // data <= epoch it did not sync; the layer's: after one other than
  // InvalidArgument (a sync result it could not decode, refused before any
  // I/O) this store refuses every later commit and checkpoint (as after a
  // failed Checkpoint).
  absl::StatusOr<CommittedVersion> CommitSyncedCheckpoint(
      const std::vector<SyncResult>& syncs, Epoch epoch)
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_);
  // Every other process: reads go to `version` (the layer's ApplyVersion),
  // then the committed epoch becomes its epoch, the sealed batches at or
  // below it are dropped (they are in the version), WaitCommitted waiters
  // wake and commit listeners run. A version at or below the committed
  // epoch is a no-op. Errors: FailedPrecondition if this store has sealed
  // data at or below the version's epoch that it never synced (the version
  // cannot hold them); the layer's (Unavailable: etcd has not got the
  // version); nothing changes then, and a later version may still apply.
  absl::Status ApplyCommittedCheckpoint(const CommittedVersion& version)
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_);
  // Forgets this process's syncs after `epoch` that no version committed
  // (their checkpoint failed, and the job restarts from `epoch`), so that
  // instances may Init after `epoch` again; their objects stay in no
  // version (the vacuum deletes them). Errors: FailedPrecondition if
  // `epoch` is not the committed epoch, or an instance still holds data
  // sealed after it (the attempt that sealed them has not let go).
  absl::Status AbandonUncommittedSyncs(Epoch epoch)
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_);

 private:
  class Instance;
  // The part of an instance the store sees (guarded by mu_).
  struct InstanceState {
    TableId table_id = 0;
    bool replicated = false;
    bool initialized = false;
    Epoch epoch;
    std::vector<SealedBatch> sealed;  // Ascending epochs.
  };
  // A reader's consistent view: committed epoch + sealed batches above it,
  // and a pin of the committed read epoch.
  struct Snapshot {
    Epoch committed;
    Epoch read_epoch;                 // min(requested, committed).
    std::unique_ptr<EpochPin> pin;    // Of read_epoch.
    std::vector<SealedBatch> sealed;  // Ascending epochs, all > committed.
  };

  void Register(InstanceState* state);
  void Unregister(InstanceState* state);
  // `state` may be null (a committed read: no sealed batches).
  Snapshot TakeSnapshot(const InstanceState* state, Epoch read_epoch);
  // FailedPrecondition if a non-replicated instance has data sealed at or
  // below `epoch` that no SyncCheckpoint covered (publishing `epoch` would
  // drop them unwritten).
  absl::Status CheckSynced(Epoch epoch, absl::string_view step) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `epoch` the committed epoch (if newer), applies the pin writes it
  // commits, drops the sealed batches it covers and wakes waiters and
  // listeners: what every commit ends with (Checkpoint, and the
  // multi-process steps).
  void PublishCommitted(Epoch epoch) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<CommittedLayer> layer_;

  mutable Mutex mu_;
  CondVar committed_changed_;
  Epoch committed_ ABSL_GUARDED_BY(mu_);
  // The epoch of the checkpoint being written, if any.
  std::optional<Epoch> pending_ ABSL_GUARDED_BY(mu_);
  // Set when a checkpoint failed to write: no further checkpoint.
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::set<InstanceState*> instances_ ABSL_GUARDED_BY(mu_);

  // One owner's epoch pin. Invariant (what a reopened store relies on):
  // every epoch persisted for the owner is held in the layer until a
  // checkpoint persists a newer state (a moved pin keeps its persisted
  // epoch held, a released one stays whole, until that commits).
  struct PinState {
    Epoch epoch;                              // The pin in force.
    std::unique_ptr<EpochPin> pin;            // Of `epoch`.
    std::optional<Epoch> persisted;           // What the committed store holds.
    std::unique_ptr<EpochPin> persisted_pin;  // Of `persisted`.
    std::optional<Epoch> release_at;  // Release with checkpoint >= this.
    uint64_t change = 0;              // Bumped by every PinEpoch/Release.
  };
  // A checkpoint's pin writes (under mu_): the batch for kEpochPinTableId
  // (null if nothing changed) and the changes it carries, applied to
  // pins_ once the checkpoint committed.
  struct PinWrites {
    std::shared_ptr<MemTable> batch;
    struct Change {
      std::string owner;
      uint64_t change = 0;         // PinState::change when written.
      std::optional<Epoch> epoch;  // Written; nullopt: released.
    };
    std::vector<Change> changes;
  };
  PinWrites CollectPinWrites(Epoch epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a checkpoint (or a sync) of `epoch` writes: the sealed batches <=
  // epoch of every non-replicated instance and the pin writes
  // (AddPinWrites), ordered by (table, epoch). Errors, FailedPrecondition
  // naming `step`: an earlier checkpoint or commit failed, epoch <= the
  // committed epoch, or an initialised instance has not sealed epoch.
  absl::StatusOr<std::vector<CommitBatch>> CollectCommitBatches(
      Epoch epoch, absl::string_view step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Collects the pin writes of a checkpoint (or sync) of `epoch`: adds their
  // batch to `batches` and keeps them in synced_pins_ until `epoch` is
  // published (PublishCommitted applies them).
  void AddPinWrites(Epoch epoch, std::vector<CommitBatch>& batches)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPinWrites(const PinWrites& writes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::map<std::string, PinState, std::less<>> pins_ ABSL_GUARDED_BY(mu_);
  uint64_t pin_changes_ ABSL_GUARDED_BY(mu_) = 0;
  // The pin writes of checkpoints and syncs not yet published, by epoch.
  std::map<Epoch, PinWrites> synced_pins_ ABSL_GUARDED_BY(mu_);

  Mutex checkpoint_mu_;

  Mutex listeners_mu_;
  uint64_t next_listener_id_ ABSL_GUARDED_BY(listeners_mu_) = 1;
  std::map<uint64_t, std::function<void(Epoch)>> listeners_
      ABSL_GUARDED_BY(listeners_mu_);
};

}  // namespace storage_internal
}  // namespace backfill

#endif  // STORAGE_INTERNAL_LAYERED_STATE_STORE_H_
