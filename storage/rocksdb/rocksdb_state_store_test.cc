#include "storage/rocksdb/rocksdb_state_store.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/raw_rocksdb_for_test.h"
#include "storage/state_store_conformance.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/rocksdb_state_store_",
                      ::getpid(), "_", counter.fetch_add(1));
}

RocksDbStateStoreOptions SmallOptions(std::string path) {
  RocksDbStateStoreOptions options;
  options.path = std::move(path);
  options.block_cache_bytes = 1 << 20;
  options.write_buffer_bytes = 256 << 10;
  options.sync_on_checkpoint = false;
  return options;
}

INSTANTIATE_TEST_SUITE_P(
    RocksDb, StateStoreConformanceTest,
    ::testing::Values(StateStoreFactory{
        "RocksDb",
        []() -> absl::StatusOr<std::unique_ptr<StateStore>> {
          auto store =
              RocksDbStateStore::Open(SmallOptions(NewTestDirectory()));
          if (!store.ok()) return store.status();
          return std::unique_ptr<StateStore>(*std::move(store));
        }}),
    StateStoreFactoryName);

constexpr TableId kTable = 3;

// Writes `value` for pks [0, num_keys) of vnode 0 at the instance's epoch,
// seals and checkpoints.
void WriteEpoch(StateStore& store, LocalStateStore& local, int num_keys,
                const std::string& value, bool delete_instead = false) {
  for (int i = 0; i < num_keys; ++i) {
    const std::string pk = absl::StrCat("key", i);
    if (delete_instead) {
      ASSERT_THAT(local.Delete(0, pk), IsOk());
    } else {
      ASSERT_THAT(local.Insert(0, pk, value), IsOk());
    }
  }
  const Epoch epoch = local.epoch();
  ASSERT_THAT(local.Seal(EpochPair{Epoch(epoch.value() + 1), epoch}), IsOk());
  ASSERT_THAT(store.Checkpoint(epoch), IsOk());
}

TEST(RocksDbStateStoreTest, ReopenRestoresTheLastCheckpoint) {
  const std::string path = NewTestDirectory();
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 10, "v1");
    BACKFILL_ASSERT_OK(local->Insert(0, "key0", "uncommitted"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
    // Epoch 2 sealed but never checkpointed: lost on reopen.
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(SmallOptions(path)));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(1));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key0"}, Epoch::Max()),
              IsOkAndHolds(Optional(std::string("v1"))));
}

// Every file under `dir` (recursively) with its bytes.
std::map<std::string, std::string> DirectoryBytes(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[entry.path().lexically_relative(dir).string()] = bytes.str();
  }
  return files;
}

// A store with two checkpoints, the second one only in the write-ahead log
// (not flushed), and an ACKNOWLEDGED_EPOCH record.
void WriteTwoCheckpoints(const std::string& path) {
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.sync_on_checkpoint = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  WriteEpoch(*store, *local, 10, "v1");
  WriteEpoch(*store, *local, 5, "v2");
}

TEST(RocksDbStateStoreReadOnlyTest, ReadsTheLastCheckpointAndWritesNothing) {
  const std::string path = NewTestDirectory();
  WriteTwoCheckpoints(path);
  const std::map<std::string, std::string> before = DirectoryBytes(path);
  ASSERT_TRUE(before.count("ACKNOWLEDGED_EPOCH")) << "the check must run";
  {
    RocksDbStateStoreOptions options = SmallOptions(path);
    options.read_only = true;
    options.sync_on_checkpoint = true;
    options.verify_checksums_on_open = true;
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(2));
    EXPECT_THAT(store->Get(TableKey{kTable, 0, "key0"}, Epoch::Max()),
                IsOkAndHolds(Optional(std::string("v2"))));
    EXPECT_THAT(store->Get(TableKey{kTable, 0, "key9"}, Epoch::Max()),
                IsOkAndHolds(Optional(std::string("v1"))));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(3), Epoch(2)}));
    BACKFILL_ASSERT_OK(local->Insert(0, "key0", "v3"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(4), Epoch(3)}));
    EXPECT_THAT(store->Checkpoint(Epoch(3)),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("read-only")));
    EXPECT_THAT(store->Compact(),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("read-only")));
  }
  EXPECT_EQ(DirectoryBytes(path), before);
  // And the directory is still the writable store it was.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(SmallOptions(path)));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(2));
}

TEST(RocksDbStateStoreReadOnlyTest, MissingDirectoryIsNotFoundAndNotCreated) {
  const std::string path = NewTestDirectory();
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.read_only = true;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::create_directories(path);
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
  EXPECT_TRUE(std::filesystem::is_empty(path));
}

TEST(RocksDbStateStoreReadOnlyTest, KeepsTheAcknowledgedEpochCheck) {
  const std::string path = NewTestDirectory();
  WriteTwoCheckpoints(path);
  {
    std::fstream file(path + "/ACKNOWLEDGED_EPOCH",
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(10);
    file.put('\x5a');
  }
  const std::map<std::string, std::string> before = DirectoryBytes(path);
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.read_only = true;
  EXPECT_THAT(
      RocksDbStateStore::Open(options),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("ACKNOWLEDGED_EPOCH")));
  EXPECT_EQ(DirectoryBytes(path), before);
}

TEST(RocksDbStateStoreReadOnlyTest, MissingCurrentIsDataLoss) {
  const std::string path = NewTestDirectory();
  WriteTwoCheckpoints(path);
  std::filesystem::remove(path + "/CURRENT");
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.read_only = true;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("CURRENT")));
}

TEST(RocksDbStateStoreTest, ApproximateVnodeBytesFollowsTheData) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, RocksDbStateStore::Open(SmallOptions(NewTestDirectory())));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  // Vnode 0: 4000 rows, vnode 1: 400, vnode 2: none; ~110 bytes each.
  const std::string value(100, 'v');
  for (int i = 0; i < 4000; ++i) {
    BACKFILL_ASSERT_OK(
        local->Insert(0, absl::StrCat("key", 100000 + i), value));
    if (i < 400) {
      BACKFILL_ASSERT_OK(
          local->Insert(1, absl::StrCat("key", 100000 + i), value));
    }
  }
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  // In the memtable only. RocksDB's memtable estimate is coarse (sampled:
  // one run in a few hundred gave both vnodes the same figure), so only its
  // direction is checked here; the table-file figures below are exact enough
  // to compare.
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> bytes,
                                store->ApproximateVnodeBytes(kTable, 4));
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_GE(bytes[0], bytes[1]);
  EXPECT_GT(bytes[0], 0u);
  EXPECT_EQ(bytes[2], 0u);
  // In table files.
  BACKFILL_ASSERT_OK(store->Compact());
  BACKFILL_ASSERT_OK_AND_ASSIGN(bytes, store->ApproximateVnodeBytes(kTable, 4));
  EXPECT_GT(bytes[1], 0u);
  EXPECT_GT(bytes[0], 5 * bytes[1]);
  EXPECT_LT(bytes[0], 20 * bytes[1]);
  EXPECT_EQ(bytes[2], 0u);
  EXPECT_EQ(bytes[3], 0u);
  // Another table holds nothing.
  BACKFILL_ASSERT_OK_AND_ASSIGN(bytes,
                                store->ApproximateVnodeBytes(kTable + 1, 2));
  EXPECT_EQ(bytes, (std::vector<uint64_t>{0, 0}));
  EXPECT_THAT(
      store->ApproximateVnodeBytes(kTable, 0),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("vnode_count 0")));
}

// Stats are RocksDB's own figures: they follow writes, flushes, table files
// and reads, and a reopened store starts its counters again.
TEST(RocksDbStateStoreTest, StatsComeFromRocksDb) {
  const std::string directory = NewTestDirectory();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, RocksDbStateStore::Open(SmallOptions(directory)));
  const RocksDbStats opened = store->Stats();  // Only the format version.
  EXPECT_LT(opened.written_bytes, 100u);
  EXPECT_EQ(opened.sst_files, 0u);
  EXPECT_EQ(opened.sst_bytes, 0u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  const std::string value(100, 'v');
  for (int i = 0; i < 1000; ++i) {
    BACKFILL_ASSERT_OK(
        local->Insert(0, absl::StrCat("key", 100000 + i), value));
  }
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  const RocksDbStats written = store->Stats();
  EXPECT_GT(written.written_bytes, opened.written_bytes + 1000u * 100u);
  EXPECT_GT(written.memtable_bytes, 0u);
  EXPECT_EQ(written.sst_files, 0u);
  EXPECT_EQ(written.sst_bytes, 0u);

  BACKFILL_ASSERT_OK(store->Compact());
  const RocksDbStats compacted = store->Stats();
  EXPECT_GE(compacted.sst_files, 1u);
  EXPECT_GT(compacted.sst_bytes, 1000u * 100u / 10);  // Compressed or not.
  EXPECT_GT(compacted.flush_written_bytes, 0u);
  EXPECT_EQ(compacted.pending_compaction_bytes, 0u);
  BACKFILL_ASSERT_OK(store->WaitForBackgroundWork(absl::Minutes(1)));
  const RocksDbStats idle = store->Stats();
  EXPECT_EQ(idle.running_flushes + idle.running_compactions, 0u);
  EXPECT_EQ(idle.pending_flushes + idle.pending_compactions, 0u);

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, store->NewIterator(kTable, 0, PkRange::All(), Epoch(1)));
  uint64_t rows = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++rows;
  BACKFILL_ASSERT_OK(it->status());
  EXPECT_EQ(rows, 1000u);
  it.reset();
  const RocksDbStats read = store->Stats();
  EXPECT_GT(read.read_bytes, 1000u * 100u);
  EXPECT_GT(read.block_cache_hits + read.block_cache_misses, 0u);

  local.reset();
  store.reset();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      store, RocksDbStateStore::Open(SmallOptions(directory)));
  const RocksDbStats reopened = store->Stats();
  EXPECT_LT(reopened.written_bytes, opened.written_bytes + 100u);
  EXPECT_EQ(reopened.sst_files, compacted.sst_files);
  EXPECT_EQ(reopened.sst_bytes, compacted.sst_bytes);
}

// With a block cache, table files keep their index and bloom filter blocks
// in it, so what an open table holds outside the cache does not grow with
// the table; with none, every open file holds its whole index and filter.
TEST(RocksDbStateStoreTest, IndexAndFilterBlocksLiveInTheBlockCache) {
  const std::string directory = NewTestDirectory();
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto store, RocksDbStateStore::Open(SmallOptions(directory)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    // 200k keys: about 250 KB of bloom filter at 10 bits per key.
    for (int i = 0; i < 200'000; ++i) {
      BACKFILL_ASSERT_OK(
          local->Insert(0, absl::StrFormat("key%08d", i), "value"));
    }
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    BACKFILL_ASSERT_OK(store->Compact());
  }
  // Opens the table files with or without a cache and reads one key.
  auto open_and_read = [&](size_t cache_bytes) {
    RocksDbStateStoreOptions options = SmallOptions(directory);
    options.block_cache_bytes = cache_bytes;
    absl::StatusOr<std::unique_ptr<RocksDbStateStore>> store =
        RocksDbStateStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return RocksDbStats{};
    absl::StatusOr<std::optional<std::string>> value =
        (*store)->Get(TableKey{kTable, 0, "key00123456"}, Epoch::Max());
    EXPECT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(value.value_or(std::nullopt),
              std::optional<std::string>("value"));
    return (*store)->Stats();
  };
  const RocksDbStats uncached = open_and_read(0);
  const RocksDbStats cached = open_and_read(1 << 20);
  EXPECT_GT(uncached.table_readers_bytes, 200u << 10);
  EXPECT_LT(cached.table_readers_bytes, uncached.table_readers_bytes / 8);
  EXPECT_EQ(uncached.block_cache_bytes, 0u);
  // The index and filter blocks the read loaded are in the cache.
  EXPECT_GT(cached.block_cache_bytes, 100u << 10);
  EXPECT_LE(cached.block_cache_bytes, 1u << 20);
}

TEST(RocksDbStateStoreTest, OpenValidatesOptions) {
  RocksDbStateStoreOptions options;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("path")));
  options = SmallOptions(NewTestDirectory());
  options.write_buffer_bytes = 10;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("write_buffer_bytes")));
  options = SmallOptions(NewTestDirectory());
  options.create_if_missing = false;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(RocksDbStateStoreTest, ChurnStaysBoundedAfterCompaction) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, RocksDbStateStore::Open(SmallOptions(NewTestDirectory())));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  constexpr int kKeys = 500;
  for (int round = 0; round < 60; ++round) {
    WriteEpoch(*store, *local, kKeys, std::string(100, 'a' + round % 26));
    if (round % 20 == 19) {
      BACKFILL_ASSERT_OK(store->Compact());
    }
  }
  BACKFILL_ASSERT_OK(store->Compact());
  // One version per live key survives.
  EXPECT_THAT(store->CountStoredVersions(), IsOkAndHolds(kKeys));
  const Epoch committed = store->CommittedEpoch(kTable);
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, committed),
              IsOkAndHolds(Optional(std::string(100, 'a' + 59 % 26))));
  // Historical reads below the GC horizon are refused, not wrong.
  EXPECT_THAT(
      store->Get(TableKey{kTable, 0, "key7"}, Epoch(2)),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("horizon")));
  // Delete everything: tombstones go too.
  WriteEpoch(*store, *local, kKeys, "", /*delete_instead=*/true);
  BACKFILL_ASSERT_OK(store->Compact());
  EXPECT_THAT(store->CountStoredVersions(), IsOkAndHolds(0));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, Epoch::Max()),
              IsOkAndHolds(std::nullopt));
}

TEST(RocksDbStateStoreTest, HistoricalReadsBelowTheReopenedEpochAreRefused) {
  const std::string path = NewTestDirectory();
  Epoch first_committed;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 10, "old");
    first_committed = store->CommittedEpoch(kTable);
    WriteEpoch(*store, *local, 10, "new");
    // The old versions are gone from disk.
    BACKFILL_ASSERT_OK(store->Compact());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(SmallOptions(path)));
  const Epoch committed = store->CommittedEpoch(kTable);
  ASSERT_GT(committed, first_committed);
  // This process never compacted, but an earlier one did: a read at the
  // first epoch would see "new" (or nothing) where "old" was; it is refused.
  EXPECT_THAT(
      store->Get(TableKey{kTable, 0, "key7"}, first_committed),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("horizon")));
  EXPECT_THAT(store->NewIterator(kTable, 0, PkRange::All(), first_committed),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, committed),
              IsOkAndHolds(Optional(std::string("new"))));
}

// A local instance's point reads keep one RocksDB iterator open between
// calls; a checkpoint in the middle of an epoch moves the sealed data the
// instance used to find in memory into RocksDB, and the next read sees it.
TEST(RocksDbStateStoreTest, LocalPointReadsFollowACheckpointWithinAnEpoch) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, RocksDbStateStore::Open(SmallOptions(NewTestDirectory())));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "first"));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
  // Opens the reader's iterator before epoch 1 is in RocksDB.
  EXPECT_THAT(local->Get(0, "b"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(local->Get(0, "a"), IsOkAndHolds(Optional(std::string("first"))));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  // Now only RocksDB has "a".
  EXPECT_THAT(local->Get(0, "a"), IsOkAndHolds(Optional(std::string("first"))));
  EXPECT_THAT(local->Get(0, "b"), IsOkAndHolds(std::nullopt));
  // A tombstone and an overwrite, both read back from RocksDB.
  BACKFILL_ASSERT_OK(local->Delete(0, "a"));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "second"));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
  EXPECT_THAT(local->Get(1, "z"), IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
  EXPECT_THAT(local->Get(0, "a"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(local->Get(0, "b"),
              IsOkAndHolds(Optional(std::string("second"))));
  // A pk that is a prefix of a stored one, and one that extends it.
  EXPECT_THAT(local->Get(0, ""), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(local->Get(0, "bb"), IsOkAndHolds(std::nullopt));
}

// A pinned epoch's versions survive compactions, in this process and in the
// next one, until the release is checkpointed.
TEST(RocksDbStateStoreTest, EpochPinsOutliveCompactionsAndReopens) {
  const std::string path = NewTestDirectory();
  Epoch old_epoch;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 10, "old");
    old_epoch = store->CommittedEpoch(kTable);
    BACKFILL_ASSERT_OK(store->PinEpoch("snapshot", old_epoch));
    WriteEpoch(*store, *local, 10, "new");  // Persists the pin.
    BACKFILL_ASSERT_OK(store->Compact());
    EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, old_epoch),
                IsOkAndHolds(Optional(std::string("old"))));
  }
  Epoch release_epoch;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    EXPECT_THAT(store->EpochPins(), ElementsAre(Pair("snapshot", old_epoch)));
    BACKFILL_ASSERT_OK(store->Compact());
    EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, old_epoch),
                IsOkAndHolds(Optional(std::string("old"))));
    // Pinning it again (a resuming owner) is allowed.
    BACKFILL_ASSERT_OK(store->PinEpoch("snapshot", old_epoch));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    release_epoch = Epoch(store->CommittedEpoch(kTable).value() + 1);
    BACKFILL_ASSERT_OK(local->Init(EpochPair{release_epoch, Epoch(0)}));
    BACKFILL_ASSERT_OK(store->ReleaseEpochPin("snapshot", release_epoch));
    WriteEpoch(*store, *local, 10, "newer");  // Commits the release.
    EXPECT_THAT(store->EpochPins(), IsEmpty());
    BACKFILL_ASSERT_OK(store->Compact());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(SmallOptions(path)));
  EXPECT_THAT(store->EpochPins(), IsEmpty());
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, old_epoch),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(
      store->PinEpoch("snapshot", old_epoch),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("horizon")));
}

// A pin is persisted by a checkpoint; one taken (or moved) after the last
// checkpoint is lost with the process, and the persisted epoch stays held
// until a checkpoint persists the move.
TEST(RocksDbStateStoreTest, EpochPinMovesAreDurableOnlyWithACheckpoint) {
  const std::string path = NewTestDirectory();
  Epoch first;
  Epoch second;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 10, "first");
    first = store->CommittedEpoch(kTable);
    BACKFILL_ASSERT_OK(store->PinEpoch("owner", first));
    WriteEpoch(*store, *local, 10, "second");
    second = store->CommittedEpoch(kTable);
    BACKFILL_ASSERT_OK(store->PinEpoch("owner", second));  // Not persisted.
    BACKFILL_ASSERT_OK(store->PinEpoch("unpersisted", second));
    // The compaction must keep what `first` sees: the store still holds
    // that pin for the next process.
    BACKFILL_ASSERT_OK(store->Compact());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(SmallOptions(path)));
  EXPECT_THAT(store->EpochPins(), ElementsAre(Pair("owner", first)));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key3"}, first),
              IsOkAndHolds(Optional(std::string("first"))));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key3"}, second),
              IsOkAndHolds(Optional(std::string("second"))));
}

// Bad bytes where a pin is kept: the open fails, naming the owner.
TEST(RocksDbStateStoreTest, ACorruptEpochPinFailsTheOpen) {
  const std::string path = NewTestDirectory();
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(SmallOptions(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 1, "v");
    BACKFILL_ASSERT_OK(store->PinEpoch("owner", Epoch(1)));
    WriteEpoch(*store, *local, 1, "v");
  }
  {
    // FORMAT.md: a row version is its tag byte, then the row bytes; a pin's
    // row must be an 8-byte epoch.
    std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
    ASSERT_TRUE(raw_rocksdb_for_test::Open(path, 1 << 20, &raw).ok());
    const std::string key = EncodeFullKey(
        FullKey{TableKey{kEpochPinTableId, 0, "owner"}, Epoch(2)});
    ASSERT_TRUE(raw->db
                    ->Put(rocksdb::WriteOptions(), raw->data(), key,
                          std::string("\x01"
                                      "bad",
                                      4))
                    .ok());
  }
  EXPECT_THAT(RocksDbStateStore::Open(SmallOptions(path)),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("owner"), HasSubstr("8-byte"))));
}

// A queue-like workload: every epoch inserts new keys and deletes the
// previous epoch's. Only a full compaction removes the tombstones; returns
// the stored versions once automatic GC (if enabled) is idle.
uint64_t StoredVersionsAfterQueueChurn(RocksDbStateStoreOptions options,
                                       GcStats* stats) {
  auto store = RocksDbStateStore::Open(options);
  EXPECT_THAT(store.status(), IsOk());
  if (!store.ok()) return 0;
  // Another table's rows in their own SST files: automatic compactions of
  // the churned table no longer include every file, so they are not "full"
  // and cannot drop tombstones; only the GC's full compactions can.
  {
    auto other = (*store)->NewLocalStateStore(kTable + 1, {});
    EXPECT_THAT(other.status(), IsOk());
    if (!other.ok()) return 0;
    EXPECT_THAT((*other)->Init(EpochPair::ForInitial(Epoch(1))), IsOk());
    WriteEpoch(**store, **other, 5000, std::string(40, 'o'));
    EXPECT_THAT((*store)->Compact(), IsOk());
  }
  auto local = (*store)->NewLocalStateStore(kTable, {});
  EXPECT_THAT(local.status(), IsOk());
  if (!local.ok()) return 0;
  EXPECT_THAT((*local)->Init(EpochPair{Epoch(2), Epoch(1)}), IsOk());
  constexpr int kKeys = 500;
  constexpr int kRounds = 40;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kKeys; ++i) {
      EXPECT_THAT((*local)->Insert(0, absl::StrCat("r", round, "k", i),
                                   std::string(40, 'v')),
                  IsOk());
      if (round > 0) {
        EXPECT_THAT((*local)->Delete(0, absl::StrCat("r", round - 1, "k", i)),
                    IsOk());
      }
    }
    const Epoch epoch = (*local)->epoch();
    EXPECT_THAT((*local)->Seal(EpochPair{Epoch(epoch.value() + 1), epoch}),
                IsOk());
    EXPECT_THAT((*store)->Checkpoint(epoch), IsOk());
  }
  *stats = (*store)->WaitForGc();
  auto versions = (*store)->CountStoredVersions();
  EXPECT_THAT(versions.status(), IsOk());
  return versions.value_or(0);
}

constexpr int kDeletedInARun = 200'000;  // More than a 131,072-entry window.

// Writes kDeletedInARun rows and compacts them to the bottom, then deletes
// them and inserts twice as many other rows in one epoch, reopens (the log
// is flushed into one level-0 file: the tombstones, then the new rows) and
// waits for RocksDB's background work. `versions`: the versions stored then.
void StoreADenseRunOfDeletes(double compaction_fraction, uint64_t* versions) {
  RocksDbStateStoreOptions options = SmallOptions(NewTestDirectory());
  options.write_buffer_bytes = 64 << 20;  // One flush: at the reopen.
  options.gc_tombstone_fraction = 0;      // No automatic full compaction.
  options.tombstone_compaction_fraction = compaction_fraction;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    for (int i = 0; i < kDeletedInARun; ++i) {
      BACKFILL_ASSERT_OK(local->Insert(0, absl::StrFormat("a%06d", i), "v"));
    }
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    BACKFILL_ASSERT_OK(store->Compact());
    for (int i = 0; i < kDeletedInARun; ++i) {
      BACKFILL_ASSERT_OK(local->Delete(0, absl::StrFormat("a%06d", i)));
      for (int j = 0; j < 2; ++j) {
        BACKFILL_ASSERT_OK(
            local->Insert(0, absl::StrFormat("b%06d%d", i, j), "v"));
      }
    }
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  BACKFILL_ASSERT_OK(store->WaitForBackgroundWork(absl::Minutes(1)));
  EXPECT_EQ(store->WaitForGc().full_compactions, 0u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(*versions, store->CountStoredVersions());
}

// The tombstones are a third of that file, under the compaction fraction of
// one half, but a run of them fills a window: the file is marked for
// compaction, and RocksDB compacts it into the level of the rows it deletes
// and drops them, with no full compaction. Without the deletion trigger
// every version stays.
TEST(RocksDbStateStoreTest,
     ADenseRunOfDeletesIsCompactedWithoutFullCompaction) {
  uint64_t untriggered = 0;
  StoreADenseRunOfDeletes(0, &untriggered);
  EXPECT_EQ(untriggered, 4u * kDeletedInARun);  // Rows, tombstones, rows.
  uint64_t triggered = 0;
  StoreADenseRunOfDeletes(0.5, &triggered);
  // The deleted rows are gone (their tombstones may be too).
  EXPECT_LE(triggered, 3u * kDeletedInARun);
}

TEST(RocksDbStateStoreTest, AutomaticGcRemovesTombstonesUnderChurn) {
  // 39 rounds x 500 tombstones were written; 500 + 5000 rows are live.
  RocksDbStateStoreOptions disabled = SmallOptions(NewTestDirectory());
  disabled.gc_tombstone_fraction = 0;
  // Nor deletion-triggered compactions, which would drop shadowed puts.
  disabled.tombstone_compaction_fraction = 0;
  GcStats stats;
  // Only the set-up's explicit Compact(); all 19 500 tombstones stay.
  EXPECT_GE(StoredVersionsAfterQueueChurn(disabled, &stats),
            5000u + 39 * 500 + 500);
  EXPECT_EQ(stats.full_compactions, 1u);

  RocksDbStateStoreOptions automatic = SmallOptions(NewTestDirectory());
  automatic.gc_min_tombstones = 2000;
  automatic.gc_tombstone_fraction = 0.2;
  const uint64_t versions = StoredVersionsAfterQueueChurn(automatic, &stats);
  EXPECT_GE(stats.full_compactions, 2u);
  EXPECT_THAT(stats.last_error, IsOk());
  // The live rows plus what was written since the last full compaction
  // (below the trigger of max(2000, 0.2 x stored) tombstones, plus the rows
  // they delete): far below the 25 000 versions kept without GC.
  EXPECT_LE(versions, 5000u + 500 + 3 * 4000);
  EXPECT_LT(stats.pending_tombstones, 4000u);
}

TEST(RocksDbStateStoreTest, TombstonesFromBeforeARestartStillTriggerGc) {
  const std::string path = NewTestDirectory();
  RocksDbStateStoreOptions disabled = SmallOptions(path);
  disabled.gc_tombstone_fraction = 0;
  // Nor deletion-triggered compactions (the file flushed at open is half
  // tombstones), which would drop the shadowed puts counted below.
  disabled.tombstone_compaction_fraction = 0;
  constexpr int kKeys = 3000;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(disabled));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, kKeys, std::string(40, 'v'));
    WriteEpoch(*store, *local, kKeys, "", /*delete_instead=*/true);
  }
  {
    // The count is rebuilt from the table files (the log replayed at open
    // is flushed into one), whatever the GC options.
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(disabled));
    const GcStats stats = store->WaitForGc();
    EXPECT_EQ(stats.pending_tombstones, static_cast<uint64_t>(kKeys));
    EXPECT_EQ(stats.full_compactions, 0u);
    // The tombstones and the puts they shadow: the flush at open filters
    // nothing (it runs before the committed epoch is known).
    EXPECT_THAT(store->CountStoredVersions(), IsOkAndHolds(2 * kKeys));
  }
  RocksDbStateStoreOptions automatic = SmallOptions(path);
  automatic.gc_min_tombstones = 1000;
  automatic.gc_tombstone_fraction = 0.2;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(automatic));
  // Over the trigger at open: a full compaction runs by itself and drops
  // every tombstone (nothing is live).
  const GcStats stats = store->WaitForGc();
  EXPECT_EQ(stats.full_compactions, 1u);
  EXPECT_THAT(stats.last_error, IsOk());
  EXPECT_EQ(stats.pending_tombstones, 0u);
  EXPECT_THAT(store->CountStoredVersions(), IsOkAndHolds(0));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key7"}, Epoch::Max()),
              IsOkAndHolds(std::nullopt));
}

TEST(RocksDbStateStoreTest, OpenValidatesGcOptions) {
  RocksDbStateStoreOptions options = SmallOptions(NewTestDirectory());
  options.gc_tombstone_fraction = 1.5;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gc_tombstone_fraction")));
  options.gc_tombstone_fraction = 0.2;
  options.gc_min_tombstones = 0;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gc_min_tombstones")));
}

TEST(RocksDbStateStoreTest, PinnedIteratorKeepsItsVersionsAcrossCompaction) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, RocksDbStateStore::Open(SmallOptions(NewTestDirectory())));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  WriteEpoch(*store, *local, 50, "old");
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, store->NewIterator(kTable, 0, PkRange::All(), Epoch(1)));
  for (int round = 0; round < 5; ++round) WriteEpoch(*store, *local, 50, "new");
  BACKFILL_ASSERT_OK(store->Compact());
  // The pin held GC at epoch 1: a new read at epoch 1 still works.
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key1"}, Epoch(1)),
              IsOkAndHolds(Optional(std::string("old"))));
  int rows = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_EQ(it->value(), "old");
    ++rows;
  }
  BACKFILL_EXPECT_OK(it->status());
  EXPECT_EQ(rows, 50);
  it.reset();
  BACKFILL_ASSERT_OK(store->Compact());
  EXPECT_THAT(store->CountStoredVersions(), IsOkAndHolds(50));
}

// Fails the chosen operation on files whose name contains `file_part`.
class ToggleFaultInjector final : public FaultInjector {
 public:
  absl::Status Check(Operation operation,
                     absl::string_view file_name) override {
    MutexLock lock(&mu_);
    if (failing_.has_value() && *failing_ == operation &&
        absl::StrContains(std::string(file_name), file_part_)) {
      ++failures_;
      return absl::InternalError("disk on fire");
    }
    return absl::OkStatus();
  }
  void Fail(Operation operation, std::string file_part) {
    MutexLock lock(&mu_);
    failing_ = operation;
    file_part_ = std::move(file_part);
  }
  void Heal() {
    MutexLock lock(&mu_);
    failing_.reset();
  }
  int failures() {
    MutexLock lock(&mu_);
    return failures_;
  }

 private:
  Mutex mu_;
  std::optional<Operation> failing_ ABSL_GUARDED_BY(mu_);
  std::string file_part_ ABSL_GUARDED_BY(mu_);
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
};

struct FaultCase {
  FaultInjector::Operation operation;
  const char* file_part;
  const char* name;
};

class RocksDbCheckpointFaultTest : public ::testing::TestWithParam<FaultCase> {
};

TEST_P(RocksDbCheckpointFaultTest, FailedCheckpointLosesNothingCommitted) {
  const std::string path = NewTestDirectory();
  auto injector = std::make_shared<ToggleFaultInjector>();
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.sync_on_checkpoint = true;
  options.fault_injector = injector;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 20, "committed");
    BACKFILL_ASSERT_OK(local->Insert(0, "key1", "failed"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
    injector->Fail(GetParam().operation, GetParam().file_part);
    EXPECT_THAT(store->Checkpoint(Epoch(2)),
                StatusIs(absl::StatusCode::kInternal,
                         HasSubstr("checkpoint write of epoch 2")));
    EXPECT_GT(injector->failures(), 0);
    injector->Heal();
    // The store refuses further checkpoints clearly...
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(4), Epoch(3)}));
    EXPECT_THAT(
        store->Checkpoint(Epoch(3)),
        StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("reopen")));
    // ...and still serves committed reads.
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(1));
    EXPECT_THAT(store->Get(TableKey{kTable, 0, "key1"}, Epoch::Max()),
                IsOkAndHolds(Optional(std::string("committed"))));
  }
  options.fault_injector = nullptr;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  // Either the failed checkpoint is wholly absent or (a sync failed after the
  // write) wholly present; never partial, never less than epoch 1.
  const Epoch committed = store->CommittedEpoch(kTable);
  ASSERT_GE(committed, Epoch(1));
  ASSERT_LE(committed, Epoch(2));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key1"}, Epoch::Max()),
              IsOkAndHolds(Optional(std::string(
                  committed == Epoch(1) ? "committed" : "failed"))));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key2"}, Epoch::Max()),
              IsOkAndHolds(Optional(std::string("committed"))));
}

INSTANTIATE_TEST_SUITE_P(
    Faults, RocksDbCheckpointFaultTest,
    ::testing::Values(
        FaultCase{FaultInjector::Operation::kWrite, ".log", "WalWrite"},
        FaultCase{FaultInjector::Operation::kSync, ".log", "WalSync"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) {
      return std::string(info.param.name);
    });

TEST(RocksDbStateStoreFaultTest, ReadFailuresSurfaceAndHeal) {
  const std::string path = NewTestDirectory();
  auto injector = std::make_shared<ToggleFaultInjector>();
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.fault_injector = injector;
  options.block_cache_bytes = 0;  // Every read goes to the file.
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    WriteEpoch(*store, *local, 100, "v");
    BACKFILL_ASSERT_OK(store->Compact());  // Into SST files.
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  injector->Fail(FaultInjector::Operation::kRead, ".sst");
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key1"}, Epoch(1)),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("read of table 3 vnode 0 pk key1")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, store->NewIterator(kTable, 0, PkRange::All(), Epoch(1)));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kInternal,
                                     HasSubstr("scan of table 3 vnode 0")));
  it->SeekToFirst();  // Sticky.
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());
  injector->Heal();
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "key1"}, Epoch(1)),
              IsOkAndHolds(Optional(std::string("v"))));
}

TEST(RocksDbStateStoreFaultTest, OpenFailureNamesTheOperation) {
  const std::string path = NewTestDirectory();
  { BACKFILL_ASSERT_OK(RocksDbStateStore::Open(SmallOptions(path)).status()); }
  auto injector = std::make_shared<ToggleFaultInjector>();
  injector->Fail(FaultInjector::Operation::kRead, "MANIFEST");
  RocksDbStateStoreOptions options = SmallOptions(path);
  options.fault_injector = injector;
  EXPECT_THAT(RocksDbStateStore::Open(options),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("open " + path)));
  injector->Heal();
  EXPECT_THAT(RocksDbStateStore::Open(options), IsOk());
}

}  // namespace
}  // namespace backfill
