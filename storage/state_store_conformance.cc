#include "storage/state_store_conformance.h"

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {

std::string StateStoreFactoryName(
    const ::testing::TestParamInfo<StateStoreFactory>& info) {
  return info.param.name;
}

void StateStoreConformanceTest::SetUp() {
  BACKFILL_ASSERT_OK_AND_ASSIGN(store_, GetParam().open());
}

void StateStoreConformanceTest::TearDown() { store_.reset(); }

namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;

using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr TableId kTable = 7;
constexpr TableId kOtherTable = 8;

Rows Drain(StateStoreIterator& it) {
  Rows rows;
  for (; it.Valid(); it.Next()) {
    rows.emplace_back(std::string(it.key()), std::string(it.value()));
  }
  EXPECT_THAT(it.status(), IsOk());
  return rows;
}

Rows LocalScan(LocalStateStore& local, VirtualNode vnode,
               const PkRange& range = PkRange::All()) {
  auto it = local.NewIterator(vnode, range);
  EXPECT_THAT(it, IsOk());
  if (!it.ok()) return {};
  (*it)->SeekToFirst();
  return Drain(**it);
}

Rows GlobalScan(StateStore& store, TableId table, VirtualNode vnode,
                Epoch epoch, const PkRange& range = PkRange::All()) {
  auto it = store.NewIterator(table, vnode, range, epoch);
  EXPECT_THAT(it, IsOk());
  if (!it.ok()) return {};
  (*it)->SeekToFirst();
  return Drain(**it);
}

std::optional<std::string> GlobalGet(StateStore& store, TableId table,
                                     VirtualNode vnode, absl::string_view pk,
                                     Epoch epoch) {
  auto value = store.Get(TableKey{table, vnode, std::string(pk)}, epoch);
  EXPECT_THAT(value, IsOk());
  return value.ok() ? *value : std::nullopt;
}

std::unique_ptr<LocalStateStore> NewLocal(StateStore& store, TableId table,
                                          Epoch first,
                                          bool replicated = false) {
  auto local = store.NewLocalStateStore(table, LocalOptions{replicated});
  EXPECT_THAT(local, IsOk());
  if (!local.ok()) return nullptr;
  EXPECT_THAT((*local)->Init(EpochPair::ForInitial(first)), IsOk());
  return *std::move(local);
}

// Seals the current epoch e and moves to e + 1.
absl::Status SealNext(LocalStateStore& local) {
  const Epoch current = local.epoch();
  return local.Seal(EpochPair{Epoch(current.value() + 1), current});
}

TEST_P(StateStoreConformanceTest, EmptyStoreHasNothing) {
  EXPECT_EQ(store_->CommittedEpoch(kTable), Epoch(0));
  EXPECT_TRUE(store_->IsCommitted(kTable, Epoch(0)));
  EXPECT_FALSE(store_->IsCommitted(kTable, Epoch(1)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "a", Epoch::Max()), std::nullopt);
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch::Max()), IsEmpty());
  auto local = NewLocal(*store_, kTable, Epoch(1));
  EXPECT_THAT(local->Get(0, "a"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(LocalScan(*local, 0), IsEmpty());
}

TEST_P(StateStoreConformanceTest, LocalReadsItsOwnUnsealedAndSealedWrites) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  EXPECT_EQ(local->epoch(), Epoch(1));
  BACKFILL_ASSERT_OK(local->Insert(3, "b", "vb"));
  BACKFILL_ASSERT_OK(local->Insert(3, "a", "va"));
  EXPECT_THAT(local->Get(3, "a"), IsOkAndHolds(Optional(std::string("va"))));
  EXPECT_THAT(LocalScan(*local, 3),
              ElementsAre(Pair("a", "va"), Pair("b", "vb")));
  BACKFILL_ASSERT_OK(SealNext(*local));
  EXPECT_EQ(local->epoch(), Epoch(2));
  EXPECT_THAT(local->Get(3, "b"), IsOkAndHolds(Optional(std::string("vb"))));
  EXPECT_THAT(LocalScan(*local, 3),
              ElementsAre(Pair("a", "va"), Pair("b", "vb")));
  // Not committed: global reads see nothing.
  EXPECT_EQ(GlobalGet(*store_, kTable, 3, "a", Epoch::Max()), std::nullopt);
  EXPECT_THAT(GlobalScan(*store_, kTable, 3, Epoch::Max()), IsEmpty());
}

TEST_P(StateStoreConformanceTest, CheckpointMakesSealedDataCommitted) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(local->Insert(0, "k", "v1"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_EQ(store_->CommittedEpoch(kTable), Epoch(1));
  EXPECT_EQ(store_->CommittedEpoch(kOtherTable), Epoch(1));
  EXPECT_TRUE(store_->IsCommitted(kTable, Epoch(1)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(1)), "v1");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch::Max()), "v1");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(0)), std::nullopt);
  EXPECT_THAT(local->Get(0, "k"), IsOkAndHolds(Optional(std::string("v1"))));
  // A new instance sees committed data.
  auto other = NewLocal(*store_, kTable, Epoch(2));
  EXPECT_THAT(other->Get(0, "k"), IsOkAndHolds(Optional(std::string("v1"))));
}

TEST_P(StateStoreConformanceTest, ReadsAtAnEpochSeeTheNewestVersionAtOrBefore) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  for (int epoch = 1; epoch <= 4; ++epoch) {
    if (epoch != 3) {
      BACKFILL_ASSERT_OK(local->Insert(0, "k", absl::StrCat("v", epoch)));
    }
    BACKFILL_ASSERT_OK(SealNext(*local));
    BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(epoch)));
  }
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(0)), std::nullopt);
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(1)), "v1");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(2)), "v2");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(3)), "v2");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(4)), "v4");
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(3)),
              ElementsAre(Pair("k", "v2")));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(0)), IsEmpty());
}

TEST_P(StateStoreConformanceTest, TombstonesHideOlderVersions) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "1"));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "1"));
  BACKFILL_ASSERT_OK(local->Insert(0, "c", "1"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK(local->Delete(0, "b"));
  BACKFILL_ASSERT_OK(
      local->Delete(0, "zz"));  // Deleting an absent key is fine.
  // Unsealed tombstone hides committed data locally.
  EXPECT_THAT(local->Get(0, "b"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(LocalScan(*local, 0),
              ElementsAre(Pair("a", "1"), Pair("c", "1")));
  BACKFILL_ASSERT_OK(SealNext(*local));
  // Sealed tombstone too.
  EXPECT_THAT(LocalScan(*local, 0),
              ElementsAre(Pair("a", "1"), Pair("c", "1")));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "b", Epoch::Max()), "1");
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "b", Epoch(2)), std::nullopt);
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "b", Epoch(1)), "1");
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(2)),
              ElementsAre(Pair("a", "1"), Pair("c", "1")));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(1)),
              ElementsAre(Pair("a", "1"), Pair("b", "1"), Pair("c", "1")));
  // Re-insert after delete.
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "2"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(3)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "b", Epoch(3)), "2");
}

TEST_P(StateStoreConformanceTest,
       NewestVersionWinsAcrossCommittedSealedAndBuffer) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  for (const char* pk : {"a", "b", "c", "d", "e"}) {
    BACKFILL_ASSERT_OK(local->Insert(0, pk, "committed"));
  }
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "sealed2"));
  BACKFILL_ASSERT_OK(local->Delete(0, "c"));
  BACKFILL_ASSERT_OK(local->Insert(0, "f", "sealed2"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "sealed3"));
  BACKFILL_ASSERT_OK(local->Insert(0, "c", "sealed3"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(local->Insert(0, "d", "buffer"));
  BACKFILL_ASSERT_OK(local->Delete(0, "f"));
  BACKFILL_ASSERT_OK(local->Insert(0, "0", "buffer"));
  EXPECT_THAT(LocalScan(*local, 0),
              ElementsAre(Pair("0", "buffer"), Pair("a", "committed"),
                          Pair("b", "sealed3"), Pair("c", "sealed3"),
                          Pair("d", "buffer"), Pair("e", "committed")));
  EXPECT_THAT(local->Get(0, "f"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(local->Get(0, "b"),
              IsOkAndHolds(Optional(std::string("sealed3"))));
  // The last write of a key in an epoch wins.
  BACKFILL_ASSERT_OK(local->Insert(0, "e", "x"));
  BACKFILL_ASSERT_OK(local->Delete(0, "e"));
  BACKFILL_ASSERT_OK(local->Insert(0, "e", "y"));
  EXPECT_THAT(local->Get(0, "e"), IsOkAndHolds(Optional(std::string("y"))));
  // Checkpoint 2 commits epoch 2 only; epoch 3 stays sealed.
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "b", Epoch::Max()), "sealed2");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "c", Epoch::Max()), std::nullopt);
  EXPECT_THAT(LocalScan(*local, 0),
              ElementsAre(Pair("0", "buffer"), Pair("a", "committed"),
                          Pair("b", "sealed3"), Pair("c", "sealed3"),
                          Pair("d", "buffer"), Pair("e", "y")));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(4)));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(4)),
              ElementsAre(Pair("0", "buffer"), Pair("a", "committed"),
                          Pair("b", "sealed3"), Pair("c", "sealed3"),
                          Pair("d", "buffer"), Pair("e", "y")));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(3)),
              ElementsAre(Pair("a", "committed"), Pair("b", "sealed3"),
                          Pair("c", "sealed3"), Pair("d", "committed"),
                          Pair("e", "committed"), Pair("f", "sealed2")));
}

TEST_P(StateStoreConformanceTest,
       InstancesNeverSeeEachOthersUncommittedWrites) {
  auto first = NewLocal(*store_, kTable, Epoch(1));
  auto second = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(first->Insert(0, "a", "first"));
  BACKFILL_ASSERT_OK(second->Insert(0, "b", "second"));
  EXPECT_THAT(LocalScan(*first, 0), ElementsAre(Pair("a", "first")));
  EXPECT_THAT(LocalScan(*second, 0), ElementsAre(Pair("b", "second")));
  BACKFILL_ASSERT_OK(SealNext(*first));
  BACKFILL_ASSERT_OK(SealNext(*second));
  EXPECT_THAT(second->Get(0, "a"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(first->Get(0, "b"), IsOkAndHolds(Eq(std::nullopt)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_THAT(LocalScan(*first, 0),
              ElementsAre(Pair("a", "first"), Pair("b", "second")));
  EXPECT_THAT(LocalScan(*second, 0),
              ElementsAre(Pair("a", "first"), Pair("b", "second")));
}

// VisitRows visits what Next would, moves past each row it visits, and a
// refused row stops the batch on it: over a local instance's unsealed
// writes and over the committed store, with a row in the next vnode.
TEST_P(StateStoreConformanceTest, VisitRowsIsTheBatchFormOfNext) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  for (const char* pk : {"a", "b", "c", "d", "e"}) {
    BACKFILL_ASSERT_OK(local->Insert(0, pk, std::string("v") + pk));
  }
  BACKFILL_ASSERT_OK(local->Insert(1, "a", "next vnode"));
  auto check = [](StateStoreIterator& it) {
    it.SeekToFirst();
    Rows seen;
    auto record = [&](absl::string_view key, absl::string_view value) {
      seen.emplace_back(std::string(key), std::string(value));
      return true;
    };
    EXPECT_EQ(it.VisitRows(2, record), 2u);
    ASSERT_TRUE(it.Valid());
    EXPECT_EQ(it.key(), "c");
    EXPECT_EQ(it.VisitRows(10,
                           [&](absl::string_view key, absl::string_view value) {
                             return key != "d" && record(key, value);
                           }),
              1u);
    ASSERT_TRUE(it.Valid());
    EXPECT_EQ(it.key(), "d");
    EXPECT_EQ(it.VisitRows(10, record), 2u);
    EXPECT_FALSE(it.Valid());
    EXPECT_EQ(it.VisitRows(10, record), 0u);
    EXPECT_THAT(it.status(), IsOk());
    EXPECT_THAT(seen,
                ElementsAre(Pair("a", "va"), Pair("b", "vb"), Pair("c", "vc"),
                            Pair("d", "vd"), Pair("e", "ve")));
  };
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto it,
                                  local->NewIterator(0, PkRange::All()));
    check(*it);
  }
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, store_->NewIterator(kTable, 0, PkRange::All(), Epoch(1)));
  check(*it);
}

TEST_P(StateStoreConformanceTest, TablesAndVnodesAreSeparate) {
  auto t1 = NewLocal(*store_, kTable, Epoch(1));
  auto t2 = NewLocal(*store_, kOtherTable, Epoch(1));
  BACKFILL_ASSERT_OK(t1->Insert(0, "k", "t1v0"));
  BACKFILL_ASSERT_OK(t1->Insert(1, "", "t1v1-empty"));
  BACKFILL_ASSERT_OK(t1->Insert(1, "k", "t1v1"));
  const VirtualNode kLast = kMaxVnodeCount - 1;
  BACKFILL_ASSERT_OK(t1->Insert(kLast, "k", "t1last"));
  BACKFILL_ASSERT_OK(t2->Insert(0, "k", "t2v0"));
  BACKFILL_ASSERT_OK(t2->Insert(0, "", "t2v0-empty"));
  EXPECT_THAT(LocalScan(*t1, 0), ElementsAre(Pair("k", "t1v0")));
  EXPECT_THAT(LocalScan(*t1, 1),
              ElementsAre(Pair("", "t1v1-empty"), Pair("k", "t1v1")));
  BACKFILL_ASSERT_OK(SealNext(*t1));
  BACKFILL_ASSERT_OK(SealNext(*t2));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(1)),
              ElementsAre(Pair("k", "t1v0")));
  EXPECT_THAT(GlobalScan(*store_, kTable, 1, Epoch(1)),
              ElementsAre(Pair("", "t1v1-empty"), Pair("k", "t1v1")));
  EXPECT_THAT(GlobalScan(*store_, kTable, 2, Epoch(1)), IsEmpty());
  EXPECT_THAT(GlobalScan(*store_, kTable, kLast, Epoch(1)),
              ElementsAre(Pair("k", "t1last")));
  EXPECT_THAT(GlobalScan(*store_, kOtherTable, 0, Epoch(1)),
              ElementsAre(Pair("", "t2v0-empty"), Pair("k", "t2v0")));
  EXPECT_THAT(GlobalScan(*store_, kOtherTable, kLast, Epoch(1)), IsEmpty());
  EXPECT_THAT(LocalScan(*t2, 1), IsEmpty());
  EXPECT_THAT(LocalScan(*t1, kLast), ElementsAre(Pair("k", "t1last")));
}

TEST_P(StateStoreConformanceTest, EmptyAndBinaryPksKeepByteOrder) {
  const std::vector<std::string> pks = {std::string(""),
                                        std::string("\x00", 1),
                                        std::string("\x00\x00", 2),
                                        std::string("\x00\xff", 2),
                                        std::string("\x01", 1),
                                        std::string("a\x00", 2),
                                        std::string("a\x00b", 3),
                                        std::string("\x7f", 1),
                                        std::string("\x80", 1),
                                        std::string("\xff", 1),
                                        std::string("\xff\x00", 2),
                                        std::string("\xff\xff", 2),
                                        std::string(20, '\xff')};
  auto local = NewLocal(*store_, kTable, Epoch(1));
  // Insert in reverse so that order comes from the store.
  for (auto it = pks.rbegin(); it != pks.rend(); ++it) {
    BACKFILL_ASSERT_OK(local->Insert(5, *it, "v" + *it));
  }
  BACKFILL_ASSERT_OK(local->Insert(5, "empty-value", ""));
  Rows expected;
  for (const std::string& pk : pks) expected.emplace_back(pk, "v" + pk);
  expected.emplace_back("empty-value", "");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(LocalScan(*local, 5), expected);
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_EQ(GlobalScan(*store_, kTable, 5, Epoch(1)), expected);
  EXPECT_EQ(LocalScan(*local, 5), expected);
  for (const std::string& pk : pks) {
    EXPECT_EQ(GlobalGet(*store_, kTable, 5, pk, Epoch(1)), "v" + pk);
  }
  EXPECT_EQ(GlobalGet(*store_, kTable, 5, "empty-value", Epoch(1)), "");
  EXPECT_EQ(GlobalGet(*store_, kTable, 5, std::string("\x00\x01", 2), Epoch(1)),
            std::nullopt);
  // Ranges over binary bounds.
  EXPECT_THAT(
      GlobalScan(
          *store_, kTable, 5, Epoch(1),
          PkRange::Between(std::string("\x00", 1), std::string("\x01", 1))),
      ElementsAre(
          Pair(std::string("\x00", 1), "v" + std::string("\x00", 1)),
          Pair(std::string("\x00\x00", 2), "v" + std::string("\x00\x00", 2)),
          Pair(std::string("\x00\xff", 2), "v" + std::string("\x00\xff", 2))));
  EXPECT_THAT(
      GlobalScan(*store_, kTable, 5, Epoch(1),
                 PkRange::From(std::string("\xff\xff", 2))),
      ElementsAre(
          Pair(std::string("\xff\xff", 2), "v" + std::string("\xff\xff", 2)),
          Pair(std::string(20, '\xff'), "v" + std::string(20, '\xff'))));
}

// Runs the same range/seek checks on a committed iterator and on a local one
// whose rows come from all three layers.
TEST_P(StateStoreConformanceTest, IteratorRangeAndSeek) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  for (const char* pk : {"b", "d", "f"})
    BACKFILL_ASSERT_OK(local->Insert(2, pk, pk));
  BACKFILL_ASSERT_OK(local->Insert(1, "zzz", "other vnode"));
  BACKFILL_ASSERT_OK(local->Insert(3, "", "other vnode"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  auto mixed = NewLocal(*store_, kTable, Epoch(2));
  BACKFILL_ASSERT_OK(mixed->Insert(2, "c", "c"));
  BACKFILL_ASSERT_OK(SealNext(*mixed));
  BACKFILL_ASSERT_OK(mixed->Insert(2, "e", "e"));
  BACKFILL_ASSERT_OK(mixed->Delete(2, "f"));

  struct Case {
    bool local;
    Rows all;
  };
  for (const Case& c :
       {Case{false, Rows{{"b", "b"}, {"d", "d"}, {"f", "f"}}},
        Case{true, Rows{{"b", "b"}, {"c", "c"}, {"d", "d"}, {"e", "e"}}}}) {
    SCOPED_TRACE(c.local ? "local" : "committed");
    auto open = [&](const PkRange& range) {
      return c.local ? mixed->NewIterator(2, range)
                     : store_->NewIterator(kTable, 2, range, Epoch(1));
    };
    auto scan = [&](const PkRange& range) {
      auto it = open(range);
      EXPECT_THAT(it, IsOk());
      (*it)->SeekToFirst();
      return Drain(**it);
    };
    auto in = [&](absl::string_view min, std::optional<absl::string_view> max) {
      Rows rows;
      for (const auto& row : c.all) {
        if (row.first >= min && (!max || row.first < *max)) rows.push_back(row);
      }
      return rows;
    };
    EXPECT_EQ(scan(PkRange::All()), c.all);
    EXPECT_EQ(scan(PkRange::From("c")), in("c", std::nullopt));
    EXPECT_EQ(scan(PkRange::Between("c", "e")), in("c", "e"));
    EXPECT_EQ(scan(PkRange::Between("b", "b")), Rows{});
    EXPECT_EQ(scan(PkRange::Between("e", "a")), Rows{});
    EXPECT_EQ(scan(PkRange::Between("", "zzzz")), c.all);

    auto it = open(PkRange::Between("c", "e"));
    BACKFILL_ASSERT_OK(it);
    EXPECT_FALSE((*it)->Valid());
    (*it)->Seek("a");  // Below the range: clamps to inclusive_min.
    ASSERT_TRUE((*it)->Valid());
    EXPECT_EQ((*it)->key(), in("c", "e").front().first);
    (*it)->Seek("d");
    ASSERT_TRUE((*it)->Valid());
    EXPECT_EQ((*it)->key(), "d");
    EXPECT_EQ((*it)->value(), "d");
    (*it)->Next();
    EXPECT_FALSE((*it)->Valid());
    (*it)->Seek("e");  // At the exclusive end.
    EXPECT_FALSE((*it)->Valid());
    (*it)->Seek(std::string("c\x00", 2));  // Strictly after "c".
    ASSERT_TRUE((*it)->Valid());
    EXPECT_EQ((*it)->key(), "d");
    (*it)->SeekToFirst();  // Seeking backwards works too.
    ASSERT_TRUE((*it)->Valid());
    EXPECT_EQ((*it)->key(), in("c", "e").front().first);
    BACKFILL_EXPECT_OK((*it)->status());
  }
}

TEST_P(StateStoreConformanceTest, LocalIteratorIsASnapshot) {
  auto local = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "1"));
  BACKFILL_ASSERT_OK(local->Insert(0, "c", "1"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, local->NewIterator(0, PkRange::All()));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "2"));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "2"));
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(local->Insert(0, "d", "3"));
  it->SeekToFirst();
  EXPECT_THAT(Drain(*it), ElementsAre(Pair("a", "1"), Pair("c", "1")));
  EXPECT_THAT(LocalScan(*local, 0),
              ElementsAre(Pair("a", "2"), Pair("b", "2"), Pair("c", "1"),
                          Pair("d", "3")));
}

TEST_P(StateStoreConformanceTest, EpochPinsMoveAndReleaseWithCheckpoints) {
  {
    auto local = NewLocal(*store_, kTable, Epoch(1));
    for (int epoch = 1; epoch <= 3; ++epoch) {
      BACKFILL_ASSERT_OK(local->Insert(0, "k", absl::StrCat("v", epoch)));
      BACKFILL_ASSERT_OK(SealNext(*local));
      BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(epoch)));
    }
  }
  EXPECT_THAT(store_->PinEpoch("", Epoch(1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->PinEpoch("a", Epoch(4)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("above the committed epoch 3")));
  EXPECT_THAT(
      store_->NewLocalStateStore(kEpochPinTableId, {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
  BACKFILL_ASSERT_OK(store_->PinEpoch("a", Epoch(1)));
  BACKFILL_ASSERT_OK(store_->PinEpoch("b", Epoch(2)));
  BACKFILL_ASSERT_OK(store_->PinEpoch("a", Epoch(2)));  // Moves a's pin.
  EXPECT_THAT(store_->EpochPins(),
              ElementsAre(Pair("a", Epoch(2)), Pair("b", Epoch(2))));
  // A release takes effect with the first checkpoint at or after its epoch.
  BACKFILL_ASSERT_OK(store_->ReleaseEpochPin("b", Epoch(5)));
  BACKFILL_ASSERT_OK(store_->ReleaseEpochPin("nobody", Epoch(5)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(4)));
  EXPECT_THAT(store_->EpochPins(),
              ElementsAre(Pair("a", Epoch(2)), Pair("b", Epoch(2))));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(5)));
  EXPECT_THAT(store_->EpochPins(), ElementsAre(Pair("a", Epoch(2))));
  // A pin after a release cancels it.
  BACKFILL_ASSERT_OK(store_->ReleaseEpochPin("a", Epoch(6)));
  BACKFILL_ASSERT_OK(store_->PinEpoch("a", Epoch(3)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(6)));
  EXPECT_THAT(store_->EpochPins(), ElementsAre(Pair("a", Epoch(3))));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(3)), "v3");
  // The pins live in a table no instance may write, not in users' tables.
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(6)),
              ElementsAre(Pair("k", "v3")));
  BACKFILL_ASSERT_OK(store_->ReleaseEpochPin("a", Epoch(7)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(7)));
  EXPECT_THAT(store_->EpochPins(), IsEmpty());
}

TEST_P(StateStoreConformanceTest, SealProtocolErrors) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto local, store_->NewLocalStateStore(kTable, LocalOptions{}));
  EXPECT_EQ(local->epoch(), Epoch(0));
  EXPECT_THAT(local->Insert(0, "a", "v"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->Delete(0, "a"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->Get(0, "a"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->NewIterator(0, PkRange::All()),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->Seal(EpochPair{Epoch(2), Epoch(1)}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->Init(EpochPair{Epoch(1), Epoch(1)}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(5), Epoch(4)}));
  EXPECT_THAT(local->Init(EpochPair{Epoch(6), Epoch(5)}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "v"));
  // prev must be the current epoch.
  EXPECT_THAT(local->Seal(EpochPair{Epoch(7), Epoch(6)}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("current epoch 5")));
  EXPECT_THAT(local->Seal(EpochPair{Epoch(5), Epoch(4)}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(local->Seal(EpochPair{Epoch(5), Epoch(5)}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // Nothing changed.
  EXPECT_EQ(local->epoch(), Epoch(5));
  EXPECT_THAT(local->Get(0, "a"), IsOkAndHolds(Optional(std::string("v"))));
  BACKFILL_ASSERT_OK(
      local->Seal(EpochPair{Epoch(8), Epoch(5)}));  // Gaps are fine.
  EXPECT_EQ(local->epoch(), Epoch(8));
  EXPECT_THAT(local->Insert(kMaxVnodeCount, "a", "v"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(local->Get(kMaxVnodeCount, "a"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Get(TableKey{kTable, kMaxVnodeCount, "a"}, Epoch(1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      store_->NewIterator(kTable, kMaxVnodeCount, PkRange::All(), Epoch(1)),
      StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(StateStoreConformanceTest, CheckpointProtocolErrors) {
  auto local = NewLocal(*store_, kTable, Epoch(2));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "v"));
  // The instance has not sealed epoch 2.
  EXPECT_THAT(
      store_->Checkpoint(Epoch(2)),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("table 7")));
  EXPECT_EQ(store_->CommittedEpoch(kTable), Epoch(0));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));  // Nothing to commit: fine.
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_THAT(store_->Checkpoint(Epoch(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store_->Checkpoint(Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // Init at a committed epoch would write below the committed data.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto late, store_->NewLocalStateStore(kTable, LocalOptions{}));
  EXPECT_THAT(late->Init(EpochPair{Epoch(2), Epoch(1)}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  BACKFILL_ASSERT_OK(late->Init(EpochPair{Epoch(3), Epoch(2)}));
  // Uninitialised and replicated instances never block a checkpoint.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto idle, store_->NewLocalStateStore(kTable, LocalOptions{}));
  auto replicated = NewLocal(*store_, kTable, Epoch(3), /*replicated=*/true);
  BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(SealNext(*late));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(3)));
}

TEST_P(StateStoreConformanceTest, CheckpointCommitsAllTablesAtOnce) {
  std::vector<std::unique_ptr<LocalStateStore>> locals;
  for (TableId table = 1; table <= 3; ++table) {
    locals.push_back(NewLocal(*store_, table, Epoch(1)));
    BACKFILL_ASSERT_OK(
        locals.back()->Insert(table, "k", absl::StrCat("t", table)));
  }
  // A listener observes the state right after the commit: all three tables.
  std::vector<int> seen_per_listener_call;
  const uint64_t listener = store_->AddCommitListener([&](Epoch epoch) {
    EXPECT_EQ(epoch, Epoch(1));
    int seen = 0;
    for (TableId table = 1; table <= 3; ++table) {
      auto value = store_->Get(
          TableKey{table, static_cast<VirtualNode>(table), "k"}, epoch);
      if (value.ok() && value->has_value()) ++seen;
    }
    seen_per_listener_call.push_back(seen);
  });
  for (auto& local : locals) BACKFILL_ASSERT_OK(SealNext(*local));
  for (TableId table = 1; table <= 3; ++table) {
    EXPECT_EQ(GlobalGet(*store_, table, table, "k", Epoch::Max()),
              std::nullopt);
  }
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_THAT(seen_per_listener_call, ElementsAre(3));
  for (TableId table = 1; table <= 3; ++table) {
    EXPECT_EQ(GlobalGet(*store_, table, table, "k", Epoch(1)),
              absl::StrCat("t", table));
  }
  store_->RemoveCommitListener(listener);
  for (auto& local : locals) BACKFILL_ASSERT_OK(SealNext(*local));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_THAT(seen_per_listener_call, ElementsAre(3));  // Removed: not called.
}

TEST_P(StateStoreConformanceTest,
       DroppingAnInstanceDiscardsItsUncommittedData) {
  auto keeper = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(keeper->Insert(0, "kept", "v"));
  {
    auto dropped = NewLocal(*store_, kTable, Epoch(1));
    BACKFILL_ASSERT_OK(dropped->Insert(0, "sealed", "v"));
    BACKFILL_ASSERT_OK(SealNext(*dropped));
    BACKFILL_ASSERT_OK(dropped->Insert(0, "unsealed", "v"));
  }
  BACKFILL_ASSERT_OK(SealNext(*keeper));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_THAT(GlobalScan(*store_, kTable, 0, Epoch(1)),
              ElementsAre(Pair("kept", "v")));
  // Recovery: destroy all instances, make new ones at the committed epoch.
  BACKFILL_ASSERT_OK(keeper->Insert(0, "lost", "v"));
  BACKFILL_ASSERT_OK(SealNext(*keeper));
  keeper.reset();
  auto recovered = NewLocal(*store_, kTable, Epoch(2));
  EXPECT_THAT(LocalScan(*recovered, 0), ElementsAre(Pair("kept", "v")));
}

TEST_P(StateStoreConformanceTest, ReplicatedBatchesAreNeverCommitted) {
  auto replica = NewLocal(*store_, kTable, Epoch(1), /*replicated=*/true);
  EXPECT_TRUE(replica->replicated());
  BACKFILL_ASSERT_OK(replica->Insert(0, "r", "replica"));
  BACKFILL_ASSERT_OK(SealNext(*replica));
  auto other = NewLocal(*store_, kTable, Epoch(2));
  EXPECT_THAT(other->Get(0, "r"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "r", Epoch::Max()), std::nullopt);
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  // Never committed, and dropped since committed (1) >= its epoch (1).
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "r", Epoch::Max()), std::nullopt);
  EXPECT_THAT(replica->Get(0, "r"), IsOkAndHolds(Eq(std::nullopt)));
}

TEST_P(StateStoreConformanceTest,
       ReplicatedBatchIsDroppedOnceTheUpstreamCommits) {
  auto upstream = NewLocal(*store_, kTable, Epoch(1));
  auto replica = NewLocal(*store_, kTable, Epoch(1), /*replicated=*/true);
  // Epoch 1: both write (the replica's copy differs only to tell them apart).
  BACKFILL_ASSERT_OK(upstream->Insert(0, "k", "upstream1"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "k", "replica1"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "only-replica", "x"));
  BACKFILL_ASSERT_OK(SealNext(*upstream));
  BACKFILL_ASSERT_OK(SealNext(*replica));
  // Epoch 2 (a non-checkpoint barrier follows).
  BACKFILL_ASSERT_OK(upstream->Insert(0, "k", "upstream2"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "k", "replica2"));
  BACKFILL_ASSERT_OK(SealNext(*upstream));
  BACKFILL_ASSERT_OK(SealNext(*replica));
  EXPECT_THAT(replica->Get(0, "k"),
              IsOkAndHolds(Optional(std::string("replica2"))));
  EXPECT_THAT(LocalScan(*replica, 0),
              ElementsAre(Pair("k", "replica2"), Pair("only-replica", "x")));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  // Batch 1 dropped (committed holds upstream1), batch 2 still on top.
  EXPECT_THAT(replica->Get(0, "k"),
              IsOkAndHolds(Optional(std::string("replica2"))));
  EXPECT_THAT(replica->Get(0, "only-replica"), IsOkAndHolds(Eq(std::nullopt)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_THAT(replica->Get(0, "k"),
              IsOkAndHolds(Optional(std::string("upstream2"))));
  EXPECT_THAT(LocalScan(*replica, 0), ElementsAre(Pair("k", "upstream2")));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "k", Epoch(2)), "upstream2");
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "only-replica", Epoch(2)),
            std::nullopt);
}

TEST_P(StateStoreConformanceTest, ReplicatedWritesAreInconsistent) {
  auto upstream = NewLocal(*store_, kTable, Epoch(1));
  BACKFILL_ASSERT_OK(upstream->Insert(0, "a", "committed"));
  BACKFILL_ASSERT_OK(SealNext(*upstream));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  auto replica = NewLocal(*store_, kTable, Epoch(2), /*replicated=*/true);
  // No existence checks: delete absent, insert existing, delete twice.
  BACKFILL_ASSERT_OK(replica->Delete(0, "absent"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "a", "x"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "a", "y"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "b", "x"));
  BACKFILL_ASSERT_OK(replica->Delete(0, "b"));
  BACKFILL_ASSERT_OK(replica->Delete(0, "b"));
  BACKFILL_ASSERT_OK(replica->Delete(0, "c"));
  BACKFILL_ASSERT_OK(replica->Insert(0, "c", "z"));
  BACKFILL_ASSERT_OK(SealNext(*replica));
  EXPECT_THAT(LocalScan(*replica, 0),
              ElementsAre(Pair("a", "y"), Pair("c", "z")));
  BACKFILL_ASSERT_OK(replica->Delete(0, "a"));
  BACKFILL_ASSERT_OK(SealNext(*replica));
  EXPECT_THAT(LocalScan(*replica, 0), ElementsAre(Pair("c", "z")));
  EXPECT_EQ(GlobalGet(*store_, kTable, 0, "a", Epoch::Max()), "committed");
}

TEST_P(StateStoreConformanceTest, WaitCommittedReturnsAtOnceWhenDecided) {
  SimulatedClock clock(absl::UnixEpoch() + absl::Hours(1));
  Cancellation cancellation;
  EXPECT_THAT(
      store_->WaitCommitted(kTable, Epoch(0), clock.Now(), cancellation, clock),
      IsOk());
  EXPECT_THAT(
      store_->WaitCommitted(kTable, Epoch(1), clock.Now(), cancellation, clock),
      StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("epoch 1")));
  EXPECT_THAT(store_->WaitCommitted(kTable, Epoch(1), absl::InfinitePast(),
                                    cancellation, clock),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  cancellation.Cancel();
  EXPECT_THAT(store_->WaitCommitted(kTable, Epoch(1), absl::InfiniteFuture(),
                                    cancellation, clock),
              StatusIs(absl::StatusCode::kCancelled));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  // Committed wins over cancelled.
  EXPECT_THAT(store_->WaitCommitted(kTable, Epoch(1), absl::InfiniteFuture(),
                                    cancellation, clock),
              IsOk());
}

TEST_P(StateStoreConformanceTest, WaitCommittedWakesOnCheckpoint) {
  SimulatedClock clock;
  Cancellation cancellation;
  absl::Status result = absl::UnknownError("not run");
  std::thread waiter([&] {
    result = store_->WaitCommitted(kTable, Epoch(2), absl::InfiniteFuture(),
                                   cancellation, clock);
  });
  clock.BlockUntilWaiters(1);
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  waiter.join();
  EXPECT_THAT(result, IsOk());
}

TEST_P(StateStoreConformanceTest, WaitCommittedWakesOnCancel) {
  SimulatedClock clock;
  Cancellation cancellation;
  absl::Status result;
  std::thread waiter([&] {
    result = store_->WaitCommitted(kTable, Epoch(2), absl::InfiniteFuture(),
                                   cancellation, clock);
  });
  clock.BlockUntilWaiters(1);
  cancellation.Cancel();
  waiter.join();
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kCancelled));
}

TEST_P(StateStoreConformanceTest, WaitCommittedWakesAtTheDeadline) {
  SimulatedClock clock;
  Cancellation cancellation;
  absl::Status result;
  std::thread waiter([&] {
    result = store_->WaitCommitted(
        kTable, Epoch(2), clock.Now() + absl::Seconds(10), cancellation, clock);
  });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Seconds(5));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));  // Not enough.
  clock.AdvanceTime(absl::Seconds(5));
  waiter.join();
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_P(StateStoreConformanceTest, ListenersDriveANonBlockingScheduler) {
  // A single-threaded scheduler: an actor waiting for epoch 2 is woken by the
  // listener and checks IsCommitted, without any thread blocking.
  std::vector<Epoch> notified;
  bool actor_ready = false;
  const uint64_t id = store_->AddCommitListener([&](Epoch epoch) {
    notified.push_back(epoch);
    actor_ready = store_->IsCommitted(kTable, Epoch(2));
  });
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_FALSE(actor_ready);
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_TRUE(actor_ready);
  EXPECT_THAT(notified, ElementsAre(Epoch(1), Epoch(2)));
  store_->RemoveCommitListener(id);
  // A failed checkpoint notifies nobody.
  const uint64_t again = store_->AddCommitListener(
      [&](Epoch epoch) { notified.push_back(epoch); });
  EXPECT_THAT(store_->Checkpoint(Epoch(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(notified.size(), 2u);
  store_->RemoveCommitListener(again);
}

TEST_P(StateStoreConformanceTest, ConcurrentActorsAndCheckpoints) {
  // Several actors on their own threads write and seal epochs while the
  // coordinator checkpoints once every actor has sealed; readers read
  // committed data concurrently.
  constexpr int kActors = 4;
  constexpr int kEpochs = 30;
  std::vector<std::unique_ptr<LocalStateStore>> locals;
  for (int actor = 0; actor < kActors; ++actor) {
    locals.push_back(NewLocal(*store_, kTable + actor, Epoch(1)));
  }
  std::atomic<int> sealed_count[kEpochs + 2] = {};
  std::vector<std::thread> threads;
  for (int actor = 0; actor < kActors; ++actor) {
    threads.emplace_back([&, actor] {
      LocalStateStore& local = *locals[actor];
      for (int epoch = 1; epoch <= kEpochs; ++epoch) {
        for (int row = 0; row < 10; ++row) {
          EXPECT_THAT(local.Insert(row % 3, absl::StrCat("k", row),
                                   absl::StrCat(epoch)),
                      IsOk());
        }
        auto got = local.Get(0, "k0");
        EXPECT_THAT(got, IsOkAndHolds(Optional(absl::StrCat(epoch))));
        EXPECT_THAT(SealNext(local), IsOk());
        sealed_count[epoch].fetch_add(1);
      }
    });
  }
  std::thread reader([&] {
    for (int i = 0; i < 200; ++i) {
      const Epoch committed = store_->CommittedEpoch(kTable);
      auto value = store_->Get(TableKey{kTable, 0, "k0"}, committed);
      ASSERT_THAT(value, IsOk());
      if (committed > Epoch(0)) {
        EXPECT_EQ(*value, absl::StrCat(committed.value()));
      }
    }
  });
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    while (sealed_count[epoch].load() < kActors) std::this_thread::yield();
    EXPECT_THAT(store_->Checkpoint(Epoch(epoch)), IsOk());
  }
  for (auto& thread : threads) thread.join();
  reader.join();
  for (int actor = 0; actor < kActors; ++actor) {
    EXPECT_EQ(GlobalGet(*store_, kTable + actor, 1, "k1", Epoch(kEpochs)),
              absl::StrCat(kEpochs));
  }
}

}  // namespace
}  // namespace backfill
