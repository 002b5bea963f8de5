// Compaction and vacuum of the shared store over a real etcd cluster: a
// reader pinned to the version before a compaction keeps reading it (its
// input objects are kept until it is gone, then vacuumed); reads below the
// GC horizon are refused, in this process and in one that reopens; commits
// keep the SST count bounded and leave no unreferenced object behind.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Optional;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAreArray;

using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 3;

// Epochs 1..4: a changes every epoch, b is deleted at 3, c written at 4.
void CommitHistory(StateStore& store) {
  SharedStoreFixture::CommitRows(store, kTable, 1, {{"a", "a1"}, {"b", "b1"}});
  SharedStoreFixture::CommitRows(store, kTable, 2, {{"a", "a2"}});
  SharedStoreFixture::CommitRows(store, kTable, 3,
                                 {{"a", "a3"}, {"b", std::nullopt}});
  SharedStoreFixture::CommitRows(store, kTable, 4, {{"a", "a4"}, {"c", "c4"}});
}

TEST(SharedStateStoreCompactionTest, PinnedReaderKeepsItsVersion) {
  const std::string name = SharedStoreFixture::UniqueName("pinned");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 0;  // Only by hand.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  CommitHistory(*store);
  const std::vector<std::string> inputs = store->SstObjects();
  ASSERT_THAT(inputs, SizeIs(4));

  // A reader at epoch 2 pins version 4 and epoch 2.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto pinned, store->NewIterator(kTable, 0, PkRange::All(), Epoch(2)));
  BACKFILL_ASSERT_OK(store->Compact());
  EXPECT_THAT(store->SstObjects(), SizeIs(1));
  EXPECT_EQ(store->VersionId(), 5u);
  // Its inputs stay while the reader lives; the reader sees epoch 2.
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats kept, store->Vacuum());
  EXPECT_EQ(kept.deleted, 0u);
  EXPECT_EQ(kept.kept_referenced, 5u);
  EXPECT_EQ(SharedStoreFixture::Drain(*pinned),
            (Rows{{"a", "a2"}, {"b", "b1"}}));
  pinned.reset();
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats vacuumed, store->Vacuum());
  EXPECT_EQ(vacuumed.deleted, 4u);
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              UnorderedElementsAreArray(store->SstObjects()));

  // The compaction kept what reads at 2 (the pin) and later see.
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 2),
            (Rows{{"a", "a2"}, {"b", "b1"}}));
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 3), (Rows{{"a", "a3"}}));
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 4),
            (Rows{{"a", "a4"}, {"c", "c4"}}));
  EXPECT_THAT(store->NewIterator(kTable, 0, PkRange::All(), Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));

  // A new process loads the compacted version and its horizon.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened,
                                SharedStateStore::Open(reopen_options));
  EXPECT_EQ(reopened->VersionId(), 5u);
  EXPECT_EQ(reopened->SstObjects(), store->SstObjects());
  EXPECT_EQ(SharedStoreFixture::Scan(*reopened, kTable, 2),
            (Rows{{"a", "a2"}, {"b", "b1"}}));
  EXPECT_EQ(SharedStoreFixture::Scan(*reopened, kTable, 4),
            (Rows{{"a", "a4"}, {"c", "c4"}}));
  EXPECT_THAT(reopened->Get(TableKey{kTable, 0, "a"}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// A persisted epoch pin (StateStore::PinEpoch) holds like a live reader's,
// in this process and in one that reopens the store, until its release is
// checkpointed.
TEST(SharedStateStoreCompactionTest, EpochPinsHoldAcrossCompactionsAndReopens) {
  const std::string name = SharedStoreFixture::UniqueName("epoch_pin");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 0;  // Only by hand.
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    SharedStoreFixture::CommitRows(*store, kTable, 1, {{"a", "a1"}});
    BACKFILL_ASSERT_OK(store->PinEpoch("snapshot", Epoch(1)));
    SharedStoreFixture::CommitRows(*store, kTable, 2, {{"a", "a2"}});
    BACKFILL_ASSERT_OK(store->Compact());
    EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 1), (Rows{{"a", "a1"}}));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  reopen_options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                SharedStateStore::Open(reopen_options));
  EXPECT_THAT(store->EpochPins(),
              ElementsAre(::testing::Pair("snapshot", Epoch(1))));
  SharedStoreFixture::CommitRows(*store, kTable, 3, {{"a", "a3"}});
  BACKFILL_ASSERT_OK(store->Compact());
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 1), (Rows{{"a", "a1"}}));
  BACKFILL_ASSERT_OK(store->ReleaseEpochPin("snapshot", Epoch(4)));
  SharedStoreFixture::CommitRows(*store, kTable, 4, {{"a", "a4"}});
  EXPECT_THAT(store->EpochPins(), ::testing::IsEmpty());
  BACKFILL_ASSERT_OK(store->Compact());
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->PinEpoch("snapshot", Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(SharedStateStoreCompactionTest, FullCompactionDropsTombstones) {
  const std::string name = SharedStoreFixture::UniqueName("tombstones");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  SharedStoreFixture::CommitRows(*store, kTable, 1, {{"a", "a1"}});
  SharedStoreFixture::CommitRows(*store, kTable, 2, {{"a", std::nullopt}});
  BACKFILL_ASSERT_OK(store->Compact());
  // Nothing survives: the version lists no SST at all.
  EXPECT_THAT(store->SstObjects(), SizeIs(0));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(2)),
              IsOkAndHolds(std::nullopt));
  SharedStoreFixture::CommitRows(*store, kTable, 3, {{"a", "a3"}});
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("a3"))));
}

TEST(SharedStateStoreCompactionTest, CommitsKeepTheSstCountBounded) {
  const std::string name = SharedStoreFixture::UniqueName("bounded");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 3;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  std::vector<std::string> all_inputs;
  for (uint64_t epoch = 1; epoch <= 20; ++epoch) {
    SharedStoreFixture::CommitRows(
        *store, kTable, epoch,
        {{absl::StrCat("k", epoch % 7), absl::StrCat("v", epoch)}});
    BACKFILL_EXPECT_OK(store->WaitForMaintenance());
    EXPECT_LE(store->SstObjects().size(), 3u) << "after epoch " << epoch;
  }
  // Each key holds its latest value; every object listed is referenced
  // (the compactions vacuumed their inputs).
  for (uint64_t k = 0; k < 7; ++k) {
    const uint64_t last = 20 - (20 - k) % 7;
    EXPECT_THAT(
        store->Get(TableKey{kTable, 0, absl::StrCat("k", k)}, Epoch(20)),
        IsOkAndHolds(Optional(absl::StrCat("v", last))))
        << k;
  }
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              UnorderedElementsAreArray(store->SstObjects()));
}

// A checkpoint is published (its epoch committed, waiters woken) before the
// compaction it makes due runs (on the maintenance thread): no reader waits
// for a merge, and the GC horizon never passes the epoch readers are told is
// committed.
TEST(SharedStateStoreCompactionTest, CompactionRunsAfterTheCheckpointIsOut) {
  const std::string name = SharedStoreFixture::UniqueName("after");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 2;
  // Each upload and the store's committed epoch when it happened.
  std::vector<std::pair<std::string, Epoch>> uploads;
  SharedStateStore* opened = nullptr;
  options.after_upload_for_test = [&](absl::string_view object_key) {
    uploads.emplace_back(std::string(object_key),
                         opened->CommittedEpoch(kTable));
    return absl::OkStatus();
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  opened = store.get();
  for (uint64_t epoch = 1; epoch <= 3; ++epoch) {
    SharedStoreFixture::CommitRows(*store, kTable, epoch,
                                   {{"a", absl::StrCat("a", epoch)}});
    BACKFILL_EXPECT_OK(store->WaitForMaintenance());
  }
  // Three checkpoints' SSTs, each uploaded before its commit, then the merge
  // of all three (epoch 3 left more than two), once epoch 3 was out.
  ASSERT_THAT(uploads, SizeIs(4));
  EXPECT_EQ(uploads[0].second, Epoch(0));
  EXPECT_EQ(uploads[1].second, Epoch(1));
  EXPECT_EQ(uploads[2].second, Epoch(2));
  EXPECT_EQ(uploads[3].second, Epoch(3));
  EXPECT_THAT(store->SstObjects(), ElementsAre(uploads[3].first));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "a"}, Epoch(3)),
              IsOkAndHolds(Optional(std::string("a3"))));
}

}  // namespace
}  // namespace backfill
