// SharedStoreBackend: location and endpoint parsing, S3 variables, and a
// local etcd cluster that serves a store for the backend's life and leaves
// no process nor directory behind.
#include "storage/shared/shared_store_backend.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TestDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

TEST(ParseObjectStoreLocationTest, DirectoriesAndBuckets) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(ObjectStoreLocation dir,
                                ParseObjectStoreLocation("/var/objects"));
  EXPECT_EQ(dir.directory, "/var/objects");
  EXPECT_EQ(dir.bucket, "");
  BACKFILL_ASSERT_OK_AND_ASSIGN(ObjectStoreLocation bucket,
                                ParseObjectStoreLocation("s3://jobs"));
  EXPECT_EQ(bucket.directory, "");
  EXPECT_EQ(bucket.bucket, "jobs");
  EXPECT_EQ(bucket.key_prefix, "");
  BACKFILL_ASSERT_OK_AND_ASSIGN(ObjectStoreLocation prefixed,
                                ParseObjectStoreLocation("s3://jobs/a/b"));
  EXPECT_EQ(prefixed.bucket, "jobs");
  EXPECT_EQ(prefixed.key_prefix, "a/b/");
  EXPECT_THAT(ParseObjectStoreLocation(""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseObjectStoreLocation("s3:///x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("names no bucket")));
  EXPECT_THAT(ParseObjectStoreLocation("s3://b/a b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bad key prefix")));
}

TEST(ParseEtcdEndpointsTest, ListsOfHostPort) {
  EXPECT_THAT(ParseEtcdEndpoints("127.0.0.1:2379,h:1"),
              testing::IsOkAndHolds(ElementsAre("127.0.0.1:2379", "h:1")));
  for (const char* bad : {"", "h", "h:", ":1", "h:1,,h:2", "h:1,"}) {
    EXPECT_THAT(ParseEtcdEndpoints(bad),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << bad;
  }
}

TEST(SharedStoreBackendTest, S3NeedsItsVariables) {
  SharedStoreBackendOptions options;
  options.object_store = "s3://bucket";
  options.etcd_endpoints = {"127.0.0.1:1"};
  options.etcd_prefix = "p/";
  options.cache_dir = TestDir() + "/s3cache";
  std::map<std::string, std::string> env = {
      {"AWS_ENDPOINT_URL", "http://127.0.0.1:1"}, {"AWS_ACCESS_KEY_ID", "k"}};
  options.getenv = [&](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_THAT(SharedStoreBackend::Start(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AWS_SECRET_ACCESS_KEY")));
  env["AWS_SECRET_ACCESS_KEY"] = "s";
  // All set: the store is made (no request is sent until it is used).
  EXPECT_THAT(SharedStoreBackend::Start(options), IsOk());
}

TEST(SharedStoreBackendTest, RequiredOptions) {
  SharedStoreBackendOptions options;
  options.object_store = TestDir() + "/objects-required";
  options.etcd_prefix = "p/";
  options.cache_dir = TestDir() + "/cache-required";
  EXPECT_THAT(SharedStoreBackend::Start(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("local_etcd_dir")));
}

bool ProcessExists(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

TEST(SharedStoreBackendTest, LocalClusterServesAStoreAndLeavesNothing) {
  const std::string etcd_dir = TestDir() + "/local-etcd";
  SharedStoreBackendOptions options;
  options.object_store = TestDir() + "/objects-local";
  options.local_etcd_dir = etcd_dir;
  options.etcd_prefix = "backfill/test/";
  options.cache_dir = TestDir() + "/cache-local";
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<SharedStoreBackend> backend,
                                SharedStoreBackend::Start(options));
  ASSERT_TRUE(backend->started_local_etcd());
  ASSERT_NE(backend->local_etcd(), nullptr);
  EXPECT_EQ(backend->etcd_endpoints().size(), 3u);
  std::vector<pid_t> pids;
  for (int i = 0; i < 3; ++i) pids.push_back(backend->local_etcd()->pid(i));
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<SharedStateStore> store,
        SharedStateStore::Open(backend->store_options()));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local, store->NewLocalStateStore(1, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    BACKFILL_ASSERT_OK(local->Insert(0, "k", "v"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    EXPECT_EQ(store->VersionId(), 1u);
    EXPECT_THAT(store->Get(TableKey{1, 0, "k"}, Epoch(1)),
                testing::IsOkAndHolds(std::optional<std::string>("v")));
  }
  EXPECT_TRUE(std::filesystem::exists(etcd_dir));
  backend.reset();
  for (pid_t pid : pids) EXPECT_FALSE(ProcessExists(pid)) << pid;
  EXPECT_FALSE(std::filesystem::exists(etcd_dir));
}

}  // namespace
}  // namespace backfill
