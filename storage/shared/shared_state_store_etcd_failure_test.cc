// Failure tests of SharedStateStore over a real 3-member etcd cluster:
//  * a committer fenced after another process took over the store is
//    refused (FailedPrecondition) and its data never become visible;
//  * a process SIGKILLed between the SST upload and the version commit
//    (shared_store_crash_child) leaves an object that no version lists and
//    that no reader ever sees; so does a commit failed at that point;
//  * the etcd leader killed during commits: every commit is acknowledged
//    (the client fails over) and none is lost;
//  * object-store errors (retries exhausted) fail the checkpoint or the open
//    with a clear error naming the object, and commit nothing.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/object_store.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAreArray;

constexpr TableId kTable = 9;

// Writes pk -> value at `epoch` through a fresh instance and seals it; the
// caller checkpoints. Returns the instance (destroy it after the checkpoint).
std::unique_ptr<LocalStateStore> WriteEpoch(StateStore& store, uint64_t epoch,
                                            const std::string& pk,
                                            const std::string& value) {
  auto local = store.NewLocalStateStore(kTable, {});
  EXPECT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE((*local)->Init(EpochPair::ForInitial(Epoch(epoch))).ok());
  EXPECT_TRUE((*local)->Insert(1, pk, value).ok());
  EXPECT_TRUE((*local)->Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)}).ok());
  return *std::move(local);
}

// An ObjectStore that forwards to another and fails puts or gets on demand
// (as a store whose retries ran out: Unavailable naming the object).
class FailingObjectStore final : public ObjectStore {
 public:
  explicit FailingObjectStore(std::shared_ptr<ObjectStore> base)
      : base_(std::move(base)) {}
  bool fail_puts = false;
  bool fail_gets = false;

  absl::Status Put(absl::string_view key, absl::string_view data) override {
    if (fail_puts) return Unavailable("PUT", key);
    return base_->Put(key, data);
  }
  absl::Status PutIfAbsent(absl::string_view key,
                           absl::string_view data) override {
    if (fail_puts) return Unavailable("PUT", key);
    return base_->PutIfAbsent(key, data);
  }
  absl::StatusOr<std::string> Get(absl::string_view key) override {
    if (fail_gets) return Unavailable("GET", key);
    return base_->Get(key);
  }
  absl::StatusOr<std::string> GetRange(absl::string_view key, uint64_t offset,
                                       uint64_t length) override {
    if (fail_gets) return Unavailable("GET", key);
    return base_->GetRange(key, offset, length);
  }
  absl::StatusOr<ObjectInfo> Head(absl::string_view key) override {
    return base_->Head(key);
  }
  absl::StatusOr<std::vector<ObjectInfo>> List(
      absl::string_view prefix) override {
    return base_->List(prefix);
  }
  absl::Status Delete(absl::string_view key) override {
    return base_->Delete(key);
  }
  std::string DebugString() const override { return base_->DebugString(); }

 private:
  absl::Status Unavailable(absl::string_view operation,
                           absl::string_view key) const {
    return absl::UnavailableError(
        absl::StrCat(DebugString(), "/", key, ": ", operation,
                     ": retries exhausted (injected)"));
  }
  const std::shared_ptr<ObjectStore> base_;
};

TEST(SharedStateStoreEtcdFailureTest, StaleCommitterIsRefused) {
  const std::string name = SharedStoreFixture::UniqueName("fenced");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto old_committer,
                                SharedStateStore::Open(options));
  {
    auto local = WriteEpoch(*old_committer, 2, "a", "old-2");
    BACKFILL_ASSERT_OK(old_committer->Checkpoint(Epoch(2)));
  }
  // Another process takes over: it loads version 1 and commits version 2.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions new_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto new_committer,
                                SharedStateStore::Open(new_options));
  EXPECT_EQ(new_committer->CommittedEpoch(kTable), Epoch(2));
  {
    auto local = WriteEpoch(*new_committer, 3, "b", "new-3");
    BACKFILL_ASSERT_OK(new_committer->Checkpoint(Epoch(3)));
  }
  // The old committer's view (version 1) is stale: refused.
  {
    auto local = WriteEpoch(*old_committer, 3, "c", "old-3");
    EXPECT_THAT(old_committer->Checkpoint(Epoch(3)),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("another committer")));
  }
  // And every later one (the store must be reopened).
  {
    auto local = WriteEpoch(*old_committer, 5, "c", "old-5");
    EXPECT_THAT(old_committer->Checkpoint(Epoch(5)),
                StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  // Its uploaded SST exists but no version lists it: nobody sees "c".
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              SizeIs(3));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reader_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader,
                                SharedStateStore::Open(reader_options));
  EXPECT_EQ(reader->VersionId(), 2u);
  EXPECT_EQ(reader->CommittedEpoch(kTable), Epoch(3));
  EXPECT_THAT(reader->SstObjects(), SizeIs(2));
  EXPECT_THAT(reader->Get(TableKey{kTable, 1, "a"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("old-2"))));
  EXPECT_THAT(reader->Get(TableKey{kTable, 1, "b"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("new-3"))));
  EXPECT_THAT(reader->Get(TableKey{kTable, 1, "c"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  // The new committer goes on.
  {
    auto local = WriteEpoch(*new_committer, 4, "d", "new-4");
    BACKFILL_ASSERT_OK(new_committer->Checkpoint(Epoch(4)));
  }
  EXPECT_EQ(new_committer->VersionId(), 3u);
}

TEST(SharedStateStoreEtcdFailureTest,
     DeathBetweenUploadAndCommitIsNeverVisible) {
  const std::string name = SharedStoreFixture::UniqueName("orphan");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    auto local = WriteEpoch(*store, 2, "kept", "v2");
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
  }
  // The dying committer: its SST is uploaded, then the process "dies"
  // (the hook fails the commit exactly where a crash would stop it; the
  // store is abandoned without any clean-up).
  std::string orphan;
  {
    SharedStateStoreOptions dying = options;
    dying.after_upload_for_test = [&](absl::string_view key) {
      orphan = std::string(key);
      return absl::AbortedError("killed between upload and commit");
    };
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(dying));
    auto local = WriteEpoch(*store, 3, "lost", "v3");
    EXPECT_THAT(store->Checkpoint(Epoch(3)),
                StatusIs(absl::StatusCode::kAborted));
  }
  ASSERT_FALSE(orphan.empty());
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              Contains(orphan));
  // The next process sees the last version, without the orphan.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions next_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto next,
                                SharedStateStore::Open(next_options));
  EXPECT_EQ(next->CommittedEpoch(kTable), Epoch(2));
  EXPECT_THAT(next->SstObjects(), Not(Contains(orphan)));
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "lost"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  // It commits epoch 3 itself; the orphan's rows at epoch 3 stay invisible.
  {
    auto local = WriteEpoch(*next, 3, "other", "v3");
    BACKFILL_ASSERT_OK(next->Checkpoint(Epoch(3)));
  }
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "lost"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "other"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("v3"))));
  auto it = next->NewIterator(kTable, 1, PkRange::All(), Epoch(3));
  BACKFILL_ASSERT_OK(it.status());
  std::vector<std::string> keys;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    keys.emplace_back((*it)->key());
  }
  BACKFILL_ASSERT_OK((*it)->status());
  EXPECT_EQ(keys, (std::vector<std::string>{"kept", "other"}));
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              SizeIs(3));
  EXPECT_THAT(next->SstObjects(), SizeIs(2));
}

TEST(SharedStateStoreEtcdFailureTest, ProcessKilledBetweenUploadAndCommit) {
  const std::string name = SharedStoreFixture::UniqueName("killed");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    auto local = WriteEpoch(*store, 2, "kept", "v2");
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTestCluster * cluster,
                                SharedStoreFixture::Cluster());
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  const std::string orphan_file = dir + "/orphan";
  std::vector<std::string> args = {"storage/shared/shared_store_crash_child",
                                   absl::StrJoin(cluster->Endpoints(), ","),
                                   dir + "/objects",
                                   options.etcd_prefix,
                                   dir + "/child-cache",
                                   "3",
                                   orphan_file};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ),
            0);
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "child exit status " << wait_status;
  std::stringstream orphan_bytes;
  orphan_bytes << std::ifstream(orphan_file).rdbuf();
  const std::string orphan = orphan_bytes.str();
  ASSERT_FALSE(orphan.empty());
  // Uploaded, never committed.
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              Contains(orphan));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions next_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto next,
                                SharedStateStore::Open(next_options));
  EXPECT_EQ(next->CommittedEpoch(kTable), Epoch(2));
  EXPECT_EQ(next->VersionId(), 1u);
  EXPECT_THAT(next->SstObjects(), Not(Contains(orphan)));
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "lost"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  {
    auto local = WriteEpoch(*next, 3, "other", "v3");
    BACKFILL_ASSERT_OK(next->Checkpoint(Epoch(3)));
  }
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "lost"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "other"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("v3"))));
  EXPECT_THAT(next->SstObjects(), SizeIs(2));
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              SizeIs(3));
  // Epoch 3 is committed without the orphan: the vacuum deletes it, and
  // never an object a version lists.
  const std::vector<std::string> referenced = next->SstObjects();
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats stats, next->Vacuum());
  EXPECT_EQ(stats.deleted, 1u);
  EXPECT_EQ(stats.kept_referenced, 2u);
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              UnorderedElementsAreArray(referenced));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats again, next->Vacuum());
  EXPECT_EQ(again.deleted, 0u);
  EXPECT_THAT(next->Get(TableKey{kTable, 1, "other"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("v3"))));
}

TEST(SharedStateStoreEtcdFailureTest, LeaderKilledDuringCommitsLosesNothing) {
  const std::string name = SharedStoreFixture::UniqueName("leader-killed");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  // Every version and every epoch's rows are read back below: no compaction
  // (which would move the GC horizon).
  options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTestCluster * cluster,
                                SharedStoreFixture::Cluster());
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  constexpr int kCommits = 30;
  int killed = -1;
  for (int i = 1; i <= kCommits; ++i) {
    if (i == 10) {
      BACKFILL_ASSERT_OK_AND_ASSIGN(killed, cluster->LeaderIndex());
      BACKFILL_ASSERT_OK(cluster->KillMember(killed));
    }
    if (i == 20) {
      BACKFILL_ASSERT_OK(cluster->RestartMember(killed));
    }
    auto local =
        WriteEpoch(*store, i, absl::StrCat("pk", i), absl::StrCat("value", i));
    // Acknowledged (OK) or the test stops: a failover must not fail it.
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(i)));
  }
  if (killed >= 0 && !cluster->IsRunning(killed)) {
    BACKFILL_ASSERT_OK(cluster->RestartMember(killed));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reader_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader,
                                SharedStateStore::Open(reader_options));
  EXPECT_EQ(reader->CommittedEpoch(kTable), Epoch(kCommits));
  EXPECT_EQ(reader->VersionId(), static_cast<uint64_t>(kCommits));
  for (int i = 1; i <= kCommits; ++i) {
    EXPECT_THAT(reader->Get(TableKey{kTable, 1, absl::StrCat("pk", i)},
                            Epoch(kCommits)),
                IsOkAndHolds(Optional(absl::StrCat("value", i))));
    EXPECT_THAT(
        reader->Get(TableKey{kTable, 1, absl::StrCat("pk", i)}, Epoch(i - 1)),
        IsOkAndHolds(std::nullopt));
  }
}

TEST(SharedStateStoreEtcdFailureTest,
     ObjectStoreErrorsAreClearAndCommitNothing) {
  const std::string name = SharedStoreFixture::UniqueName("object-errors");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  auto failing = std::make_shared<FailingObjectStore>(options.object_store);
  options.object_store = failing;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    {
      auto local = WriteEpoch(*store, 2, "kept", "v2");
      BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
    }
    failing->fail_puts = true;
    auto local = WriteEpoch(*store, 3, "lost", "v3");
    EXPECT_THAT(
        store->Checkpoint(Epoch(3)),
        StatusIs(absl::StatusCode::kUnavailable, HasSubstr("store/sst/")));
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(2));
    EXPECT_EQ(store->VersionId(), 1u);
  }
  failing->fail_puts = false;
  // A new process cannot fetch the SSTs: a clear error naming the object.
  failing->fail_gets = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions fresh,
                                SharedStoreFixture::Options(name));
  fresh.object_store = failing;
  EXPECT_THAT(
      SharedStateStore::Open(fresh),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("store/sst/")));
  failing->fail_gets = false;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(fresh));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(2));
  EXPECT_THAT(store->Get(TableKey{kTable, 1, "kept"}, Epoch(2)),
              IsOkAndHolds(Optional(std::string("v2"))));
  EXPECT_THAT(store->Get(TableKey{kTable, 1, "lost"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
}

}  // namespace
}  // namespace backfill
