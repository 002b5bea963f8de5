#include "storage/shared/testing/shared_store_fixture.h"

#include <atomic>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/shared/local_directory_object_store.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

EtcdTestCluster* g_cluster = nullptr;
absl::Status g_start_status = absl::FailedPreconditionError(
    "the etcd environment has not started (not under gtest?)");

class EtcdEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<EtcdTestCluster>> cluster =
        EtcdTestCluster::Start({});
    g_start_status = cluster.status();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    g_cluster = cluster_.get();
  }
  void TearDown() override {
    g_cluster = nullptr;
    g_start_status = absl::FailedPreconditionError("etcd stopped");
    cluster_.reset();  // SIGKILLs and reaps every member.
  }

 private:
  std::unique_ptr<EtcdTestCluster> cluster_;
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new EtcdEnvironment);

std::string TestDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

}  // namespace

absl::StatusOr<EtcdTestCluster*> SharedStoreFixture::Cluster() {
  if (g_cluster == nullptr) return g_start_status;
  return g_cluster;
}

absl::StatusOr<std::shared_ptr<EtcdClient>>
SharedStoreFixture::NewEtcdClient() {
  BACKFILL_ASSIGN_OR_RETURN(EtcdTestCluster * cluster, Cluster());
  EtcdClientOptions options;
  options.endpoints = cluster->Endpoints();
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                            EtcdClient::Create(options));
  return std::shared_ptr<EtcdClient>(std::move(client));
}

std::string SharedStoreFixture::UniqueName(const std::string& base) {
  static std::atomic<int> counter{0};
  return absl::StrCat(base, "-", counter.fetch_add(1));
}

absl::StatusOr<SharedStateStoreOptions> SharedStoreFixture::Options(
    const std::string& name) {
  SharedStateStoreOptions options;
  BACKFILL_ASSIGN_OR_RETURN(options.etcd, NewEtcdClient());
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<LocalDirectoryObjectStore> objects,
      LocalDirectoryObjectStore::Open(
          {.root = absl::StrCat(TestDir(), "/", name, "/objects"),
           .create_if_missing = true,
           .sync = false}));
  options.object_store = std::move(objects);
  options.object_prefix = "store/";
  options.etcd_prefix = absl::StrCat("test/", name, "/");
  options.cache_dir =
      absl::StrCat(TestDir(), "/", name, "/", UniqueName("cache"));
  options.block_cache_bytes = 1 << 20;
  return options;
}

}  // namespace backfill
