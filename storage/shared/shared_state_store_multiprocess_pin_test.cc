// Epoch pins of another process (StateStore::PinEpoch in a process that is
// not the committer) against the committer's compactions, with two store
// objects on one etcd prefix standing for two processes, over a real 3-member
// etcd cluster and a local-directory object store: once a process's sync has
// committed its pin, the committer's compactions (by hand, in the
// background, and one whose merge a checkpoint committing a pin overtook)
// keep what reads at the pinned epoch see, in that process and in a store
// opened afresh; once the release is committed, a compaction collects them
// and reads at that epoch are refused. A pin row that is not an epoch stops
// the compaction with DataLoss naming its owner. And a process loading a
// version whose objects the committer's vacuum deleted meanwhile (after a
// newer compaction) loads the newer version.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/internal/committed_layer.h"
#include "storage/internal/mem_table.h"
#include "storage/shared/object_store.h"
#include "storage/shared/shared_committed_layer.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;
using ::testing::SizeIs;
using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 5;

// An ObjectStore that forwards to another and runs `before_get` (once)
// before the first Get of an SST object.
class ObjectStoreWithGetHook final : public ObjectStore {
 public:
  ObjectStoreWithGetHook(std::shared_ptr<ObjectStore> base,
                         std::function<void()> before_get)
      : base_(std::move(base)), before_get_(std::move(before_get)) {}

  absl::StatusOr<std::string> Get(absl::string_view key) override {
    if (before_get_ && absl::StrContains(key, "sst/")) {
      std::exchange(before_get_, nullptr)();
    }
    return base_->Get(key);
  }
  absl::Status Put(absl::string_view key, absl::string_view data) override {
    return base_->Put(key, data);
  }
  absl::Status PutIfAbsent(absl::string_view key,
                           absl::string_view data) override {
    return base_->PutIfAbsent(key, data);
  }
  absl::StatusOr<std::string> GetRange(absl::string_view key, uint64_t offset,
                                       uint64_t length) override {
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
  const std::shared_ptr<ObjectStore> base_;
  std::function<void()> before_get_;  // Called from one thread (the test's).
};

// Two store objects of one store: the committer (A) and a worker (B).
struct Processes {
  std::string name;
  std::unique_ptr<SharedStateStore> a;
  std::unique_ptr<SharedStateStore> b;
};

// A's options get `compaction_trigger` and `after_upload` (called with
// every object A uploads).
Processes OpenProcesses(
    const std::string& base, size_t compaction_trigger,
    std::function<void(absl::string_view)> after_upload = nullptr) {
  Processes processes;
  processes.name = SharedStoreFixture::UniqueName(base);
  auto a_options = SharedStoreFixture::Options(processes.name);
  auto b_options = SharedStoreFixture::Options(processes.name);
  EXPECT_TRUE(a_options.ok() && b_options.ok());
  if (!a_options.ok() || !b_options.ok()) return processes;
  a_options->compaction_trigger_ssts = compaction_trigger;
  if (after_upload) {
    a_options->after_upload_for_test = [after_upload](absl::string_view key) {
      after_upload(key);
      return absl::OkStatus();
    };
  }
  b_options->compaction_trigger_ssts = 0;
  auto a = SharedStateStore::Open(*a_options);
  auto b = SharedStateStore::Open(*b_options);
  EXPECT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(b.ok()) << b.status();
  if (a.ok()) processes.a = *std::move(a);
  if (b.ok()) processes.b = *std::move(b);
  return processes;
}

// A store object opened afresh (a new process, its own cache) that never
// compacts.
std::unique_ptr<SharedStateStore> OpenFresh(const Processes& p) {
  auto options = SharedStoreFixture::Options(p.name);
  EXPECT_TRUE(options.ok()) << options.status();
  if (!options.ok()) return nullptr;
  options->compaction_trigger_ssts = 0;
  auto store = SharedStateStore::Open(*options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

// One checkpoint of `epoch` over both processes: `writer` writes `rows`
// into vnode 0 of kTable and seals the epoch; both sync, A commits both
// results and B applies the version.
void Checkpoint(Processes& p, SharedStateStore& writer, uint64_t epoch,
                const Rows& rows) {
  auto local = writer.NewLocalStateStore(kTable, {});
  ASSERT_TRUE(local.ok()) << local.status();
  BACKFILL_ASSERT_OK((*local)->Init(EpochPair::ForInitial(Epoch(epoch))));
  for (const auto& [pk, value] : rows) {
    BACKFILL_ASSERT_OK((*local)->Insert(0, pk, value));
  }
  BACKFILL_ASSERT_OK((*local)->Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult a_sync,
                                p.a->SyncCheckpoint(Epoch(epoch)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult b_sync,
                                p.b->SyncCheckpoint(Epoch(epoch)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SharedStateStore::CommittedVersion version,
      p.a->CommitCheckpoint({a_sync, b_sync}, Epoch(epoch)));
  BACKFILL_ASSERT_OK(p.b->ApplyCheckpoint(version));
}

// What a read at epoch 1 of the tests below sees.
const Rows kAtEpoch1 = {{"k", "v1"}};

// B's pin of epoch 1 is committed with B's sync of epoch 2; A compacts by
// hand at epoch 3 (its own process holds no pin) and must keep epoch 1.
TEST(SharedStateStoreMultiprocessPinTest,
     AnotherProcesssPersistedPinHoldsThroughCompactionsByHand) {
  Processes p = OpenProcesses("by-hand", /*compaction_trigger=*/0);
  ASSERT_TRUE(p.a && p.b);
  Checkpoint(p, *p.a, 1, {{"k", "v1"}});
  BACKFILL_ASSERT_OK(p.b->PinEpoch("b's snapshot", Epoch(1)));
  Checkpoint(p, *p.a, 2, {{"k", "v2"}});
  Checkpoint(p, *p.a, 3, {{"k", "v3"}});
  EXPECT_THAT(p.a->EpochPins(), IsEmpty());  // Not A's pin.

  BACKFILL_ASSERT_OK(p.a->Compact());
  EXPECT_THAT(p.a->SstObjects(), SizeIs(1));
  BACKFILL_ASSERT_OK(p.a->Vacuum().status());
  // B reads epoch 1 through the compacted version (applied with epoch 4).
  Checkpoint(p, *p.b, 4, {{"other", "v4"}});
  EXPECT_EQ(p.b->VersionId(), p.a->VersionId());
  EXPECT_EQ(SharedStoreFixture::Scan(*p.b, kTable, 1), kAtEpoch1);
  EXPECT_THAT(p.b->Get(TableKey{kTable, 0, "k"}, Epoch(1)),
              IsOkAndHolds(Optional(std::string("v1"))));
  EXPECT_EQ(SharedStoreFixture::Scan(*p.a, kTable, 3), (Rows{{"k", "v3"}}));
  {
    // So does a process that opens the store now (it fetches only the
    // compacted version's objects).
    std::unique_ptr<SharedStateStore> fresh = OpenFresh(p);
    ASSERT_NE(fresh, nullptr);
    EXPECT_THAT(fresh->EpochPins(),
                ElementsAre(Pair("b's snapshot", Epoch(1))));
    EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 1), kAtEpoch1);
    EXPECT_THAT(fresh->Get(TableKey{kTable, 0, "k"}, Epoch(2)),
                IsOkAndHolds(Optional(std::string("v2"))));
  }

  // The release commits with B's sync of epoch 5; the next compaction
  // collects epoch 1, in every process.
  BACKFILL_ASSERT_OK(p.b->ReleaseEpochPin("b's snapshot", Epoch(5)));
  Checkpoint(p, *p.a, 5, {{"k", "v5"}});
  EXPECT_THAT(p.b->EpochPins(), IsEmpty());
  BACKFILL_ASSERT_OK(p.a->Compact());
  Checkpoint(p, *p.a, 6, {{"k", "v6"}});
  EXPECT_EQ(p.b->VersionId(), p.a->VersionId());
  EXPECT_THAT(p.b->Get(TableKey{kTable, 0, "k"}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(SharedStoreFixture::Scan(*p.b, kTable, 6),
            (Rows{{"k", "v6"}, {"other", "v4"}}));
  std::unique_ptr<SharedStateStore> fresh = OpenFresh(p);
  ASSERT_NE(fresh, nullptr);
  EXPECT_THAT(fresh->Get(TableKey{kTable, 0, "k"}, Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(fresh->Get(TableKey{kTable, 0, "k"}, Epoch(5)),
              IsOkAndHolds(Optional(std::string("v5"))));
}

// The same with the compactions A's maintenance thread runs after its
// commits (trigger: more than 2 SSTs).
TEST(SharedStateStoreMultiprocessPinTest,
     AnotherProcesssPersistedPinHoldsThroughBackgroundCompactions) {
  Processes p = OpenProcesses("background", /*compaction_trigger=*/2);
  ASSERT_TRUE(p.a && p.b);
  Checkpoint(p, *p.a, 1, {{"k", "v1"}});
  BACKFILL_ASSERT_OK(p.b->PinEpoch("b's snapshot", Epoch(1)));
  for (uint64_t epoch = 2; epoch <= 8; ++epoch) {
    Checkpoint(p, *p.a, epoch, {{"k", absl::StrCat("v", epoch)}});
    BACKFILL_ASSERT_OK(p.a->WaitForMaintenance());
  }
  EXPECT_THAT(p.a->SstObjects().size(), ::testing::Le(3u));  // Compacted.
  EXPECT_EQ(SharedStoreFixture::Scan(*p.b, kTable, 1), kAtEpoch1);
  std::unique_ptr<SharedStateStore> fresh = OpenFresh(p);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 1), kAtEpoch1);
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 8), (Rows{{"k", "v8"}}));
}

// A compaction reads its base at epoch 3 (no pin persisted: safe epoch 3);
// while it uploads its output, B pins epoch 1 and a checkpoint commits that
// pin. The compaction must not commit a GC horizon above 1 (Compact tries
// again on the newer version).
TEST(SharedStateStoreMultiprocessPinTest,
     APinCommittedWhileACompactionMergesIsHonoured) {
  std::function<void()> during_upload;
  Processes p = OpenProcesses("during-merge", /*compaction_trigger=*/0,
                              [&](absl::string_view) {
                                if (during_upload)
                                  std::exchange(during_upload, nullptr)();
                              });
  ASSERT_TRUE(p.a && p.b);
  Checkpoint(p, *p.a, 1, {{"k", "v1"}});
  Checkpoint(p, *p.a, 2, {{"k", "v2"}});
  Checkpoint(p, *p.a, 3, {{"k", "v3"}});
  bool pinned = false;
  during_upload = [&] {
    // B has not seen a compaction: its pin of epoch 1 is accepted.
    BACKFILL_EXPECT_OK(p.b->PinEpoch("late snapshot", Epoch(1)));
    Checkpoint(p, *p.b, 4, {{"other", "v4"}});
    pinned = true;
  };
  BACKFILL_ASSERT_OK(p.a->Compact());
  ASSERT_TRUE(pinned);
  std::unique_ptr<SharedStateStore> fresh = OpenFresh(p);
  ASSERT_NE(fresh, nullptr);
  EXPECT_THAT(fresh->EpochPins(), ElementsAre(Pair("late snapshot", Epoch(1))));
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 1), kAtEpoch1);
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 4),
            (Rows{{"k", "v3"}, {"other", "v4"}}));
  // The compaction committed (merging the version it tried again on).
  EXPECT_THAT(p.a->SstObjects(), SizeIs(1));
}

// A process opens the store while the committer compacts and vacuums: the
// version it read from etcd lists objects that are gone by the time it
// fetches them, so it reads the newer version (the compaction's) instead.
TEST(SharedStateStoreMultiprocessPinTest,
     ALoadThatMeetsAVacuumedObjectReadsTheNewerVersion) {
  Processes p = OpenProcesses("vacuumed-load", /*compaction_trigger=*/0);
  ASSERT_TRUE(p.a && p.b);
  Checkpoint(p, *p.a, 1, {{"k", "v1"}});
  Checkpoint(p, *p.a, 2, {{"k", "v2"}});
  Checkpoint(p, *p.a, 3, {{"k", "v3"}});
  const uint64_t before = p.a->VersionId();
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(p.name));
  options.compaction_trigger_ssts = 0;
  bool compacted = false;
  options.object_store =
      std::make_shared<ObjectStoreWithGetHook>(options.object_store, [&] {
        BACKFILL_EXPECT_OK(p.a->Compact());
        auto vacuumed = p.a->Vacuum();
        ASSERT_TRUE(vacuumed.ok()) << vacuumed.status();
        EXPECT_EQ(vacuumed->deleted, 3u);  // The three inputs.
        compacted = true;
      });
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<SharedStateStore> fresh,
                                SharedStateStore::Open(options));
  ASSERT_TRUE(compacted);
  EXPECT_EQ(fresh->VersionId(), before + 1);  // The compaction's.
  EXPECT_EQ(fresh->SstObjects(), p.a->SstObjects());
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 3), (Rows{{"k", "v3"}}));
}

// A persisted pin row that is not an 8-byte epoch (written here straight
// through the committed layer, as a damaged or foreign writer would) fails
// the compaction, which commits nothing.
TEST(SharedStateStoreMultiprocessPinTest,
     AMalformedPinRowIsDataLossNamingItsOwner) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      SharedStateStoreOptions options,
      SharedStoreFixture::Options(SharedStoreFixture::UniqueName("malformed")));
  options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<shared_internal::SharedCommittedLayer> layer,
      shared_internal::SharedCommittedLayer::Open(options));
  auto pins = std::make_shared<storage_internal::MemTable>();
  std::string key;
  storage_internal::SetMemTableKey(0, "bad owner", &key);
  pins->emplace(key, std::string("abc"));
  auto rows = std::make_shared<storage_internal::MemTable>();
  storage_internal::SetMemTableKey(0, "k", &key);
  rows->emplace(key, std::string("v2"));
  BACKFILL_ASSERT_OK(layer->Commit(
      {storage_internal::CommitBatch{kEpochPinTableId, Epoch(1), pins}},
      Epoch(1)));
  BACKFILL_ASSERT_OK(layer->Commit(
      {storage_internal::CommitBatch{kTable, Epoch(2), rows}}, Epoch(2)));
  const uint64_t version = layer->current()->id;
  EXPECT_THAT(layer->Compact(),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::AllOf(HasSubstr("'bad owner'"),
                                        HasSubstr("not an 8-byte epoch"))));
  EXPECT_EQ(layer->current()->id, version);
  EXPECT_THAT(layer->current()->ssts, SizeIs(2));
}

}  // namespace
}  // namespace backfill
