// SharedCommittedLayer: the committed data of the shared state store
// (issue 18): immutable SST objects in an ObjectStore, and the list of
// them per committed epoch (a *version*) in etcd. What LayeredStateStore
// (storage/internal/layered_state_store.h) builds the StateStore protocol on;
// SharedStateStore (shared_state_store.h) is that pair.
//
// Commit (storage/shared/README.md, "The commit protocol"):
//   1. the batches become one SST (storage/rocksdb/sst_file.h), uploaded
//      with PutIfAbsent under a fresh random name, and cached locally;
//   2. one etcd transaction, fenced by the mod revision of the current
//      pointer this process last read or wrote, writes the version delta
//      (the SST's descriptor, the committed epoch) and the new pointer. A
//      refused fence is FailedPrecondition: another committer took over.
// An SST whose commit never happened (a crash, a refused fence) is an
// unreferenced object that no version lists: never read.
//
// Reads use a pinned version (the SST list at the time of Pin / the read),
// its SSTs fetched from the object store once, kept as files in the local
// cache directory and read through a shared block cache.
//
// Maintenance (compaction, vacuum, version checkpoints) runs on a thread the
// layer owns (started by Open, joined by the destructor), woken by
// AfterCommit: a commit never waits for a merge. Every version change (a
// commit, a compaction, a version checkpoint's record) goes through one
// fenced etcd transaction at a time; a compaction that a commit overtook is
// rebased onto it (README.md, "Compaction, the GC horizon and the vacuum").
#ifndef STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_
#define STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/committed_layer.h"
#include "storage/rocksdb/sst_file.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/object_store.h"
#include "storage/shared/shared_version.pb.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

struct SharedStateStoreOptions {
  // Where SST objects live. Required.
  std::shared_ptr<ObjectStore> object_store;
  // Prefix of this store's object keys, "" or ending in '/'
  // (ValidateObjectKeyPrefix). Default "".
  std::string object_prefix = "";
  // The etcd cluster holding the versions. Required.
  std::shared_ptr<EtcdClient> etcd;
  // Prefix of this store's etcd keys: "<etcd_prefix>version" (the current
  // pointer) and "<etcd_prefix>delta/<id>". Required, non-empty; stores
  // sharing it are the same store.
  std::string etcd_prefix = "";
  // Local directory for fetched SSTs (created if missing). Required. One
  // per process; reused across opens (files are checked when opened).
  std::string cache_dir = "";
  // Block cache shared by every SST reader of the store, in bytes. Default
  // 64 MiB; 0 = none.
  size_t block_cache_bytes = size_t{64} << 20;
  // How SSTs are written.
  SstWriteOptions sst;
  // Compaction (README.md, "Compaction"): after a commit leaves more than
  // this many SSTs in the version, the newest SSTs of similar size (all of
  // them if that is fewer than two) are merged into one through the GC rule
  // by the background maintenance thread, and the result committed as a
  // version change. 0 = never. Default 8.
  size_t compaction_trigger_ssts = 8;
  // Version checkpoints (README.md, "Version checkpoints"): every this many
  // versions the committer writes the full version as an object and trims
  // the deltas before it from etcd; opening reads the newest checkpoint and
  // the deltas after it. 0 = never. Default 100.
  uint64_t version_checkpoint_deltas = 100;
  // Test only: runs after an SST is uploaded and before the version commit
  // (a compaction's on the maintenance thread); an error aborts the commit
  // there (as a crash at that point would).
  std::function<absl::Status(absl::string_view object_key)>
      after_upload_for_test;
};

// InvalidArgument naming the field.
absl::Status ValidateSharedStateStoreOptions(
    const SharedStateStoreOptions& options);

// What one vacuum did.
struct VacuumStats {
  uint64_t listed = 0;           // SST objects under the store's prefix
  uint64_t deleted = 0;          // unreferenced ones deleted
  uint64_t kept_referenced = 0;  // in the current or a live older version
  uint64_t kept_pending = 0;     // unreferenced, but of an uncommitted epoch
};

namespace shared_internal {

// One SST of a version: its descriptor and reader.
struct VersionSst {
  std::string object_key;
  SstFileInfo info;
  std::shared_ptr<const SstReader> reader;
};

// An immutable version: the ordered SST list and the committed epoch.
struct Version {
  uint64_t id = 0;  // 0 = nothing committed yet
  Epoch committed_epoch;
  std::vector<VersionSst> ssts;  // in commit order
  // Reads below this epoch are refused: compactions dropped versions they
  // would need.
  Epoch gc_horizon;
};

class SharedCommittedLayer final : public storage_internal::CommittedLayer {
 public:
  // Loads the current version from etcd (the pointer, then deltas 1..id)
  // and opens its SSTs (fetching those not cached). Errors: DataLoss naming
  // the etcd key or object for undecodable or missing records and corrupt
  // objects; etcd and object-store errors as they come.
  // Then starts the maintenance thread.
  static absl::StatusOr<std::unique_ptr<SharedCommittedLayer>> Open(
      const SharedStateStoreOptions& options);

  // Stops the maintenance thread: a maintenance in progress finishes (its
  // merge, upload and commit), one only asked for does not run.
  ~SharedCommittedLayer() override;
  // The same, when the store closes (before it drops its pins). Idempotent.
  void StopGarbageCollection() override ABSL_LOCKS_EXCLUDED(mu_);
  SharedCommittedLayer(const SharedCommittedLayer&) = delete;
  SharedCommittedLayer& operator=(const SharedCommittedLayer&) = delete;

  std::unique_ptr<storage_internal::EpochPin> Pin(Epoch epoch) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Compactions keep what reads at `epoch` (the store's committed epoch,
  // published to readers) see: their safe epoch is never above it.
  void SetCommittedEpoch(Epoch epoch) override ABSL_LOCKS_EXCLUDED(mu_);
  // Sync, then CommitVersion, then ApplyVersion.
  absl::Status Commit(const std::vector<storage_internal::CommitBatch>& batches,
                      Epoch committed_epoch) override;

  // The three steps of a checkpoint over several processes
  // (committed_layer.h). Sync writes the batches as one SST, uploads it
  // (README.md, "The commit protocol", steps 1-3) and returns its descriptor
  // (an SstDescriptor), nothing if there is no row. CommitVersion (the
  // committer only; not concurrently with itself) adds every sync's SSTs to
  // the current version in order and commits it fenced (step 4; SSTs
  // another process synced are fetched and checked); the committer then
  // runs AfterCommit. ApplyVersion makes this process
  // read `version` or the newer one etcd has (loading it from etcd unless
  // this process made it). Errors: InvalidArgument for a descriptor that
  // does not decode; those of Commit; Unavailable if etcd has not got
  // `version` (it was not committed).
  absl::StatusOr<storage_internal::SyncResult> Sync(
      const std::vector<storage_internal::CommitBatch>& batches,
      Epoch epoch) override;
  absl::StatusOr<storage_internal::CommittedVersion> CommitVersion(
      const std::vector<storage_internal::SyncResult>& syncs,
      Epoch committed_epoch) override;
  absl::Status ApplyVersion(
      const storage_internal::CommittedVersion& version) override;
  // Wakes the maintenance thread, which compacts, vacuums and writes a
  // version checkpoint as due (the outcome: last_maintenance_status(),
  // WaitForMaintenance()). Returns at once.
  void AfterCommit() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::optional<std::string>> Get(TableId table_id,
                                                 VirtualNode vnode,
                                                 absl::string_view pk,
                                                 Epoch read_epoch) override;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options,
      std::unique_ptr<storage_internal::EpochPin> pin) override;

  std::shared_ptr<const Version> current() const ABSL_LOCKS_EXCLUDED(mu_);

  // Merges every SST of the current version into one (a full compaction:
  // tombstones at or below the safe epoch go too) and commits the change
  // (fenced like a checkpoint), in the calling thread. Nothing to do with
  // fewer than two SSTs. The safe epoch is the oldest of the published
  // committed epoch, this process's pins and every epoch pin the version
  // persists (any process's: README.md, "Compaction, the GC horizon and
  // the vacuum"). May run concurrently with commits (rebased onto those
  // that overtake it; tried again if one persisted an older pin) and waits
  // for a background maintenance in progress. Errors: as Commit's
  // (FailedPrecondition if another committer took over); Aborted if
  // checkpoints persisting older pins overtook it kCompactionAttempts
  // times; DataLoss naming the owner of a pin row that is not an epoch.
  absl::Status Compact() ABSL_LOCKS_EXCLUDED(maintenance_mu_, commit_mu_, mu_);
  // The status of the last maintenance (compaction, vacuum, version
  // checkpoint) the maintenance thread ran (OK before the first): a failure
  // there does not fail the checkpoint, which was committed before it.
  absl::Status last_maintenance_status() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the maintenance that every AfterCommit so far asked for has
  // run (or the layer is being destroyed); returns last_maintenance_status().
  absl::Status WaitForMaintenance() ABSL_LOCKS_EXCLUDED(mu_);

  // Deletes the SST objects (and their cache files) under the store's
  // prefix that no version can list any more: not in the current version,
  // not in an older version still in use in this process (a pin, an
  // iterator), and named with an epoch <= the current committed epoch (an
  // upload for an epoch that is committed without it was never committed,
  // and never will be: versions commit increasing epochs; uploads of
  // epochs not committed yet may be a commit in flight and are kept).
  // Runs after every compaction; by hand it waits for a background
  // maintenance in progress. Errors: those of the object store's List
  // (Delete errors leave the object for the next vacuum and are not
  // reported).
  absl::StatusOr<VacuumStats> Vacuum()
      ABSL_LOCKS_EXCLUDED(maintenance_mu_, mu_);

  // The etcd keys.
  std::string PointerKey() const;
  std::string DeltaKey(uint64_t id) const;
  std::string CheckpointKey() const;

 private:
  SharedCommittedLayer(const SharedStateStoreOptions& options,
                       std::shared_ptr<SstBlockCache> block_cache);

  // A version read from etcd (and its checkpoint object).
  struct LoadedVersion {
    std::shared_ptr<Version> version;
    int64_t pointer_revision = 0;  // 0: no pointer (an empty store)
    uint64_t checkpoint_id = 0;    // 0: none
    std::string checkpoint_object;
  };
  static constexpr int kReadVersionAttempts = 5;
  // A compaction that a checkpoint persisting an older epoch pin overtook
  // is tried again on the newer version up to this many times in all.
  static constexpr int kCompactionAttempts = 3;

  absl::Status Load() ABSL_LOCKS_EXCLUDED(commit_mu_, mu_);
  // The version a new process starts from, checked against the object
  // store: its newest SST must be there. etcd names the versions and the
  // object store holds their files, and nothing else ties the two: a store
  // reopened with another object store (a changed --object_store, or a
  // changed data directory holding the default one) would otherwise be read
  // from the local cache and written to the wrong place, splitting the
  // store. FailedPrecondition naming both when it is not there.
  absl::StatusOr<LoadedVersion> ReadCheckedVersion()
      ABSL_LOCKS_EXCLUDED(commit_mu_, mu_);
  // The error for an object (`what`) the version under etcd_prefix names
  // but the object store does not hold (`cause`: what said so).
  absl::Status NotThisObjectStore(absl::string_view what,
                                  const absl::Status& cause) const;
  // The version the pointer names now: this process's current version (or
  // the newest version checkpoint, if that is newer) and the deltas after
  // it, its SSTs opened (readers this process has open reused). Reads again
  // when a checkpoint written meanwhile got in the way.
  absl::StatusOr<LoadedVersion> ReadVersion() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<LoadedVersion> ReadVersionOnce() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `version` as a checkpoint object, records it (fenced, between
  // version changes), trims the deltas it covers and deletes the previous
  // checkpoint object.
  absl::Status WriteVersionCheckpoint(const Version& version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_)
          ABSL_LOCKS_EXCLUDED(commit_mu_, mu_);
  // The maintenance thread: waits for AfterCommit, runs Maintain.
  void RunMaintenance() ABSL_LOCKS_EXCLUDED(maintenance_mu_, commit_mu_, mu_);
  // Compaction, vacuum and version checkpoint, as due after a commit.
  absl::Status Maintain() ABSL_LOCKS_EXCLUDED(maintenance_mu_, commit_mu_, mu_);
  // Commits `delta` making `next` (built on `previous`, the current version,
  // read with commit_mu_ held) current: the fenced etcd transaction of
  // README.md, "The commit protocol".
  absl::Status CommitDelta(const Version& previous,
                           std::shared_ptr<Version> next,
                           proto::VersionDelta& delta, uint64_t commit_number)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Uploads `bytes` under a fresh name of `epoch`, caches and opens it.
  absl::StatusOr<VersionSst> UploadSst(Epoch epoch, const std::string& bytes,
                                       SstFileInfo info);
  // Compacts from start(current version)'s SST (none due: nullopt) and
  // commits; tries again from the new current version, up to
  // kCompactionAttempts in all, when a checkpoint committed an older epoch
  // pin during the merge (Aborted). Returns whether it compacted.
  absl::StatusOr<bool> CompactWithRetries(
      absl::FunctionRef<std::optional<size_t>(const Version&)> start)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_)
          ABSL_LOCKS_EXCLUDED(commit_mu_, mu_);
  // Compacts the SSTs of `base` (a version that was current) at `first`
  // and after, and commits the output in their place in the version current
  // then (rebased onto the commits that came since). Aborted (nothing
  // committed) if one of those commits persisted an epoch pin older than
  // the safe epoch the merge used.
  absl::Status CompactFrom(std::shared_ptr<const Version> base, size_t first)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_)
          ABSL_LOCKS_EXCLUDED(commit_mu_, mu_);
  absl::StatusOr<VacuumStats> VacuumLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // The index of the first SST a compaction after a commit merges, or
  // nullopt if none is due.
  std::optional<size_t> CompactionStart(const Version& version) const;
  // The newest version still in use that can serve a read at `read_epoch`
  // (its GC horizon <= read_epoch <= its committed epoch), or null.
  std::shared_ptr<const Version> ServingVersion(Epoch read_epoch) const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<const Version> ServingVersionLocked(Epoch read_epoch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `version` current, remembers it as in use and forgets the synced
  // SSTs of the epochs it commits. If its GC horizon is above the published
  // committed epoch (a worker applying a compaction the committer made
  // before this process published the epoch it commits), the version that
  // serves the published epoch is held until SetCommittedEpoch reaches the
  // horizon: this process's readers pin the published epoch until then.
  void SetCurrent(std::shared_ptr<const Version> version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes a version read from etcd current (with its fence and checkpoint)
  // unless this process has it or a newer one already.
  void Adopt(LoadedVersion loaded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_, mu_);
  class VersionPin;
  void Unpin(std::multiset<uint64_t>::iterator pin) ABSL_LOCKS_EXCLUDED(mu_);
  // The reader of an object: the cached file if it is sound, else fetched.
  absl::StatusOr<std::shared_ptr<const SstReader>> OpenSst(
      const std::string& object_key, const SstFileInfo& expected);
  // Writes `bytes` as the cached file of `object_key` (atomic rename).
  absl::StatusOr<std::string> CacheFile(const std::string& object_key,
                                        absl::string_view bytes);
  std::string CachePath(const std::string& object_key) const;
  std::string ObjectName(const std::string& object_key) const;

  const SharedStateStoreOptions options_;
  const std::shared_ptr<SstBlockCache> block_cache_;
  const std::string token_prefix_;  // random, per process

  // Lock order: maintenance_mu_, commit_mu_, mu_.
  //
  // One maintenance at a time (the thread's, Compact, Vacuum): held across
  // a whole compaction, so its inputs can only leave the version by its
  // own commit.
  Mutex maintenance_mu_ ABSL_ACQUIRED_BEFORE(commit_mu_);
  // One version change at a time: held from reading the current version and
  // the fence to making the committed version current.
  Mutex commit_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable Mutex mu_;
  // Changed only with commit_mu_ held too.
  std::shared_ptr<const Version> current_ ABSL_GUARDED_BY(mu_);
  // Every version made current that may still be in use (pins, iterators).
  std::vector<std::weak_ptr<const Version>> versions_ ABSL_GUARDED_BY(mu_);
  // The epochs of live pins in this process: the safe epoch of a compaction
  // is the smallest of them, the published committed epoch and the oldest
  // epoch pin its base version persists.
  std::multiset<uint64_t> pins_ ABSL_GUARDED_BY(mu_);
  // The committed epoch readers are told (SetCommittedEpoch; at open, the
  // loaded version's).
  Epoch published_epoch_ ABSL_GUARDED_BY(mu_);
  // The version that serves published_epoch_ while current_'s GC horizon is
  // above it (SetCurrent), else null.
  std::shared_ptr<const Version> serving_published_ ABSL_GUARDED_BY(mu_);
  // The maintenance thread's state: AfterCommit counts requests, the thread
  // counts the requests it has served (WaitForMaintenance waits on them).
  CondVar maintenance_cv_;
  uint64_t maintenance_requested_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t maintenance_served_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status last_maintenance_status_ ABSL_GUARDED_BY(mu_);
  // SSTs this process synced and has open, until a version committing
  // their epoch is current.
  std::map<std::string, VersionSst> synced_ ABSL_GUARDED_BY(mu_);
  // The newest version checkpoint this process read or wrote.
  uint64_t checkpoint_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::string checkpoint_object_ ABSL_GUARDED_BY(mu_);
  // The mod revision of the pointer key this process last read or wrote
  // (0: absent). The fence of the next version change.
  int64_t fence_revision_ ABSL_GUARDED_BY(commit_mu_) = 0;
  uint64_t commits_ ABSL_GUARDED_BY(mu_) = 0;
  // Started by Open, joined by the destructor.
  std::thread maintenance_thread_;
};

}  // namespace shared_internal
}  // namespace backfill

#endif  // STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_
