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
#ifndef STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_
#define STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/internal/committed_layer.h"
#include "storage/rocksdb/sst_file.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/object_store.h"
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
  // Test only: runs after an SST is uploaded and before the version commit;
  // an error aborts the commit there (as a crash at that point would).
  std::function<absl::Status(absl::string_view object_key)>
      after_upload_for_test;
};

// InvalidArgument naming the field.
absl::Status ValidateSharedStateStoreOptions(
    const SharedStateStoreOptions& options);

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
};

class SharedCommittedLayer final : public storage_internal::CommittedLayer {
 public:
  // Loads the current version from etcd (the pointer, then deltas 1..id)
  // and opens its SSTs (fetching those not cached). Errors: DataLoss naming
  // the etcd key or object for undecodable or missing records and corrupt
  // objects; etcd and object-store errors as they come.
  static absl::StatusOr<std::unique_ptr<SharedCommittedLayer>> Open(
      const SharedStateStoreOptions& options);

  std::unique_ptr<storage_internal::EpochPin> Pin(Epoch epoch) override;
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

  std::shared_ptr<const Version> current() const ABSL_LOCKS_EXCLUDED(mu_);

  // The etcd keys.
  std::string PointerKey() const;
  std::string DeltaKey(uint64_t id) const;

 private:
  SharedCommittedLayer(const SharedStateStoreOptions& options,
                       std::shared_ptr<SstBlockCache> block_cache);

  absl::Status Load();
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

  mutable Mutex mu_;
  std::shared_ptr<const Version> current_ ABSL_GUARDED_BY(mu_);
  // The mod revision of the pointer key this process last read or wrote
  // (0: absent). The fence of the next commit. Only Commit writes it.
  int64_t fence_revision_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t commits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace shared_internal
}  // namespace backfill

#endif  // STORAGE_SHARED_SHARED_COMMITTED_LAYER_H_
