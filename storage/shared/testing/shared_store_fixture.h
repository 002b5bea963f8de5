// (testonly) One 3-member etcd cluster for a whole test binary (a gtest
// global environment: started on the main thread before the first test,
// stopped after the last) and SharedStateStoreOptions over it with a local
// directory object store; and the few steps the store's tests all take
// (commit rows at an epoch, scan them back, list objects).
//
//   SharedStateStoreOptions options = SharedStoreFixture::Options("job");
//   auto store = SharedStateStore::Open(options);
//   SharedStoreFixture::CommitRows(**store, /*table=*/3, 1, {{"a", "a1"}});
#ifndef STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_
#define STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/object_store.h"
#include "storage/shared/shared_committed_layer.h"
#include "storage/shared/shared_state_store.h"
#include "storage/state_store.h"

namespace backfill {

class SharedStoreFixture {
 public:
  // The cluster (FailedPrecondition if the environment could not start it).
  static absl::StatusOr<EtcdTestCluster*> Cluster();
  // A new client of the cluster.
  static absl::StatusOr<std::shared_ptr<EtcdClient>> NewEtcdClient();
  // Options of the store `name`: etcd prefix "test/<name>/", objects in
  // $TEST_TMPDIR/<name>/objects, and a fresh cache directory per call (as
  // a new process would have). The same name gives the same store.
  static absl::StatusOr<SharedStateStoreOptions> Options(
      const std::string& name);
  // A store object of the store `name` as a new process would open it
  // (Options(name)), or null after a gtest failure.
  static std::unique_ptr<SharedStateStore> Open(const std::string& name);
  // A name no other call returned.
  static std::string UniqueName(const std::string& base);

  // pk -> value; nullopt deletes.
  using RowChanges =
      std::vector<std::pair<std::string, std::optional<std::string>>>;
  // pk -> value, in key order.
  using Rows = std::vector<std::pair<std::string, std::string>>;

  // The helpers below report errors as gtest failures of the calling test
  // (and return early, or nothing).
  //
  // Writes `rows` into vnode 0 of `table` at `epoch` through a fresh
  // instance and seals the epoch; returns the instance (now at epoch + 1:
  // keep it while its data are unsynced), or null after a failure.
  static std::unique_ptr<LocalStateStore> SealRows(StateStore& store,
                                                   TableId table,
                                                   uint64_t epoch,
                                                   const RowChanges& rows);
  // SealRows, then checkpoints the epoch.
  static void CommitRows(StateStore& store, TableId table, uint64_t epoch,
                         const RowChanges& rows);
  // Every row `it` yields from its first.
  static Rows Drain(StateStoreIterator& it);
  // Every row of vnode 0 of `table` read at `epoch`.
  static Rows Scan(StateStore& store, TableId table, uint64_t epoch);
  // The keys of the objects under `prefix`.
  static std::vector<std::string> ListKeys(ObjectStore& objects,
                                           const std::string& prefix);
};

}  // namespace backfill

#endif  // STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_
