// Background compaction of the shared store over a real etcd cluster: a
// checkpoint commits while a compaction's upload is held (the compaction is
// then rebased onto it: the new version is the checkpoint's SSTs plus the
// compaction's output in place of exactly its inputs; a reader that pinned
// an epoch below its safe epoch meanwhile keeps reading); a compaction whose
// base was committed over by another process is fenced; compactions by hand
// racing checkpoints keep every committed row, in this process and in one
// that reopens the store.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/object_store.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAreArray;

using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 5;
// How long the gate holds an upload at most (then lets it through and
// records it): a compaction that the next checkpoint waits for shows as a
// timeout instead of a hang.
constexpr absl::Duration kGateTimeout = absl::Seconds(10);

// An ObjectStore that forwards to another and holds the n-th PutIfAbsent of
// an SST object (counting from 1) until Release() or kGateTimeout.
class GatedObjectStore final : public ObjectStore {
 public:
  GatedObjectStore(std::shared_ptr<ObjectStore> base, int held_upload)
      : base_(std::move(base)), held_upload_(held_upload) {}

  // Waits up to `timeout` until the held upload is waiting; true if it is.
  bool WaitUntilHeld(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + timeout;
    while (!held_ && absl::Now() < deadline) {
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    return held_;
  }
  void Release() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.SignalAll();
  }
  // The held upload's key ("" if none yet), and whether it was let through
  // by the timeout rather than by Release().
  std::string held_key() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return held_key_;
  }
  bool timed_out() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return timed_out_;
  }

  absl::Status PutIfAbsent(absl::string_view key,
                           absl::string_view data) override
      ABSL_LOCKS_EXCLUDED(mu_) {
    if (absl::StrContains(key, "sst/")) {
      MutexLock lock(&mu_);
      if (++uploads_ == held_upload_) {
        held_ = true;
        held_key_ = std::string(key);
        cv_.SignalAll();
        const absl::Time deadline = absl::Now() + kGateTimeout;
        while (!released_ && absl::Now() < deadline) {
          cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
        }
        timed_out_ = !released_;
        held_ = false;
      }
    }
    return base_->PutIfAbsent(key, data);
  }
  absl::Status Put(absl::string_view key, absl::string_view data) override {
    return base_->Put(key, data);
  }
  absl::StatusOr<std::string> Get(absl::string_view key) override {
    return base_->Get(key);
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
  const int held_upload_;
  mutable Mutex mu_;
  CondVar cv_;
  int uploads_ ABSL_GUARDED_BY(mu_) = 0;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool timed_out_ ABSL_GUARDED_BY(mu_) = false;
  std::string held_key_ ABSL_GUARDED_BY(mu_);
};

// Options of store `name` whose 4th SST upload is held: with a trigger of 2
// SSTs, the uploads of checkpoints 1-3 come first, then the compaction that
// checkpoint 3 makes due uploads its output.
absl::StatusOr<SharedStateStoreOptions> GatedOptions(
    const std::string& name, std::shared_ptr<GatedObjectStore>* gate) {
  absl::StatusOr<SharedStateStoreOptions> options =
      SharedStoreFixture::Options(name);
  if (!options.ok()) return options.status();
  *gate = std::make_shared<GatedObjectStore>(options->object_store, 4);
  options->object_store = *gate;
  options->compaction_trigger_ssts = 2;
  options->version_checkpoint_deltas = 0;
  return options;
}

// Epochs 1..3 (b deleted at 3), after which a compaction of all three SSTs
// is due.
void CommitThreeEpochs(StateStore& store) {
  SharedStoreFixture::CommitRows(store, kTable, 1, {{"a", "a1"}, {"b", "b1"}});
  SharedStoreFixture::CommitRows(store, kTable, 2, {{"a", "a2"}, {"c", "c2"}});
  SharedStoreFixture::CommitRows(store, kTable, 3,
                                 {{"a", "a3"}, {"b", std::nullopt}});
}

TEST(SharedStateStoreBackgroundCompactionTest,
     ACheckpointCommitsWhileACompactionIsHeld) {
  const std::string name = SharedStoreFixture::UniqueName("held");
  std::shared_ptr<GatedObjectStore> gate;
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                GatedOptions(name, &gate));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  CommitThreeEpochs(*store);
  const std::vector<std::string> inputs = store->SstObjects();
  ASSERT_THAT(inputs, SizeIs(3));
  // The compaction's upload is held in the background...
  ASSERT_TRUE(gate->WaitUntilHeld(absl::Seconds(20)))
      << "no compaction upload was held in the background";
  // ... and checkpoint 4 commits meanwhile, without waiting for it.
  SharedStoreFixture::CommitRows(*store, kTable, 4, {{"d", "d4"}});
  EXPECT_FALSE(gate->timed_out())
      << "the checkpoint waited for the compaction's upload";
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(4));
  std::vector<std::string> with_fourth = store->SstObjects();
  ASSERT_THAT(with_fourth, SizeIs(4));
  EXPECT_EQ(
      std::vector<std::string>(with_fourth.begin(), with_fourth.begin() + 3),
      inputs);
  const std::string fourth = with_fourth[3];
  const Rows at_four{{"a", "a3"}, {"c", "c2"}, {"d", "d4"}};
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 4), at_four);
  // A historical reader at epoch 2 pins it after the compaction took its
  // safe epoch (3).
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto historical, store->NewIterator(kTable, 0, PkRange::All(), Epoch(2)));

  // Released, the compaction commits on top of checkpoint 4: its output
  // replaces exactly its three inputs, before the newer SST.
  gate->Release();
  BACKFILL_ASSERT_OK(store->WaitForMaintenance());
  EXPECT_FALSE(gate->timed_out());
  EXPECT_THAT(store->SstObjects(), ElementsAre(gate->held_key(), fourth));
  EXPECT_EQ(store->VersionId(), 5u);
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 4), at_four);
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 3),
            (Rows{{"a", "a3"}, {"c", "c2"}}));
  // The historical reader still reads epoch 2, and so do point reads while
  // its pin holds the version before the compaction; after it, they are
  // below the GC horizon.
  EXPECT_EQ(SharedStoreFixture::Drain(*historical),
            (Rows{{"a", "a2"}, {"b", "b1"}, {"c", "c2"}}));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "b"}, Epoch(2)),
              IsOkAndHolds(Optional(std::string("b1"))));
  // So do scans opened now (their pin takes that version, not the
  // compacted one whose horizon is above 2).
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 2),
            (Rows{{"a", "a2"}, {"b", "b1"}, {"c", "c2"}}));
  historical.reset();
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "b"}, Epoch(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // Its inputs go once the reader is gone; the objects are exactly the
  // version's.
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats vacuumed, store->Vacuum());
  EXPECT_EQ(vacuumed.deleted, 3u);
  EXPECT_THAT(SharedStoreFixture::ListKeys(*options.object_store, "store/sst/"),
              UnorderedElementsAreArray(store->SstObjects()));

  // A new process reads the same version from etcd, and commits on top.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened,
                                SharedStateStore::Open(reopen_options));
  EXPECT_EQ(reopened->VersionId(), 5u);
  EXPECT_EQ(reopened->SstObjects(), store->SstObjects());
  EXPECT_EQ(SharedStoreFixture::Scan(*reopened, kTable, 4), at_four);
  SharedStoreFixture::CommitRows(*reopened, kTable, 5, {{"a", "a5"}});
  EXPECT_THAT(reopened->Get(TableKey{kTable, 0, "a"}, Epoch(5)),
              IsOkAndHolds(Optional(std::string("a5"))));
}

// Another process opens the store and commits while this one's compaction
// is held: the compaction's commit is fenced, and no version lists its
// output.
TEST(SharedStateStoreBackgroundCompactionTest,
     ACompactionIsFencedAfterAnotherCommitterTookOver) {
  const std::string name = SharedStoreFixture::UniqueName("fenced");
  std::shared_ptr<GatedObjectStore> gate;
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                GatedOptions(name, &gate));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
  CommitThreeEpochs(*store);
  ASSERT_TRUE(gate->WaitUntilHeld(absl::Seconds(20)));

  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions other_options,
                                SharedStoreFixture::Options(name));
  other_options.compaction_trigger_ssts = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto other,
                                SharedStateStore::Open(other_options));
  SharedStoreFixture::CommitRows(*other, kTable, 4, {{"d", "d4"}});

  gate->Release();
  EXPECT_THAT(store->WaitForMaintenance(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_FALSE(gate->timed_out());
  // The other process's version (its four checkpoint SSTs) is current; the
  // compaction's output is in none of it.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions check_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto check,
                                SharedStateStore::Open(check_options));
  EXPECT_EQ(check->SstObjects(), other->SstObjects());
  EXPECT_THAT(check->SstObjects(), SizeIs(4));
  EXPECT_THAT(check->SstObjects(), Not(::testing::Contains(gate->held_key())));
  EXPECT_EQ(SharedStoreFixture::Scan(*check, kTable, 4),
            (Rows{{"a", "a3"}, {"c", "c2"}, {"d", "d4"}}));
  // The fenced process cannot commit either.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(5))));
  BACKFILL_ASSERT_OK(local->Insert(0, "e", "e5"));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(6), Epoch(5)}));
  EXPECT_THAT(store->Checkpoint(Epoch(5)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// Compactions by hand in a loop on one thread, checkpoints (each making the
// background compaction due) on another: after every checkpoint its reads
// match a model of every committed row, and so do a new process's.
TEST(SharedStateStoreBackgroundCompactionTest,
     RacingCompactionsKeepEveryCommittedRow) {
  const uint32_t seed = absl::Uniform<uint32_t>(absl::BitGen());
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 random(seed);
  const std::string name = SharedStoreFixture::UniqueName("racing");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 2;
  options.version_checkpoint_deltas = 4;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));

  std::atomic<bool> stop = false;
  absl::Status compaction_error;  // Written by the thread, read after join.
  int compactions = 0;
  std::thread compactor([&] {
    while (!stop) {
      absl::Status status = store->Compact();
      if (!status.ok()) {
        compaction_error = status;
        return;
      }
      ++compactions;
    }
  });

  std::map<std::string, std::string> model;
  constexpr uint64_t kEpochs = 30;
  for (uint64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    SharedStoreFixture::RowChanges changes;
    for (int i = 0; i < 4; ++i) {
      const std::string pk = absl::StrCat("k", random() % 16);
      if (random() % 4 == 0) {
        changes.emplace_back(pk, std::nullopt);
        model.erase(pk);
      } else {
        const std::string value = absl::StrCat("v", epoch, "-", i);
        changes.emplace_back(pk, value);
        model[pk] = value;
      }
    }
    SharedStoreFixture::CommitRows(*store, kTable, epoch, changes);
    ASSERT_EQ(SharedStoreFixture::Scan(*store, kTable, epoch),
              Rows(model.begin(), model.end()))
        << "at epoch " << epoch;
  }
  stop = true;
  compactor.join();
  BACKFILL_ASSERT_OK(compaction_error);
  BACKFILL_ASSERT_OK(store->WaitForMaintenance());
  EXPECT_GT(compactions, 0);
  const Rows expected(model.begin(), model.end());
  EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, kEpochs), expected);
  EXPECT_THAT(store->SstObjects(), SizeIs(::testing::Le(3u)));

  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened,
                                SharedStateStore::Open(reopen_options));
  EXPECT_EQ(reopened->VersionId(), store->VersionId());
  EXPECT_EQ(reopened->SstObjects(), store->SstObjects());
  EXPECT_EQ(SharedStoreFixture::Scan(*reopened, kTable, kEpochs), expected);
}

// Destroying the store while maintenance is due or running joins the
// compactor: no thread outlives the store, and what it committed stays
// readable.
TEST(SharedStateStoreBackgroundCompactionTest, DestroyingTheStoreJoins) {
  const std::string name = SharedStoreFixture::UniqueName("destroy");
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions options,
                                SharedStoreFixture::Options(name));
  options.compaction_trigger_ssts = 1;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, SharedStateStore::Open(options));
    for (uint64_t epoch = 1; epoch <= 5; ++epoch) {
      SharedStoreFixture::CommitRows(*store, kTable, epoch,
                                     {{absl::StrCat("k", epoch), "v"}});
    }
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStoreOptions reopen_options,
                                SharedStoreFixture::Options(name));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened,
                                SharedStateStore::Open(reopen_options));
  EXPECT_THAT(SharedStoreFixture::Scan(*reopened, kTable, 5), SizeIs(5));
  EXPECT_THAT(reopened->SstObjects(), Not(IsEmpty()));
}

}  // namespace
}  // namespace backfill
