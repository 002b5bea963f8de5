// SharedStateStore over a real 3-member etcd cluster and a local-directory
// object store: the StateStore conformance suite, then what only this store
// has: reopening loads the current version, the records in etcd, SSTs
// fetched into a fresh cache, and corrupt objects and records (DataLoss
// naming them).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_version.pb.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "storage/state_store_conformance.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::SizeIs;

absl::StatusOr<std::unique_ptr<SharedStateStore>> OpenStore(
    const std::string& name) {
  absl::StatusOr<SharedStateStoreOptions> options =
      SharedStoreFixture::Options(name);
  if (!options.ok()) return options.status();
  return SharedStateStore::Open(*options);
}

INSTANTIATE_TEST_SUITE_P(
    Shared, StateStoreConformanceTest,
    ::testing::Values(StateStoreFactory{
        "SharedLocalDirectoryEtcd",
        []() -> absl::StatusOr<std::unique_ptr<StateStore>> {
          auto store = OpenStore(SharedStoreFixture::UniqueName("conformance"));
          if (!store.ok()) return store.status();
          return std::unique_ptr<StateStore>(*std::move(store));
        }}),
    StateStoreFactoryName);

constexpr TableId kTable = 5;

TEST(SharedStateStoreTest, ReopenLoadsTheCurrentVersion) {
  const std::string name = SharedStoreFixture::UniqueName("reopen");
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, OpenStore(name));
    EXPECT_EQ(store->VersionId(), 0u);
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(0));
    SharedStoreFixture::CommitRows(*store, kTable, 2,
                                   {{"a", "a2"}, {"b", "b2"}});
    SharedStoreFixture::CommitRows(*store, kTable, 4,
                                   {{"a", std::nullopt}, {"c", "c4"}});
    // No rows: a version without a new SST.
    SharedStoreFixture::CommitRows(*store, kTable, 6, {});
    EXPECT_EQ(store->VersionId(), 3u);
    EXPECT_THAT(store->SstObjects(), SizeIs(2));
  }
  // A new process: a new cache directory, so every SST is fetched.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, OpenStore(name));
  EXPECT_EQ(store->VersionId(), 3u);
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(6));
  EXPECT_THAT(store->SstObjects(), SizeIs(2));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("a2"))));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(6)),
              IsOkAndHolds(std::nullopt));
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 6),
            (std::vector<std::pair<std::string, std::string>>{{"b", "b2"},
                                                              {"c", "c4"}}));
  // And it commits on top.
  SharedStoreFixture::CommitRows(*store, kTable, 8, {{"d", "d8"}});
  EXPECT_EQ(store->VersionId(), 4u);
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "d"}, Epoch(8)),
              IsOkAndHolds(Optional(std::string("d8"))));
}

TEST(SharedStateStoreTest, EtcdHoldsThePointerAndOneDeltaPerCommit) {
  const std::string name = SharedStoreFixture::UniqueName("records");
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, OpenStore(name));
  SharedStoreFixture::CommitRows(*store, kTable, 3,
                                 {{"a", "x"}, {"b", std::nullopt}});
  SharedStoreFixture::CommitRows(*store, kTable, 5, {});
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto etcd, SharedStoreFixture::NewEtcdClient());
  const std::string prefix = absl::StrCat("test/", name, "/");
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> pointer,
                                etcd->Get(prefix + "version"));
  ASSERT_TRUE(pointer.has_value());
  proto::CurrentVersion current;
  ASSERT_TRUE(current.ParseFromString(pointer->value));
  EXPECT_EQ(current.id(), 2u);
  EXPECT_EQ(current.committed_epoch(), 5u);
  EXPECT_FALSE(current.commit_token().empty());
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult deltas,
                                etcd->GetPrefix(prefix + "delta/"));
  ASSERT_THAT(deltas.kvs, SizeIs(2));
  EXPECT_EQ(deltas.kvs[0].key, prefix + "delta/00000000000000000001");
  proto::VersionDelta first, second;
  ASSERT_TRUE(first.ParseFromString(deltas.kvs[0].value));
  ASSERT_TRUE(second.ParseFromString(deltas.kvs[1].value));
  EXPECT_EQ(first.id(), 1u);
  EXPECT_EQ(first.committed_epoch(), 3u);
  ASSERT_THAT(first.added(), SizeIs(1));
  EXPECT_EQ(first.added(0).object_key(), store->SstObjects().at(0));
  EXPECT_THAT(first.added(0).object_key(), HasSubstr("store/sst/"));
  EXPECT_EQ(first.added(0).num_entries(), 2u);
  EXPECT_EQ(first.added(0).num_tombstones(), 1u);
  EXPECT_EQ(first.added(0).min_epoch(), 3u);
  EXPECT_EQ(first.added(0).max_epoch(), 3u);
  EXPECT_EQ(second.id(), 2u);
  EXPECT_THAT(second.added(), SizeIs(0));
  // Both written by the same transaction as the pointer.
  EXPECT_EQ(deltas.kvs[1].mod_revision, pointer->mod_revision);
}

TEST(SharedStateStoreTest, CorruptObjectIsDataLossNamingIt) {
  const std::string name = SharedStoreFixture::UniqueName("corrupt-object");
  std::string object_key;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, OpenStore(name));
    SharedStoreFixture::CommitRows(*store, kTable, 2,
                                   {{"a", std::string(3000, 'a')}});
    object_key = store->SstObjects().at(0);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::string bytes,
                                options.object_store->Get(object_key));
  bytes[bytes.size() / 4] ^= 0x01;
  BACKFILL_ASSERT_OK(options.object_store->Put(object_key, bytes));
  EXPECT_THAT(SharedStateStore::Open(options),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(object_key)));
  // Shorter than the descriptor says.
  BACKFILL_ASSERT_OK(options.object_store->Put(object_key, "short"));
  EXPECT_THAT(SharedStateStore::Open(options),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(object_key)));
  // Gone: as for an object store the store was not created with (etcd
  // cannot tell the two apart), FailedPrecondition naming the object and
  // both causes.
  BACKFILL_ASSERT_OK(options.object_store->Delete(object_key));
  EXPECT_THAT(SharedStateStore::Open(options),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(object_key),
                             HasSubstr("created with another object store"),
                             HasSubstr("or the object was deleted"))));
}

TEST(SharedStateStoreTest, CorruptCacheFileIsFetchedAgain) {
  const std::string name = SharedStoreFixture::UniqueName("corrupt-cache");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  std::string object_key;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    SharedStoreFixture::CommitRows(*store, kTable, 2, {{"a", "value"}});
    object_key = store->SstObjects().at(0);
  }
  // Same cache directory: the cached file is damaged (same size).
  const std::string cached =
      (std::filesystem::path(options.cache_dir) / object_key).string();
  const auto size = std::filesystem::file_size(cached);
  {
    std::ofstream out(cached, std::ios::binary | std::ios::trunc);
    out << std::string(size, 'x');
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(2)),
              IsOkAndHolds(Optional(std::string("value"))));
}

TEST(SharedStateStoreTest, CorruptRecordsAreDataLossNamingTheKey) {
  const std::string name = SharedStoreFixture::UniqueName("corrupt-record");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    SharedStoreFixture::CommitRows(*store, kTable, 2, {{"a", "1"}});
    SharedStoreFixture::CommitRows(*store, kTable, 3, {{"a", "2"}});
  }
  const std::string prefix = options.etcd_prefix;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::optional<EtcdKeyValue> delta,
      options.etcd->Get(prefix + "delta/00000000000000000001"));
  ASSERT_TRUE(delta.has_value());
  // A missing delta.
  BACKFILL_ASSERT_OK(options.etcd->Delete(delta->key).status());
  EXPECT_THAT(
      SharedStateStore::Open(options),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr(prefix + "delta/")));
  // An undecodable delta.
  BACKFILL_ASSERT_OK(
      options.etcd->Put({delta->key, "\xff\xff garbage", 0}).status());
  EXPECT_THAT(SharedStateStore::Open(options),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(delta->key)));
  BACKFILL_ASSERT_OK(options.etcd->Put({delta->key, delta->value, 0}).status());
  BACKFILL_ASSERT_OK(SharedStateStore::Open(options).status());
  // An undecodable pointer.
  BACKFILL_ASSERT_OK(
      options.etcd->Put({prefix + "version", "\xff", 0}).status());
  EXPECT_THAT(
      SharedStateStore::Open(options),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr(prefix + "version")));
}

TEST(SharedStateStoreTest, OptionsAreValidated) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options("validated"));
  SharedStateStoreOptions bad = options;
  bad.etcd_prefix = "";
  EXPECT_THAT(
      SharedStateStore::Open(bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("etcd_prefix")));
  bad = options;
  bad.object_prefix = "no-slash";
  EXPECT_THAT(
      SharedStateStore::Open(bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("object_prefix")));
  bad = options;
  bad.cache_dir = "";
  EXPECT_THAT(
      SharedStateStore::Open(bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cache_dir")));
  bad = options;
  bad.object_store = nullptr;
  EXPECT_THAT(
      SharedStateStore::Open(bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("object_store")));
}

}  // namespace
}  // namespace backfill
