// CommittedLayer: what an implementation of the state store provides (the
// committed, shared data); LayeredStateStore builds the whole StateStore
// protocol (instances, sealing, checkpoints, waiting) on top of it.
#ifndef STORAGE_INTERNAL_COMMITTED_LAYER_H_
#define STORAGE_INTERNAL_COMMITTED_LAYER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/internal/mem_table.h"
#include "storage/state_store.h"
#include "storage/table_key.h"

namespace backfill {
namespace storage_internal {

// The sealed data of one instance, to be committed at `epoch`.
struct CommitBatch {
  TableId table_id = 0;
  Epoch epoch;
  std::shared_ptr<const MemTable> data;
};

// Keeps the versions visible at one epoch from garbage collection while it
// lives. Layers that never collect garbage return nullptr pins.
class EpochPin {
 public:
  virtual ~EpochPin() = default;
};

// What one process's Sync made durable for a checkpoint: the layer's
// descriptors of its files (opaque outside the layer; bytes, so that a
// process can send them to the committer).
struct SyncResult {
  Epoch epoch;
  std::vector<std::string> descriptors;
};

// A committed version as the committer announces it to every process.
struct CommittedVersion {
  uint64_t id = 0;
  Epoch committed_epoch;
};

// Point reads of one table, one after another, by one thread (a view's
// per-row consistency checks): each Get answers exactly as
// CommittedLayer::Get would at the time of the call, and the same
// requirements hold (the caller pins read_epoch for the call). A reader may
// keep state between calls (an open iterator, which costs more to make than
// a seek): what it keeps must follow every Commit and ApplyVersion.
// Not thread-safe; it must not outlive its layer.
class PointReader {
 public:
  virtual ~PointReader() = default;
  virtual absl::StatusOr<std::optional<std::string>> Get(VirtualNode vnode,
                                                         absl::string_view pk,
                                                         Epoch read_epoch) = 0;
};

// Thread-safe.
class CommittedLayer {
 public:
  virtual ~CommittedLayer() = default;

  // Pins `epoch` for a read about to start. Called with the store's lock
  // held, so a pin at the store's committed epoch is taken before any
  // garbage collection can pass it (see SetCommittedEpoch).
  virtual std::unique_ptr<EpochPin> Pin(Epoch /*epoch*/) { return nullptr; }
  // The committed epoch advanced (after a successful Commit); called with
  // the store's lock held. Garbage collection never goes past it.
  virtual void SetCommittedEpoch(Epoch /*epoch*/) {}
  // The store is closing and about to drop its pins (the persisted epoch
  // pins among them, which the next open restores): no garbage collection
  // may start from now on, also not during the layer's own shutdown (a
  // flush at close), or it could pass a pin the next open relies on.
  // Reads stay valid until the layer is destroyed. Called once, by the
  // store's destructor, before anything else.
  virtual void StopGarbageCollection() {}

  // Writes every batch (each version tagged with its batch's epoch) and the
  // new committed epoch atomically: after a crash either all of it or none
  // of it is there. Called by one thread at a time, with increasing epochs.
  virtual absl::Status Commit(const std::vector<CommitBatch>& batches,
                              Epoch committed_epoch) = 0;
  // The upkeep a commit leaves due (a compaction, a cleanup). The store
  // calls it after a successful Commit once the committed epoch is set
  // (SetCommittedEpoch) and waiters are woken, so that no reader waits for
  // it and no garbage collection runs ahead of that epoch; by the
  // committing thread, not concurrently with Commit. The layer may do the
  // work there or hand it to a thread of its own (the shared layer only
  // wakes its maintenance thread). A failure does not undo the commit: the
  // layer reports it its own way. Default: nothing.
  virtual void AfterCommit() {}

  // A checkpoint over several processes, as three steps (a layer whose data
  // several processes write implements them, and its Commit runs them in
  // order; the others return Unimplemented):
  //   1. Sync, per process: makes its batches durable where every process
  //      can read them (not visible to any reader yet) and describes them;
  //   2. CommitVersion, once (the committer): makes the version of every
  //      process's sync results and `committed_epoch` visible atomically
  //      (then the committer runs AfterCommit);
  //   3. ApplyVersion, per process: reads go to that version (or a newer
  //      one) from then on.
  // A sync whose results are never committed stays invisible.
  virtual absl::StatusOr<SyncResult> Sync(
      const std::vector<CommitBatch>& /*batches*/, Epoch /*epoch*/) {
    return absl::UnimplementedError("this committed layer has no Sync step");
  }
  virtual absl::StatusOr<CommittedVersion> CommitVersion(
      const std::vector<SyncResult>& /*syncs*/, Epoch /*committed_epoch*/) {
    return absl::UnimplementedError(
        "this committed layer has no CommitVersion step");
  }
  virtual absl::Status ApplyVersion(const CommittedVersion& /*version*/) {
    return absl::UnimplementedError(
        "this committed layer has no ApplyVersion step");
  }

  // The newest version <= read_epoch of one key; nullopt if none or a
  // tombstone. The caller holds a pin of read_epoch for the call.
  // Errors: FailedPrecondition if versions read_epoch needs may already be
  // garbage-collected (a historical read taken too late).
  virtual absl::StatusOr<std::optional<std::string>> Get(TableId table_id,
                                                         VirtualNode vnode,
                                                         absl::string_view pk,
                                                         Epoch read_epoch) = 0;

  // A PointReader of `table_id`. Default: one that calls Get.
  virtual std::unique_ptr<PointReader> NewPointReader(TableId table_id);

  // The live rows of (table, vnode) in `range` as of read_epoch. The
  // iterator sees a consistent snapshot: data committed after the call with
  // epochs <= read_epoch never appear (callers only read at epochs <= the
  // committed epoch at the time of the call). The iterator keeps `pin`
  // (a pin of read_epoch) until it is destroyed. Errors as for Get.
  virtual absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options,
      std::unique_ptr<EpochPin> pin) = 0;
};

inline std::unique_ptr<PointReader> CommittedLayer::NewPointReader(
    TableId table_id) {
  class ForwardingReader final : public PointReader {
   public:
    ForwardingReader(CommittedLayer& layer, TableId table_id)
        : layer_(layer), table_id_(table_id) {}
    absl::StatusOr<std::optional<std::string>> Get(VirtualNode vnode,
                                                   absl::string_view pk,
                                                   Epoch read_epoch) override {
      return layer_.Get(table_id_, vnode, pk, read_epoch);
    }

   private:
    CommittedLayer& layer_;
    const TableId table_id_;
  };
  return std::make_unique<ForwardingReader>(*this, table_id);
}

}  // namespace storage_internal
}  // namespace backfill

#endif  // STORAGE_INTERNAL_COMMITTED_LAYER_H_
