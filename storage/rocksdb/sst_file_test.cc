// WriteSst and SstReader: round trips, version resolution over several
// files (checked against a std::map model on random data), bloom filters,
// the block cache, and corrupt bytes (DataLoss naming the object).
#include "storage/rocksdb/sst_file.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/internal/mem_table.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using storage_internal::CommitBatch;
using storage_internal::MemTable;
using storage_internal::SetMemTableKey;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Pair;

using Files = std::vector<std::shared_ptr<const SstReader>>;

// A batch of (vnode, pk, value or nullopt for a tombstone).
CommitBatch Batch(TableId table, uint64_t epoch,
                  std::vector<std::tuple<VirtualNode, std::string,
                                         std::optional<std::string>>>
                      entries) {
  auto data = std::make_shared<MemTable>();
  for (auto& [vnode, pk, value] : entries) {
    std::string key;
    SetMemTableKey(vnode, pk, &key);
    (*data)[key] = value;
  }
  return CommitBatch{table, Epoch(epoch), std::move(data)};
}

std::shared_ptr<const SstReader> Open(const std::vector<CommitBatch>& batches,
                                      const std::string& name,
                                      SstReaderOptions options = {}) {
  absl::StatusOr<std::string> bytes = WriteSst(batches, {}, nullptr);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::shared_ptr<const SstReader>> reader =
      SstReader::OpenBytes(name, *bytes, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  return *reader;
}

std::vector<std::pair<std::string, std::string>> Scan(const Files& files,
                                                      TableId table,
                                                      VirtualNode vnode,
                                                      const PkRange& range,
                                                      uint64_t epoch) {
  std::unique_ptr<StateStoreIterator> it =
      NewSstsIterator(files, table, vnode, range, Epoch(epoch), true, nullptr);
  std::vector<std::pair<std::string, std::string>> rows;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rows.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return rows;
}

TEST(SstFileTest, WritesInfoAndReadsBackVersions) {
  SstFileInfo info;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::string bytes,
      WriteSst({Batch(7, 3, {{1, "a", "a3"}, {1, "b", "b3"}, {2, "a", "x"}}),
                Batch(7, 5, {{1, "a", std::nullopt}, {1, "c", "c5"}})},
               {}, &info));
  EXPECT_EQ(info.num_entries, 5u);
  EXPECT_EQ(info.num_tombstones, 1u);
  EXPECT_EQ(info.min_epoch, Epoch(3));
  EXPECT_EQ(info.max_epoch, Epoch(5));
  EXPECT_EQ(info.size_bytes, bytes.size());
  EXPECT_EQ(info.smallest_key, EncodeFullKey(FullKey{{7, 1, "a"}, Epoch(5)}));
  EXPECT_EQ(info.largest_key, EncodeFullKey(FullKey{{7, 2, "a"}, Epoch(3)}));

  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader,
                                SstReader::OpenBytes("sst/one", bytes, {}));
  EXPECT_EQ(reader->name(), "sst/one");
  EXPECT_EQ(reader->info().num_entries, 5u);
  EXPECT_EQ(reader->info().smallest_key, info.smallest_key);
  EXPECT_EQ(reader->info().largest_key, info.largest_key);
  const Files files = {reader};
  EXPECT_THAT(GetFromSsts(files, 7, 1, "a", Epoch(2)),
              IsOkAndHolds(std::nullopt));
  EXPECT_THAT(GetFromSsts(files, 7, 1, "a", Epoch(4)),
              IsOkAndHolds(Optional(std::string("a3"))));
  EXPECT_THAT(GetFromSsts(files, 7, 1, "a", Epoch(5)),
              IsOkAndHolds(std::nullopt));  // The tombstone hides it.
  EXPECT_THAT(GetFromSsts(files, 7, 2, "a", Epoch(9)),
              IsOkAndHolds(Optional(std::string("x"))));
  EXPECT_THAT(GetFromSsts(files, 8, 1, "a", Epoch(9)),
              IsOkAndHolds(std::nullopt));

  EXPECT_THAT(Scan(files, 7, 1, PkRange::All(), 4),
              ElementsAre(Pair("a", "a3"), Pair("b", "b3")));
  EXPECT_THAT(Scan(files, 7, 1, PkRange::All(), 5),
              ElementsAre(Pair("b", "b3"), Pair("c", "c5")));
  EXPECT_THAT(Scan(files, 7, 1, PkRange::Between("b", "c"), 5),
              ElementsAre(Pair("b", "b3")));
  EXPECT_THAT(Scan(files, 7, 2, PkRange::All(), 5),
              ElementsAre(Pair("a", "x")));
  EXPECT_THAT(Scan(files, 7, 3, PkRange::All(), 5), ElementsAre());
}

TEST(SstFileTest, SameVersionInTwoBatchesTheLaterWins) {
  auto reader = Open(
      {Batch(1, 4, {{0, "k", "first"}}), Batch(1, 4, {{0, "k", "second"}})},
      "sst/dup");
  EXPECT_EQ(reader->info().num_entries, 1u);
  EXPECT_THAT(GetFromSsts({reader}, 1, 0, "k", Epoch(4)),
              IsOkAndHolds(Optional(std::string("second"))));
}

TEST(SstFileTest, ResolvesVersionsAcrossFiles) {
  // Three commits: epochs 2, 4, 6. Any file order gives the same answers.
  auto first = Open({Batch(1, 2, {{0, "a", "a2"}, {0, "b", "b2"}})}, "s/1");
  auto second =
      Open({Batch(1, 4, {{0, "a", std::nullopt}, {0, "c", "c4"}})}, "s/2");
  auto third = Open({Batch(1, 6, {{0, "a", "a6"}, {0, "b", "b6"}})}, "s/3");
  for (const Files& files :
       {Files{first, second, third}, Files{third, first, second}}) {
    EXPECT_THAT(GetFromSsts(files, 1, 0, "a", Epoch(3)),
                IsOkAndHolds(Optional(std::string("a2"))));
    EXPECT_THAT(GetFromSsts(files, 1, 0, "a", Epoch(5)),
                IsOkAndHolds(std::nullopt));
    EXPECT_THAT(GetFromSsts(files, 1, 0, "a", Epoch(6)),
                IsOkAndHolds(Optional(std::string("a6"))));
    EXPECT_THAT(Scan(files, 1, 0, PkRange::All(), 5),
                ElementsAre(Pair("b", "b2"), Pair("c", "c4")));
    EXPECT_THAT(Scan(files, 1, 0, PkRange::All(), 6),
                ElementsAre(Pair("a", "a6"), Pair("b", "b6"), Pair("c", "c4")));
    EXPECT_THAT(Scan(files, 1, 0, PkRange::From(std::string("b\0", 2)),
                     6),  // after "b"
                ElementsAre(Pair("c", "c4")));
  }
}

TEST(SstFileTest, RandomVersionsMatchAModel) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  // model[(vnode, pk)][epoch] = value or nullopt.
  std::map<std::pair<VirtualNode, std::string>,
           std::map<uint64_t, std::optional<std::string>>>
      model;
  Files files;
  uint64_t epoch = 1;
  for (int file = 0; file < 4; ++file) {
    std::vector<CommitBatch> batches;
    for (int batch = 0; batch < 3; ++batch, ++epoch) {
      std::vector<
          std::tuple<VirtualNode, std::string, std::optional<std::string>>>
          entries;
      for (int i = 0; i < 30; ++i) {
        const VirtualNode vnode = rng() % 3;
        std::string pk(rng() % 3, 'a');
        pk.push_back(static_cast<char>(rng() % 4));  // includes '\0'
        std::optional<std::string> value;
        if (rng() % 4 != 0) value = absl::StrCat("v", rng() % 1000);
        entries.emplace_back(vnode, pk, value);
      }
      CommitBatch commit = Batch(9, epoch, entries);
      for (const auto& [key, value] : *commit.data) {
        model[{storage_internal::MemTableVnode(key),
               std::string(storage_internal::MemTablePk(key))}][epoch] = value;
      }
      batches.push_back(std::move(commit));
    }
    files.push_back(Open(batches, absl::StrCat("sst/", file)));
  }
  std::shuffle(files.begin(), files.end(), rng);
  for (uint64_t read = 1; read <= epoch; ++read) {
    for (VirtualNode vnode = 0; vnode < 3; ++vnode) {
      std::vector<std::pair<std::string, std::string>> expected;
      for (const auto& [key, versions] : model) {
        if (key.first != vnode) continue;
        std::optional<std::string> visible;
        auto it = versions.upper_bound(read);
        if (it != versions.begin()) visible = std::prev(it)->second;
        EXPECT_THAT(GetFromSsts(files, 9, vnode, key.second, Epoch(read)),
                    IsOkAndHolds(visible))
            << "vnode " << vnode << " pk " << key.second << " read " << read;
        if (visible.has_value()) expected.emplace_back(key.second, *visible);
      }
      EXPECT_EQ(Scan(files, 9, vnode, PkRange::All(), read), expected)
          << "vnode " << vnode << " read " << read;
    }
  }
}

TEST(SstFileTest, OpensALocalFile) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::string bytes,
      WriteSst({Batch(2, 8, {{5, "pk", "v"}})}, {}, nullptr));
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/local.sst");
  std::ofstream(path, std::ios::binary) << bytes;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reader,
                                SstReader::OpenFile("file-object", path, {}));
  EXPECT_THAT(GetFromSsts({reader}, 2, 5, "pk", Epoch(8)),
              IsOkAndHolds(Optional(std::string("v"))));
  EXPECT_THAT(
      SstReader::OpenFile("missing-object", path + ".nope", {}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing-object")));
}

TEST(SstFileTest, BloomFilterSkipsFilesWithoutTheKey) {
  std::vector<std::tuple<VirtualNode, std::string, std::optional<std::string>>>
      entries;
  for (int i = 0; i < 200; ++i) {
    entries.emplace_back(0, absl::StrCat("key", i), "v");
  }
  auto reader = Open({Batch(1, 3, entries)}, "sst/bloom");
  EXPECT_EQ(reader->bloom_filter_skips(), 0u);
  EXPECT_THAT(GetFromSsts({reader}, 1, 0, "key7", Epoch(3)),
              IsOkAndHolds(Optional(std::string("v"))));
  EXPECT_EQ(reader->bloom_filter_skips(), 0u);
  int skipped_lookups = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t before = reader->bloom_filter_skips();
    // Inside the file's key range, so only the filter can skip it.
    EXPECT_THAT(
        GetFromSsts({reader}, 1, 0, absl::StrCat("key1", i, "x"), Epoch(3)),
        IsOkAndHolds(std::nullopt));
    if (reader->bloom_filter_skips() > before) ++skipped_lookups;
  }
  EXPECT_GE(skipped_lookups, 90);  // ~1% false positives at 10 bits/key.
}

TEST(SstFileTest, SharedBlockCacheHoldsReadBlocks) {
  std::shared_ptr<SstBlockCache> cache = SstBlockCache::Create(1 << 20);
  auto reader =
      Open({Batch(1, 3, {{0, "a", std::string(1000, 'x')}})}, "sst/cached",
           SstReaderOptions{.block_cache = cache, .verify_checksums = true});
  EXPECT_THAT(GetFromSsts({reader}, 1, 0, "a", Epoch(3)),
              IsOkAndHolds(Optional(std::string(1000, 'x'))));
  EXPECT_GT(cache->usage_bytes(), 1000u);
}

TEST(SstFileTest, NothingToWriteIsInvalidArgument) {
  EXPECT_THAT(WriteSst({}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(WriteSst({Batch(1, 0, {{0, "a", "v"}})}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SstFileTest, CorruptBytesAreDataLossNamingTheObject) {
  std::mt19937 rng(42);  // Incompressible values: many data blocks.
  std::vector<std::tuple<VirtualNode, std::string, std::optional<std::string>>>
      entries;
  for (int i = 0; i < 300; ++i) {
    std::string value(64, ' ');
    for (char& c : value) c = static_cast<char>(rng());
    entries.emplace_back(0, absl::StrCat("key", 1000 + i), value);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::string bytes,
                                WriteSst({Batch(1, 3, entries)}, {}, nullptr));
  ASSERT_GT(bytes.size(), 16000u);
  EXPECT_THAT(SstReader::OpenBytes("sst/garbage", "not an sst at all", {}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("sst/garbage")));
  EXPECT_THAT(
      SstReader::OpenBytes("sst/short", bytes.substr(0, bytes.size() / 2), {}),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("sst/short")));
  std::string flipped = bytes;
  flipped[bytes.size() / 3] ^= 0x40;  // Inside a middle data block.
  EXPECT_THAT(SstReader::OpenBytes("sst/flipped", flipped, {}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("sst/flipped")));
  // Without the check at open, the reads of the bad block fail instead.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto lazy, SstReader::OpenBytes(
                     "sst/flipped-lazy", flipped,
                     {.block_cache = nullptr, .verify_checksums = false}));
  int failed_gets = 0;
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<std::optional<std::string>> row =
        GetFromSsts({lazy}, 1, 0, absl::StrCat("key", 1000 + i), Epoch(3));
    if (!row.ok()) {
      EXPECT_THAT(row.status(), StatusIs(absl::StatusCode::kDataLoss,
                                         HasSubstr("sst/flipped-lazy")));
      ++failed_gets;
    } else {
      EXPECT_EQ(*row, std::get<2>(entries[i]));
    }
  }
  EXPECT_GT(failed_gets, 0);
  EXPECT_LT(failed_gets, 300);
  std::unique_ptr<StateStoreIterator> it =
      NewSstsIterator({lazy}, 1, 0, PkRange::All(), Epoch(3), true, nullptr);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kDataLoss,
                                     HasSubstr("sst/flipped-lazy")));
}

// CompactSsts applies the GC rule: per key, versions older than the newest
// one <= safe go; that one too if it is a tombstone and the compaction is
// full. Reads at epochs >= safe see the same rows before and after.
TEST(CompactSstsTest, DropsWhatNoReadAtOrAfterSafeSees) {
  const Files inputs = {
      Open({Batch(1, 2, {{0, "a", "a2"}, {0, "b", "b2"}, {0, "c", "c2"}})},
           "sst/1"),
      Open({Batch(1, 4, {{0, "a", "a4"}, {0, "b", std::nullopt}})}, "sst/2"),
      Open({Batch(1, 6, {{0, "a", "a6"}, {0, "c", std::nullopt}})}, "sst/3")};
  for (const bool full : {false, true}) {
    SCOPED_TRACE(full ? "full" : "partial");
    SstFileInfo info;
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        std::string bytes, CompactSsts(inputs, Epoch(5), full, {}, &info));
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const SstReader> merged,
                                  SstReader::OpenBytes("merged", bytes, {}));
    // a: a6, a4 (a2 shadowed); b: tombstone@4 (dropped if full); c: c2 and
    // its tombstone@6 (> safe: kept).
    EXPECT_EQ(info.num_entries, full ? 4u : 5u);
    EXPECT_EQ(info.num_tombstones, full ? 1u : 2u);
    EXPECT_EQ(info.min_epoch, Epoch(2));
    EXPECT_EQ(info.max_epoch, Epoch(6));
    EXPECT_EQ(merged->info().num_entries, info.num_entries);
    EXPECT_EQ(merged->info().smallest_key, info.smallest_key);
    EXPECT_EQ(merged->info().largest_key, info.largest_key);
    for (uint64_t epoch : {5, 6, 7}) {
      EXPECT_EQ(Scan({merged}, 1, 0, PkRange::All(), epoch),
                Scan(inputs, 1, 0, PkRange::All(), epoch))
          << epoch;
    }
  }
  // Everything deleted at or below safe: nothing survives a full compaction.
  const Files deleted = {
      Open({Batch(1, 2, {{0, "a", "a2"}})}, "sst/4"),
      Open({Batch(1, 3, {{0, "a", std::nullopt}})}, "sst/5")};
  SstFileInfo info;
  EXPECT_THAT(CompactSsts(deleted, Epoch(3), true, {}, &info),
              IsOkAndHolds(""));
  EXPECT_EQ(info.num_entries, 0u);
}

}  // namespace
}  // namespace backfill
