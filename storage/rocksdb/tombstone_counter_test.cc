#include "storage/rocksdb/tombstone_counter.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/mvcc_format.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::string Tombstone() {
  std::string value;
  AppendTombstoneValue(&value);
  return value;
}
std::string Row(const std::string& row) {
  std::string value;
  AppendRowValue(row, &value);
  return value;
}

TEST(TombstoneCounterTest, CountsTombstonePutsOnly) {
  TombstoneCounter counter;
  const std::string tombstone = Tombstone();
  const std::string row = Row("x");
  const std::string row_of_zero = Row(std::string("\0", 1));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        counter.AddUserKey("k", tombstone, rocksdb::kEntryPut, 0, 0).ok());
  }
  ASSERT_TRUE(counter.AddUserKey("k", row, rocksdb::kEntryPut, 0, 0).ok());
  ASSERT_TRUE(
      counter.AddUserKey("k", row_of_zero, rocksdb::kEntryPut, 0, 0).ok());
  ASSERT_TRUE(
      counter.AddUserKey("k", tombstone, rocksdb::kEntryDelete, 0, 0).ok());
  rocksdb::UserCollectedProperties properties;
  ASSERT_TRUE(counter.Finish(&properties).ok());
  EXPECT_THAT(properties,
              UnorderedElementsAre(Pair("backfill.tombstones", "3")));
  EXPECT_THAT(counter.GetReadableProperties(),
              UnorderedElementsAre(Pair("backfill.tombstones", "3")));
}

TEST(TombstoneCounterTest, FactoryMakesFreshCounters) {
  TombstoneCounterFactory factory;
  std::unique_ptr<rocksdb::TablePropertiesCollector> collector(
      factory.CreateTablePropertiesCollector({}));
  rocksdb::UserCollectedProperties properties;
  ASSERT_TRUE(collector->Finish(&properties).ok());
  EXPECT_EQ(properties["backfill.tombstones"], "0");
}

// A file is marked for compaction when it holds at least
// kMinTombstonesToMarkFile tombstones making at least the configured
// fraction of its entries; never with fraction 0.
TEST(TombstoneCounterTest, MarksFilesMostlyOfTombstonesForCompaction) {
  const std::string tombstone = Tombstone();
  const std::string row = Row("x");
  auto file = [&](double fraction, uint64_t tombstones, uint64_t rows) {
    TombstoneCounterFactory factory(fraction);
    std::unique_ptr<rocksdb::TablePropertiesCollector> collector(
        factory.CreateTablePropertiesCollector({}));
    for (uint64_t i = 0; i < tombstones; ++i) {
      EXPECT_TRUE(
          collector->AddUserKey("k", tombstone, rocksdb::kEntryPut, 0, 0).ok());
    }
    for (uint64_t i = 0; i < rows; ++i) {
      EXPECT_TRUE(
          collector->AddUserKey("k", row, rocksdb::kEntryPut, 0, 0).ok());
    }
    return collector->NeedCompact();
  };
  constexpr uint64_t kMin = kMinTombstonesToMarkFile;
  EXPECT_TRUE(file(0.5, kMin, kMin));       // exactly half
  EXPECT_FALSE(file(0.5, kMin, kMin + 1));  // just under half
  EXPECT_FALSE(file(0.5, kMin - 1, 0));     // too few tombstones
  EXPECT_TRUE(file(1, kMin, 0));
  EXPECT_FALSE(file(1, kMin, 1));
  EXPECT_FALSE(file(0, 10 * kMin, 0));  // disabled
  EXPECT_FALSE(TombstoneCounter().NeedCompact());
}

// A run of tombstones flushed with other writes: the whole file is under
// the fraction, but some kTombstoneWindowEntries consecutive entries are
// not. The same tombstones spread evenly over the file do not mark it.
TEST(TombstoneCounterTest, MarksAFileWithADenseRunOfTombstones) {
  const std::string tombstone = Tombstone();
  const std::string row = Row("x");
  constexpr uint64_t kWindow = kTombstoneWindowEntries;
  // 3 windows of entries, one window of them tombstones: a third.
  auto file = [&](double fraction, uint64_t run_start, uint64_t run_length,
                  uint64_t every) {
    TombstoneCounter counter(fraction);
    for (uint64_t i = 0; i < 3 * kWindow; ++i) {
      const bool in_run = i >= run_start && i < run_start + run_length;
      const bool is_tombstone = in_run || (every > 0 && i % every == 0);
      EXPECT_TRUE(counter
                      .AddUserKey("k", is_tombstone ? tombstone : row,
                                  rocksdb::kEntryPut, 0, 0)
                      .ok());
    }
    return counter.NeedCompact();
  };
  EXPECT_TRUE(file(0.5, kWindow, kWindow, 0));      // the middle window
  EXPECT_TRUE(file(0.5, 0, kWindow, 0));            // the first one
  EXPECT_TRUE(file(0.5, 2 * kWindow, kWindow, 0));  // the last one
  // Half a window of tombstones at the start of any window is still half.
  EXPECT_TRUE(file(0.5, kWindow / 2, kWindow / 2, 0));
  EXPECT_FALSE(file(0.5, kWindow / 2, kWindow / 2 - 1, 0));
  EXPECT_FALSE(file(0.5, 0, 0, 3));  // a third, spread evenly
  EXPECT_FALSE(file(0.9, kWindow, kWindow * 8 / 10, 0));
  EXPECT_FALSE(file(0, kWindow, kWindow, 0));  // disabled
}

std::shared_ptr<const rocksdb::TableProperties> File(
    const rocksdb::UserCollectedProperties& user) {
  auto properties = std::make_shared<rocksdb::TableProperties>();
  properties->user_collected_properties = user;
  return properties;
}

TEST(StoredTombstonesTest, SumsFilesAndIgnoresOlderOrBadOnes) {
  rocksdb::TablePropertiesCollection files;
  files["1.sst"] = File({{"backfill.tombstones", "5"}});
  files["2.sst"] = File({{"backfill.tombstones", "7"}});
  files["3.sst"] = File({});  // Written before the property existed.
  files["4.sst"] = File({{"backfill.tombstones", "junk"}});
  EXPECT_EQ(StoredTombstones(files), 12u);
  files["5.sst"] = File({{"backfill.tombstones", "18446744073709551615"}});
  EXPECT_EQ(StoredTombstones(files), UINT64_MAX);  // Saturates.
  EXPECT_EQ(StoredTombstones({}), 0u);
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
