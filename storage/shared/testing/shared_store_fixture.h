// (testonly) One 3-member etcd cluster for a whole test binary (a gtest
// global environment: started on the main thread before the first test,
// stopped after the last) and SharedStateStoreOptions over it with a local
// directory object store.
//
//   SharedStateStoreOptions options = SharedStoreFixture::Options("job");
//   auto store = SharedStateStore::Open(options);
#ifndef STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_
#define STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/shared_committed_layer.h"

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
  // A name no other call returned.
  static std::string UniqueName(const std::string& base);
};

}  // namespace backfill

#endif  // STORAGE_SHARED_TESTING_SHARED_STORE_FIXTURE_H_
