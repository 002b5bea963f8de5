// The GC filter and epochs, called directly: no database.
#include "storage/rocksdb/mvcc_compaction_filter.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/mvcc_format.h"
#include "storage/table_key.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using Decision = rocksdb::CompactionFilter::Decision;
using ValueType = rocksdb::CompactionFilter::ValueType;

std::string Key(const std::string& pk, uint64_t epoch) {
  return EncodeFullKey(FullKey{TableKey{1, 2, pk}, Epoch(epoch)});
}
std::string Row() {
  std::string value;
  AppendRowValue("v", &value);
  return value;
}
std::string Tombstone() {
  std::string value;
  AppendTombstoneValue(&value);
  return value;
}

// Runs `filter` over (key, value) pairs in comparator order; returns the
// kept keys.
std::vector<std::string> Kept(
    const MvccCompactionFilter& filter,
    const std::vector<std::pair<std::string, std::string>>& entries) {
  std::vector<std::string> kept;
  for (const auto& [key, value] : entries) {
    std::string new_value, skip_until;
    if (filter.FilterV2(0, key, ValueType::kValue, value, &new_value,
                        &skip_until) == Decision::kKeep) {
      kept.push_back(key);
    }
  }
  return kept;
}

TEST(MvccCompactionFilterTest, DropsVersionsShadowedAtTheSafeEpoch) {
  // Newest first, as a compaction sees them.
  const std::vector<std::pair<std::string, std::string>> entries = {
      {Key("a", 9), Row()}, {Key("a", 5), Row()}, {Key("a", 3), Row()},
      {Key("a", 1), Row()}, {Key("b", 2), Row()}, {Key("b", 1), Row()},
  };
  const MvccCompactionFilter filter(Epoch(5), /*full_compaction=*/false);
  // a@9 is newer than the safe epoch, a@5 is what reads at >= 5 see; b@2
  // likewise; everything older goes.
  EXPECT_THAT(Kept(filter, entries),
              ::testing::ElementsAre(Key("a", 9), Key("a", 5), Key("b", 2)));
}

TEST(MvccCompactionFilterTest, TombstonesGoOnlyInFullCompactions) {
  const std::vector<std::pair<std::string, std::string>> entries = {
      {Key("a", 4), Tombstone()},
      {Key("a", 2), Row()},
      {Key("b", 8), Tombstone()},  // Newer than the safe epoch: stays.
  };
  EXPECT_THAT(Kept(MvccCompactionFilter(Epoch(5), false), entries),
              ::testing::ElementsAre(Key("a", 4), Key("b", 8)));
  EXPECT_THAT(Kept(MvccCompactionFilter(Epoch(5), true), entries),
              ::testing::ElementsAre(Key("b", 8)));
}

TEST(MvccCompactionFilterTest, KeepsWhatItCannotJudge) {
  const MvccCompactionFilter filter(Epoch(100), true);
  std::string new_value, skip_until;
  EXPECT_EQ(filter.FilterV2(0, "short", ValueType::kValue, Tombstone(),
                            &new_value, &skip_until),
            Decision::kKeep);
  EXPECT_EQ(filter.FilterV2(0, Key("a", 1), ValueType::kMergeOperand,
                            Tombstone(), &new_value, &skip_until),
            Decision::kKeep);
}

TEST(GcEpochsTest, SafeEpochIsTheOldestPinOrTheCommittedEpoch) {
  GcEpochs gc(Epoch(10));
  EXPECT_EQ(gc.BeginCompaction(), Epoch(10));
  {
    auto pin = gc.Pin(Epoch(12));
    auto older = gc.Pin(Epoch(11));
    gc.SetCommitted(Epoch(20));
    EXPECT_EQ(gc.BeginCompaction(), Epoch(11));
  }
  EXPECT_EQ(gc.BeginCompaction(), Epoch(20));
  gc.SetCommitted(Epoch(15));  // Never moves back.
  EXPECT_EQ(gc.BeginCompaction(), Epoch(20));
}

TEST(GcEpochsTest, HorizonIsTheLargestSafeEpochUsed) {
  GcEpochs gc(Epoch(5));
  EXPECT_EQ(gc.horizon(), Epoch(0));
  gc.BeginCompaction();
  EXPECT_EQ(gc.horizon(), Epoch(5));
  auto pin = gc.Pin(Epoch(3));
  gc.SetCommitted(Epoch(9));
  EXPECT_EQ(gc.BeginCompaction(), Epoch(3));
  EXPECT_EQ(gc.horizon(), Epoch(5));  // Never moves back.
}

TEST(GcEpochsTest, FrozenEpochsKeepEveryVersion) {
  GcEpochs gc(Epoch(10));
  auto pin = gc.Pin(Epoch(4));
  EXPECT_EQ(gc.BeginCompaction(), Epoch(4));
  gc.Freeze();
  pin.reset();  // The store drops its pins after freezing.
  gc.SetCommitted(Epoch(20));
  EXPECT_EQ(gc.BeginCompaction(), Epoch(0));
  EXPECT_EQ(gc.horizon(), Epoch(4));
}

TEST(MvccCompactionFilterFactoryTest, FiltersFlushesAndCompactions) {
  auto gc = std::make_shared<GcEpochs>(Epoch(7));
  MvccCompactionFilterFactory factory(gc);
  EXPECT_TRUE(factory.ShouldFilterTableFileCreation(
      rocksdb::TableFileCreationReason::kFlush));
  EXPECT_TRUE(factory.ShouldFilterTableFileCreation(
      rocksdb::TableFileCreationReason::kCompaction));
  EXPECT_FALSE(factory.ShouldFilterTableFileCreation(
      rocksdb::TableFileCreationReason::kRecovery));
  rocksdb::CompactionFilter::Context context;
  context.is_full_compaction = true;
  auto filter = factory.CreateCompactionFilter(context);
  EXPECT_EQ(gc->horizon(), Epoch(7));
  std::string new_value, skip_until;
  EXPECT_EQ(filter->FilterV2(0, Key("a", 6), ValueType::kValue, Tombstone(),
                             &new_value, &skip_until),
            Decision::kRemove);
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
