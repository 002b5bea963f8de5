#include "storage/shared/testing/shared_store_fixture.h"

#include <atomic>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/shared/local_directory_object_store.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

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

std::unique_ptr<SharedStateStore> SharedStoreFixture::Open(
    const std::string& name) {
  absl::StatusOr<SharedStateStoreOptions> options = Options(name);
  EXPECT_TRUE(options.ok()) << options.status();
  if (!options.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<SharedStateStore>> store =
      SharedStateStore::Open(*options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
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

std::unique_ptr<LocalStateStore> SharedStoreFixture::SealRows(
    StateStore& store, TableId table, uint64_t epoch, const RowChanges& rows) {
  absl::StatusOr<std::unique_ptr<LocalStateStore>> local =
      store.NewLocalStateStore(table, {});
  EXPECT_TRUE(local.ok()) << local.status();
  if (!local.ok()) return nullptr;
  absl::Status status = (*local)->Init(EpochPair::ForInitial(Epoch(epoch)));
  for (const auto& [pk, value] : rows) {
    if (!status.ok()) break;
    status = value.has_value() ? (*local)->Insert(0, pk, *value)
                               : (*local)->Delete(0, pk);
  }
  if (status.ok()) {
    status = (*local)->Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)});
  }
  EXPECT_TRUE(status.ok()) << status;
  if (!status.ok()) return nullptr;
  return *std::move(local);
}

void SharedStoreFixture::CommitRows(StateStore& store, TableId table,
                                    uint64_t epoch, const RowChanges& rows) {
  std::unique_ptr<LocalStateStore> local = SealRows(store, table, epoch, rows);
  ASSERT_NE(local, nullptr);
  BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(epoch)));
}

SharedStoreFixture::Rows SharedStoreFixture::Drain(StateStoreIterator& it) {
  Rows rows;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    rows.emplace_back(std::string(it.key()), std::string(it.value()));
  }
  EXPECT_TRUE(it.status().ok()) << it.status();
  return rows;
}

SharedStoreFixture::Rows SharedStoreFixture::Scan(StateStore& store,
                                                  TableId table,
                                                  uint64_t epoch) {
  auto it = store.NewIterator(table, 0, PkRange::All(), Epoch(epoch));
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return {};
  return Drain(**it);
}

std::vector<std::string> SharedStoreFixture::ListKeys(
    ObjectStore& objects, const std::string& prefix) {
  absl::StatusOr<std::vector<ObjectInfo>> listed = objects.List(prefix);
  EXPECT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> keys;
  if (!listed.ok()) return keys;
  for (const ObjectInfo& info : *listed) keys.push_back(info.key);
  return keys;
}

}  // namespace backfill
