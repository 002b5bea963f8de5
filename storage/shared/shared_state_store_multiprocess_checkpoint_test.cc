// SharedStateStore's checkpoint over several processes (SyncCheckpoint,
// CommitCheckpoint, ApplyCheckpoint), with three store objects on one etcd
// prefix standing for three processes (two writers and a committer), over a
// real 3-member etcd cluster and a local-directory object store: each writer's
// rows become visible to the other once the committed version is applied, the
// applying store's committed epoch advances (waiters and listeners wake) and
// its synced batches are dropped; a sync that is never committed stays
// invisible and is synced again by the next checkpoint; misuse is refused.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/cancellation.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;
using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 5;

// Three store objects of one store: two writers and a committer.
struct Processes {
  SharedStateStoreOptions options;
  std::unique_ptr<SharedStateStore> a;
  std::unique_ptr<SharedStateStore> b;
  std::unique_ptr<SharedStateStore> committer;
};

Processes OpenProcesses(const std::string& base) {
  Processes processes;
  const std::string name = SharedStoreFixture::UniqueName(base);
  std::unique_ptr<SharedStateStore>* stores[] = {&processes.a, &processes.b,
                                                 &processes.committer};
  for (std::unique_ptr<SharedStateStore>* store : stores) {
    auto options = SharedStoreFixture::Options(name);  // Own cache directory.
    EXPECT_TRUE(options.ok()) << options.status();
    if (!options.ok()) return processes;
    processes.options = *options;
    auto opened = SharedStateStore::Open(*options);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) *store = *std::move(opened);
  }
  return processes;
}

TEST(SharedStateStoreMultiprocessCheckpointTest,
     EachProcessReadsTheOthersRowsOnceApplied) {
  Processes p = OpenProcesses("two-writers");
  ASSERT_TRUE(p.a && p.b && p.committer);
  auto a_rows = SharedStoreFixture::SealRows(
      *p.a, kTable, 3, {{"a1", "from a"}, {"a2", "from a"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*p.b, kTable, 3, {{"b1", "from b"}});

  std::vector<Epoch> a_heard;
  const uint64_t listener =
      p.a->AddCommitListener([&](Epoch epoch) { a_heard.push_back(epoch); });
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult a_sync,
                                p.a->SyncCheckpoint(Epoch(3)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult b_sync,
                                p.b->SyncCheckpoint(Epoch(3)));
  EXPECT_THAT(a_sync.descriptors, SizeIs(1));
  EXPECT_THAT(b_sync.descriptors, SizeIs(1));
  // Synced, not committed: nothing advanced, and each still reads its own
  // rows (sealed) but not the other's.
  EXPECT_EQ(p.a->CommittedEpoch(kTable), Epoch::Zero());
  EXPECT_THAT(p.a->Get(TableKey{kTable, 0, "b1"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto a_read,
                                a_rows->Get(0, "a1"));  // At its epoch 4.
  EXPECT_THAT(a_read, Optional(std::string("from a")));
  // No instance may start at a synced epoch.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto late, p.a->NewLocalStateStore(kTable, {}));
  EXPECT_THAT(late->Init(EpochPair::ForInitial(Epoch(3))),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("already committed")));

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SharedStateStore::CommittedVersion version,
      p.committer->CommitCheckpoint({a_sync, b_sync}, Epoch(3)));
  EXPECT_EQ(version.committed_epoch, Epoch(3));
  EXPECT_EQ(p.committer->CommittedEpoch(kTable), Epoch(3));
  EXPECT_THAT(p.committer->SstObjects(), SizeIs(2));

  // A thread of A waits for epoch 3: the apply wakes it.
  Cancellation never;
  absl::Status waited = absl::UnknownError("not waited");
  std::thread waiter([&] {
    waited =
        p.a->WaitCommitted(kTable, Epoch(3), absl::Now() + absl::Seconds(60),
                           never, Clock::Real());
  });
  BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(version));
  waiter.join();
  BACKFILL_EXPECT_OK(waited);
  BACKFILL_ASSERT_OK(p.b->ApplyCheckpoint(version));
  BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(version));  // Again: a no-op.
  EXPECT_THAT(a_heard, ElementsAre(Epoch(3)));
  p.a->RemoveCommitListener(listener);
  const Rows all = {{"a1", "from a"}, {"a2", "from a"}, {"b1", "from b"}};
  for (SharedStateStore* store : {p.a.get(), p.b.get(), p.committer.get()}) {
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(3));
    EXPECT_EQ(store->VersionId(), version.id);
    EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 3), all);
  }
  // The synced batches were dropped as committed: a sync of the next epoch
  // has nothing to upload.
  a_rows.reset();
  late.reset();
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult empty,
                                p.a->SyncCheckpoint(Epoch(4)));
  EXPECT_THAT(empty.descriptors, IsEmpty());
}

TEST(SharedStateStoreMultiprocessCheckpointTest,
     AnUncommittedSyncStaysInvisibleAndIsSyncedAgain) {
  Processes p = OpenProcesses("uncommitted");
  ASSERT_TRUE(p.a && p.b && p.committer);
  auto a_rows = SharedStoreFixture::SealRows(*p.a, kTable, 2, {{"a", "2"}});
  auto b_rows = SharedStoreFixture::SealRows(*p.b, kTable, 2, {{"b", "2"}});
  // Epoch 2: only A's sync reaches the committer, which commits nothing (B
  // failed to reply); B's uploaded object is in no version.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult a_sync,
                                p.a->SyncCheckpoint(Epoch(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult b_lost,
                                p.b->SyncCheckpoint(Epoch(2)));
  ASSERT_THAT(b_lost.descriptors, SizeIs(1));
  // Epoch 3 (nothing new written): both sync again, their epoch-2 rows
  // included, and the committer commits 3.
  BACKFILL_ASSERT_OK(a_rows->Seal(EpochPair{Epoch(4), Epoch(3)}));
  BACKFILL_ASSERT_OK(b_rows->Seal(EpochPair{Epoch(4), Epoch(3)}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(a_sync, p.a->SyncCheckpoint(Epoch(3)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult b_sync,
                                p.b->SyncCheckpoint(Epoch(3)));
  ASSERT_THAT(b_sync.descriptors, SizeIs(1));
  EXPECT_NE(b_sync.descriptors, b_lost.descriptors);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SharedStateStore::CommittedVersion version,
      p.committer->CommitCheckpoint({a_sync, b_sync}, Epoch(3)));
  BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(version));
  BACKFILL_ASSERT_OK(p.b->ApplyCheckpoint(version));
  EXPECT_EQ(SharedStoreFixture::Scan(*p.a, kTable, 3),
            (Rows{{"a", "2"}, {"b", "2"}}));
  EXPECT_THAT(p.a->SstObjects(), SizeIs(2));
  // The epoch-2 syncs' objects (A's and B's): listed, in no version, deleted
  // by the vacuum (their epoch, 2, is committed without them).
  EXPECT_THAT(
      SharedStoreFixture::ListKeys(*p.options.object_store, "store/sst/"),
      SizeIs(4));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats stats, p.committer->Vacuum());
  EXPECT_EQ(stats.deleted, 2u);
  EXPECT_EQ(stats.kept_referenced, 2u);
}

// A sync whose checkpoint failed keeps instances from starting at or below
// its epoch, until the restart from the committed epoch abandons it (once
// the instances that sealed its data are gone).
TEST(SharedStateStoreMultiprocessCheckpointTest,
     AnAbandonedSyncLetsAnAttemptRestartFromTheCommittedEpoch) {
  Processes p = OpenProcesses("abandoned");
  ASSERT_TRUE(p.a && p.committer);
  auto rows = SharedStoreFixture::SealRows(*p.a, kTable, 2, {{"a", "2"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult lost,
                                p.a->SyncCheckpoint(Epoch(2)));
  // Nothing committed 2. The old instance still holds its data: refused.
  EXPECT_THAT(p.a->AbandonUncommittedSyncs(Epoch(0)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("still holds data sealed at epoch 2")));
  EXPECT_THAT(p.a->AbandonUncommittedSyncs(Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not the committed epoch 0")));
  rows.reset();  // The failed attempt let go.
  auto refused = p.a->NewLocalStateStore(kTable, {});
  ASSERT_TRUE(refused.ok());
  EXPECT_THAT((*refused)->Init(EpochPair::ForInitial(Epoch(1))),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("already committed (committed 2)")));
  BACKFILL_ASSERT_OK(p.a->AbandonUncommittedSyncs(Epoch(0)));
  // The restart writes other rows from epoch 1; its sync of 2 is committed
  // and holds them only.
  auto again = SharedStoreFixture::SealRows(*p.a, kTable, 2, {{"b", "2"}});
  ASSERT_NE(again, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult sync,
                                p.a->SyncCheckpoint(Epoch(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SharedStateStore::CommittedVersion version,
      p.committer->CommitCheckpoint({sync}, Epoch(2)));
  BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(version));
  EXPECT_EQ(SharedStoreFixture::Scan(*p.committer, kTable, 2),
            (Rows{{"b", "2"}}));
  (void)lost;
}

// A process's epoch pins ride its sync and commit with the version: a new
// process finds them, and a release commits the same way.
TEST(SharedStateStoreMultiprocessCheckpointTest, EpochPinsCommitWithTheSync) {
  Processes p = OpenProcesses("pins");
  ASSERT_TRUE(p.a && p.b && p.committer);
  auto a_rows = SharedStoreFixture::SealRows(*p.a, kTable, 2, {{"a", "2"}});
  auto commit_epoch = [&](uint64_t epoch) {
    auto a_sync = p.a->SyncCheckpoint(Epoch(epoch));
    auto b_sync = p.b->SyncCheckpoint(Epoch(epoch));
    ASSERT_TRUE(a_sync.ok() && b_sync.ok());
    auto version =
        p.committer->CommitCheckpoint({*a_sync, *b_sync}, Epoch(epoch));
    ASSERT_TRUE(version.ok()) << version.status();
    BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(*version));
    BACKFILL_ASSERT_OK(p.b->ApplyCheckpoint(*version));
  };
  commit_epoch(2);
  a_rows.reset();
  BACKFILL_ASSERT_OK(p.b->PinEpoch("b's snapshot", Epoch(2)));
  commit_epoch(3);
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto fresh,
                                  SharedStateStore::Open(p.options));
    EXPECT_THAT(fresh->EpochPins(),
                ElementsAre(::testing::Pair("b's snapshot", Epoch(2))));
  }
  BACKFILL_ASSERT_OK(p.b->ReleaseEpochPin("b's snapshot", Epoch(4)));
  commit_epoch(4);
  EXPECT_THAT(p.b->EpochPins(), IsEmpty());
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto fresh, SharedStateStore::Open(p.options));
  EXPECT_THAT(fresh->EpochPins(), IsEmpty());
}

TEST(SharedStateStoreMultiprocessCheckpointTest, StepsRefuseMisuse) {
  Processes p = OpenProcesses("misuse");
  ASSERT_TRUE(p.a && p.b && p.committer);
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto open,
                                  p.a->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(open->Init(EpochPair::ForInitial(Epoch(5))));
    EXPECT_THAT(p.a->SyncCheckpoint(Epoch(5)),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("has not sealed the epoch")));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::CommittedVersion version,
                                p.committer->CommitCheckpoint({}, Epoch(5)));
  EXPECT_THAT(p.committer->CommitCheckpoint({}, Epoch(5)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not after the committed epoch 5")));
  BACKFILL_ASSERT_OK(p.a->ApplyCheckpoint(version));
  EXPECT_THAT(p.a->SyncCheckpoint(Epoch(5)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not after the committed epoch 5")));
  // A version etcd has not got.
  EXPECT_THAT(p.b->ApplyCheckpoint({version.id + 1, Epoch(6)}),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("ApplyCommittedCheckpoint(version")));
  EXPECT_EQ(p.b->CommittedEpoch(kTable), Epoch::Zero());
  SharedStateStore::SyncResult garbage{Epoch(6), {"not a descriptor"}};
  EXPECT_THAT(p.committer->CommitCheckpoint({garbage}, Epoch(6)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("undecodable SST descriptor")));
  // Publishing an epoch would drop sealed data that were never synced: a
  // version of epoch 6 cannot hold B's rows of epoch 6, nor one of epoch 7
  // the committer's own.
  auto b_rows = SharedStoreFixture::SealRows(*p.b, kTable, 6, {{"b", "6"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::CommittedVersion six,
                                p.committer->CommitCheckpoint({}, Epoch(6)));
  EXPECT_THAT(p.b->ApplyCheckpoint(six),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("has data sealed at epoch 6 that this store "
                                 "has not synced")));
  EXPECT_EQ(p.b->CommittedEpoch(kTable), Epoch::Zero());
  EXPECT_THAT(b_rows->Get(0, "b"), IsOkAndHolds(Optional(std::string("6"))));
  auto committer_rows =
      SharedStoreFixture::SealRows(*p.committer, kTable, 7, {{"c", "7"}});
  EXPECT_THAT(p.committer->CommitCheckpoint({}, Epoch(7)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("has not synced")));
  // Refused before anything was written: the committer still commits.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult own,
                                p.committer->SyncCheckpoint(Epoch(7)));
  BACKFILL_ASSERT_OK(p.committer->CommitCheckpoint({own}, Epoch(7)).status());
  EXPECT_THAT(p.committer->Get(TableKey{kTable, 0, "c"}, Epoch(7)),
              IsOkAndHolds(Optional(std::string("7"))));
}

}  // namespace
}  // namespace backfill
