// Version checkpoints and the multi-process checkpoint seam of the shared
// store, over a real etcd cluster: a full version is written as an object
// every K versions and the deltas before it leave etcd, a new process opens
// from the checkpoint plus the later deltas, a corrupt checkpoint object is
// DataLoss naming it; two processes' syncs committed once become visible to
// both once applied, an uncommitted sync never, and is vacuumed.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/internal/mem_table.h"
#include "storage/shared/shared_committed_layer.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_version.pb.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using shared_internal::SharedCommittedLayer;
using storage_internal::CommitBatch;
using storage_internal::CommittedVersion;
using storage_internal::MemTable;
using storage_internal::SyncResult;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::SizeIs;

constexpr TableId kTable = 4;

TEST(SharedStateStoreVersionsTest, CheckpointsTrimDeltasAndOpenFromThem) {
  const std::string name = SharedStoreFixture::UniqueName("checkpoints");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.version_checkpoint_deltas = 3;
  options.compaction_trigger_ssts = 4;  // Compactions are versions too.
  std::vector<std::string> ssts;
  uint64_t version_id = 0;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    for (uint64_t epoch = 1; epoch <= 10; ++epoch) {
      SharedStoreFixture::CommitRows(
          *store, kTable, epoch,
          {{absl::StrCat("k", epoch), absl::StrCat("v", epoch)}});
      BACKFILL_ASSERT_OK(store->WaitForMaintenance());
    }
    ssts = store->SstObjects();
    version_id = store->VersionId();
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto etcd, SharedStoreFixture::NewEtcdClient());
  const std::string prefix = absl::StrCat("test/", name, "/");
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> record,
                                etcd->Get(prefix + "checkpoint"));
  ASSERT_TRUE(record.has_value());
  proto::VersionCheckpointRef ref;
  ASSERT_TRUE(ref.ParseFromString(record->value));
  EXPECT_GT(ref.id(), version_id - 3);
  EXPECT_LE(ref.id(), version_id);
  // Only the deltas after the checkpoint are left in etcd, and one
  // checkpoint object in the object store.
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult deltas,
                                etcd->GetPrefix(prefix + "delta/"));
  EXPECT_EQ(deltas.kvs.size(), version_id - ref.id());
  EXPECT_THAT(
      SharedStoreFixture::ListKeys(*options.object_store, "store/versions/"),
      ElementsAre(ref.object_key()));

  // A new process opens from the checkpoint and the deltas after it.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened,
                                SharedStateStore::Open(reopen_options));
  EXPECT_EQ(reopened->VersionId(), version_id);
  EXPECT_EQ(reopened->CommittedEpoch(kTable), Epoch(10));
  EXPECT_EQ(reopened->SstObjects(), ssts);
  for (uint64_t epoch = 1; epoch <= 10; ++epoch) {
    EXPECT_THAT(
        reopened->Get(TableKey{kTable, 0, absl::StrCat("k", epoch)}, Epoch(10)),
        IsOkAndHolds(Optional(absl::StrCat("v", epoch))));
  }
  // And commits on top.
  SharedStoreFixture::CommitRows(*reopened, kTable, 11, {{"k11", "v11"}});
  EXPECT_EQ(reopened->VersionId(), version_id + 1);

  // A corrupt checkpoint object: DataLoss naming it.
  BACKFILL_ASSERT_OK(options.object_store->Put(ref.object_key(), "garbage"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions corrupt_options,
                                SharedStoreFixture::Options(name));
  EXPECT_THAT(
      SharedStateStore::Open(corrupt_options),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr(ref.object_key())));
}

// etcd names the versions, the object store holds their files: a store
// reopened with another object store (an empty one here) is refused before
// anything is written, naming the object store; the right one still opens.
// Once with a cache of its own (a new data directory: the files are not
// found), once with the store's cache (the same data directory with another
// --object_store: the files are in the cache, and the store was used,
// writing to the wrong object store).
TEST(SharedStateStoreVersionsTest, AnotherObjectStoreIsRefused) {
  for (const bool same_cache : {false, true}) {
    SCOPED_TRACE(same_cache ? "the store's cache" : "a cache of its own");
    const std::string name = SharedStoreFixture::UniqueName("objects");
    BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                  SharedStoreFixture::Options(name));
    {
      BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                    SharedStateStore::Open(options));
      for (uint64_t epoch = 1; epoch <= 3; ++epoch) {
        SharedStoreFixture::CommitRows(*store, kTable, epoch,
                                       {{absl::StrCat("k", epoch), "v"}});
        BACKFILL_ASSERT_OK(store->WaitForMaintenance());
      }
    }
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        SharedStateStoreOptions wrong,
        SharedStoreFixture::Options(SharedStoreFixture::UniqueName("other")));
    wrong.etcd_prefix = options.etcd_prefix;
    if (same_cache) wrong.cache_dir = options.cache_dir;
    EXPECT_THAT(
        SharedStateStore::Open(wrong),
        StatusIs(absl::StatusCode::kFailedPrecondition,
                 AllOf(HasSubstr(absl::StrCat(
                           "the object store ",
                           wrong.object_store->DebugString(), " does not hold ",
                           same_cache ? "SST 'store/sst/" : "a file")),
                       HasSubstr("created with another object store"))));
    EXPECT_THAT(SharedStoreFixture::ListKeys(*wrong.object_store, ""),
                ::testing::IsEmpty());
    BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions right,
                                  SharedStoreFixture::Options(name));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened, SharedStateStore::Open(right));
    EXPECT_EQ(reopened->CommittedEpoch(kTable), Epoch(3));
  }
}

CommitBatch Batch(TableId table, uint64_t epoch, const std::string& pk,
                  const std::string& value) {
  auto data = std::make_shared<MemTable>();
  std::string key;
  storage_internal::SetMemTableKey(0, pk, &key);
  (*data)[key] = value;
  return CommitBatch{table, Epoch(epoch), std::move(data)};
}

absl::StatusOr<std::unique_ptr<SharedCommittedLayer>> OpenLayer(
    const std::string& name) {
  absl::StatusOr<SharedStateStoreOptions> options =
      SharedStoreFixture::Options(name);  // Its own cache: another process.
  if (!options.ok()) return options.status();
  return SharedCommittedLayer::Open(*options);
}

TEST(SharedStateStoreVersionsTest, SyncPerProcessCommitOnceApplyPerProcess) {
  const std::string name = SharedStoreFixture::UniqueName("seam");
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto committer, OpenLayer(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto worker, OpenLayer(name));
  // Each process syncs its own table's batch of epoch 1.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult mine, committer->Sync({Batch(1, 1, "a", "a1")}, Epoch(1)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult theirs, worker->Sync({Batch(2, 1, "b", "b1")}, Epoch(1)));
  ASSERT_THAT(theirs.descriptors, SizeIs(1));
  // Synced, not committed: nobody sees it.
  EXPECT_THAT(worker->Get(2, 0, "b", Epoch(1)), IsOkAndHolds(std::nullopt));
  // The committer commits both once.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CommittedVersion version,
      committer->CommitVersion({mine, theirs}, Epoch(1)));
  EXPECT_EQ(version.id, 1u);
  BACKFILL_ASSERT_OK(committer->ApplyVersion(version));
  EXPECT_THAT(committer->Get(2, 0, "b", Epoch(1)),
              IsOkAndHolds(Optional(std::string("b1"))));
  // The worker reads it once it applied it.
  EXPECT_EQ(worker->current()->id, 0u);
  BACKFILL_ASSERT_OK(worker->ApplyVersion(version));
  EXPECT_EQ(worker->current()->id, 1u);
  EXPECT_THAT(worker->current()->ssts, SizeIs(2));
  EXPECT_THAT(worker->Get(1, 0, "a", Epoch(1)),
              IsOkAndHolds(Optional(std::string("a1"))));
  EXPECT_THAT(worker->Get(2, 0, "b", Epoch(1)),
              IsOkAndHolds(Optional(std::string("b1"))));

  // A sync never committed stays invisible, and is vacuumed once its epoch
  // is committed without it.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult lost, worker->Sync({Batch(2, 2, "c", "c2")}, Epoch(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult next, committer->Sync({Batch(1, 2, "a", "a2")}, Epoch(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommittedVersion second,
                                committer->CommitVersion({next}, Epoch(2)));
  BACKFILL_ASSERT_OK(worker->ApplyVersion(second));
  EXPECT_THAT(worker->Get(2, 0, "c", Epoch(2)), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(worker->Get(1, 0, "a", Epoch(2)),
              IsOkAndHolds(Optional(std::string("a2"))));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats stats, committer->Vacuum());
  EXPECT_EQ(stats.deleted, 1u);
  EXPECT_EQ(stats.kept_referenced, 3u);

  // A version that was never committed cannot be applied; a bad descriptor
  // is refused.
  EXPECT_THAT(worker->ApplyVersion(CommittedVersion{99, Epoch(9)}),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(
      committer->CommitVersion({SyncResult{Epoch(3), {"\xff"}}}, Epoch(3)),
      StatusIs(absl::StatusCode::kInvalidArgument));
}

// A process that follows every version reads only the deltas after its
// own: the checkpoint object is fetched only by one that is behind it.
TEST(SharedStateStoreVersionsTest, AFollowerDoesNotFetchTheCheckpoint) {
  const std::string name = SharedStoreFixture::UniqueName("follow");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.version_checkpoint_deltas = 2;
  options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto committer,
                                SharedCommittedLayer::Open(options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto follower, OpenLayer(name));
  auto commit = [&](uint64_t epoch) -> absl::StatusOr<CommittedVersion> {
    absl::StatusOr<SyncResult> sync = committer->Sync(
        {Batch(1, epoch, "a", absl::StrCat("a", epoch))}, Epoch(epoch));
    if (!sync.ok()) return sync.status();
    absl::StatusOr<CommittedVersion> version =
        committer->CommitVersion({*sync}, Epoch(epoch));
    if (!version.ok()) return version.status();
    committer->AfterCommit();  // Writes the version checkpoint when due.
    BACKFILL_RETURN_IF_ERROR(committer->WaitForMaintenance());
    return version;
  };
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(CommittedVersion version, commit(epoch));
    BACKFILL_ASSERT_OK(follower->ApplyVersion(version));
  }
  // Version 2 is checkpointed and the follower has it; its object breaks.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto etcd, SharedStoreFixture::NewEtcdClient());
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::optional<EtcdKeyValue> record,
      etcd->Get(absl::StrCat("test/", name, "/checkpoint")));
  ASSERT_TRUE(record.has_value());
  proto::VersionCheckpointRef ref;
  ASSERT_TRUE(ref.ParseFromString(record->value));
  ASSERT_EQ(ref.id(), 2u);
  BACKFILL_ASSERT_OK(options.object_store->Put(ref.object_key(), "garbage"));
  // The follower applies version 3 from its own version 2 and delta 3.
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommittedVersion third, commit(3));
  BACKFILL_ASSERT_OK(follower->ApplyVersion(third));
  EXPECT_EQ(follower->current()->id, 3u);
  EXPECT_THAT(follower->Get(1, 0, "a", Epoch(3)),
              IsOkAndHolds(Optional(std::string("a3"))));
  // A new process starts from the checkpoint object: DataLoss naming it.
  EXPECT_THAT(OpenLayer(name), StatusIs(absl::StatusCode::kDataLoss,
                                        HasSubstr(ref.object_key())));
}

// The worker's view is stale after the committer moved on; if the worker
// committed now, it would be fenced.
// A worker applies the newest version etcd has, which may be a compaction the
// committer made at a safe epoch above the one this worker still publishes to
// its readers (they pin it until the worker's store publishes the new epoch,
// just after the apply). Those reads are served by the version they need,
// held until the new epoch is published; then it is let go. Found by
// //tools:backfill_cluster_test: a worker's snapshot read in that window was
// refused and the job recovered with no fault injected.
TEST(SharedStateStoreVersionsTest, AppliedCompactionServesTheUnpublishedEpoch) {
  const std::string name = SharedStoreFixture::UniqueName("horizon");
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto committer, OpenLayer(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto worker, OpenLayer(name));
  std::optional<CommittedVersion> last;
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        SyncResult sync,
        committer->Sync({Batch(1, epoch, "a", absl::StrCat("a", epoch))},
                        Epoch(epoch)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        last, committer->CommitVersion({sync}, Epoch(epoch)));
    BACKFILL_ASSERT_OK(committer->ApplyVersion(*last));
    committer->SetCommittedEpoch(Epoch(epoch));
    if (epoch == 1) {
      BACKFILL_ASSERT_OK(worker->ApplyVersion(*last));
      worker->SetCommittedEpoch(Epoch(1));
    }
  }
  // The committer compacts at safe epoch 2: a1 is gone from the new version.
  BACKFILL_ASSERT_OK(committer->Compact());
  ASSERT_EQ(committer->current()->gc_horizon, Epoch(2));
  ASSERT_GT(committer->current()->id, last->id);

  // The worker applies version 2 and gets the compaction; it has not yet
  // published epoch 2, so its readers still pin epoch 1.
  BACKFILL_ASSERT_OK(worker->ApplyVersion(*last));
  ASSERT_EQ(worker->current()->gc_horizon, Epoch(2));
  {
    std::unique_ptr<storage_internal::EpochPin> pin = worker->Pin(Epoch(1));
    EXPECT_THAT(worker->Get(1, 0, "a", Epoch(1)),
                IsOkAndHolds(Optional(std::string("a1"))));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<StateStoreIterator> it,
        worker->NewIterator(1, 0, PkRange::All(), Epoch(1), ScanOptions{},
                            std::move(pin)));
    it->SeekToFirst();
    BACKFILL_ASSERT_OK(it->status());
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->value(), "a1");
  }
  // Once epoch 2 is published, the old version is let go: a read at epoch 1
  // is refused, one at 2 sees the compaction.
  worker->SetCommittedEpoch(Epoch(2));
  EXPECT_THAT(worker->Get(1, 0, "a", Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("compacted at safe epoch 2")));
  EXPECT_THAT(worker->Get(1, 0, "a", Epoch(2)),
              IsOkAndHolds(Optional(std::string("a2"))));
}

TEST(SharedStateStoreVersionsTest, AStaleCommitterIsFenced) {
  const std::string name = SharedStoreFixture::UniqueName("seam-fence");
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto committer, OpenLayer(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto stale, OpenLayer(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult mine, committer->Sync({Batch(1, 1, "a", "a1")}, Epoch(1)));
  BACKFILL_ASSERT_OK(committer->CommitVersion({mine}, Epoch(1)).status());
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SyncResult theirs, stale->Sync({Batch(2, 1, "b", "b1")}, Epoch(1)));
  EXPECT_THAT(stale->CommitVersion({theirs}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace backfill
