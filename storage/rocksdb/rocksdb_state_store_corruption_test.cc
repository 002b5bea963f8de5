// Corrupt and missing files of a RocksDbStateStore directory are DataLoss
// from Open (naming the file), never a store that opens without the data;
// an injected full disk is ResourceExhausted. The black-box version over the
// real command is tests/e2e/backfill_corruption_test.sh.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr TableId kTable = 3;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/rocksdb_corruption_",
                      ::getpid(), "_", counter.fetch_add(1));
}

RocksDbStateStoreOptions Options(std::string path) {
  RocksDbStateStoreOptions options;
  options.path = std::move(path);
  options.block_cache_bytes = 0;          // Every read reaches the file.
  options.write_buffer_bytes = 16 << 20;  // One write-ahead log.
  return options;
}

// Checkpoints epochs 1..num_epochs, each writing 200 keys of vnode 0 with
// ~100-byte values; leaves the newest data in the write-ahead log unless
// `compact`, which moves everything into table files.
void WriteStore(const std::string& path, int num_epochs, bool compact) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(Options(path)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                store->NewLocalStateStore(kTable, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
  for (int e = 1; e <= num_epochs; ++e) {
    for (int i = 0; i < 200; ++i) {
      BACKFILL_ASSERT_OK(local->Insert(0, absl::StrCat("key", i),
                                       absl::StrCat(std::string(100, 'v'), e)));
    }
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(e + 1), Epoch(e)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(e)));
  }
  if (compact) {
    BACKFILL_ASSERT_OK(store->Compact());
  }
}

std::vector<std::string> FilesEndingIn(const std::string& path,
                                       const std::string& suffix) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(entry.path().string());
    }
  }
  return files;
}

// Flips `length` bytes at `fraction` of the file's size.
void Corrupt(const std::string& file, double fraction, int length = 8) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(stream.good()) << file;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(file));
  const int64_t offset =
      std::max<int64_t>(0, std::min<int64_t>(size * fraction, size - length));
  std::string bytes(length, '\0');
  stream.seekg(offset);
  stream.read(bytes.data(), length);
  for (char& c : bytes) c = static_cast<char>(c ^ 0x5a);
  stream.seekp(offset);
  stream.write(bytes.data(), length);
}

TEST(RocksDbCorruptionTest, CorruptWriteAheadLogRecordIsDataLoss) {
  // RocksDB's default recovery mode would stop replaying at the corrupt
  // record and open at an older epoch, silently without the rest.
  for (double fraction : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE(fraction);
    const std::string path = NewTestDirectory();
    WriteStore(path, 20, /*compact=*/false);
    const std::vector<std::string> logs = FilesEndingIn(path, ".log");
    ASSERT_EQ(logs.size(), 1u);
    Corrupt(logs[0], fraction);
    EXPECT_THAT(
        RocksDbStateStore::Open(Options(path)),
        StatusIs(
            absl::StatusCode::kDataLoss,
            AllOf(HasSubstr("open " + path),
                  HasSubstr(
                      std::filesystem::path(logs[0]).filename().string()))));
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

TEST(RocksDbCorruptionTest, TornTailOfTheLogIsNotAnError) {
  // A crash while checkpoint 20 was being written: its log record is cut
  // short and it was never acknowledged (ACKNOWLEDGED_EPOCH still says 19).
  // The incomplete record is dropped; every acknowledged one is kept.
  const std::string path = NewTestDirectory();
  WriteStore(path, 19, /*compact=*/false);
  const std::string acknowledged_19 = ReadFile(path + "/ACKNOWLEDGED_EPOCH");
  ASSERT_EQ(acknowledged_19.size(), 36u);
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(Options(path)));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(20), Epoch(19)}));
    BACKFILL_ASSERT_OK(local->Insert(0, "key0", "torn"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(21), Epoch(20)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(20)));
  }
  const std::vector<std::string> logs = FilesEndingIn(path, ".log");
  ASSERT_EQ(logs.size(), 1u);
  std::filesystem::resize_file(logs[0],
                               std::filesystem::file_size(logs[0]) - 10);
  WriteFile(path + "/ACKNOWLEDGED_EPOCH", acknowledged_19);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(Options(path)));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(19));
}

TEST(RocksDbCorruptionTest, LostAcknowledgedCheckpointIsDataLoss) {
  // The same cut, but checkpoint 20 had been acknowledged: not a torn write
  // but damage (e.g. a corrupt length in the log's last record, which RocksDB
  // cannot tell from a torn write). RocksDB would open at 19; Open refuses.
  const std::string path = NewTestDirectory();
  WriteStore(path, 20, /*compact=*/false);
  const std::vector<std::string> logs = FilesEndingIn(path, ".log");
  ASSERT_EQ(logs.size(), 1u);
  std::filesystem::resize_file(logs[0],
                               std::filesystem::file_size(logs[0]) - 10);
  EXPECT_THAT(
      RocksDbStateStore::Open(Options(path)),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("restored checkpoint 19 but checkpoint 20 "
                               "had been acknowledged"),
                     HasSubstr("ACKNOWLEDGED_EPOCH"))));
}

// The offsets of the record headers of a RocksDB log-format file.
std::vector<size_t> RecordOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  size_t offset = 0;
  while (offset + 7 <= bytes.size()) {
    const size_t block_left = 32768 - offset % 32768;
    if (block_left < 7) {
      offset += block_left;
      continue;
    }
    offsets.push_back(offset);
    offset += 7 + (static_cast<uint8_t>(bytes[offset + 4]) |
                   (static_cast<size_t>(static_cast<uint8_t>(bytes[offset + 5]))
                    << 8));
  }
  return offsets;
}

TEST(RocksDbCorruptionTest, LostManifestTailIsDataLoss) {
  // A corrupt length in the MANIFEST's next-to-last record, beyond the end
  // of the file: RocksDB takes it for a torn write and drops it and the
  // last one (here: the edit that gave the data column family its table
  // file, and the empty one that enabling compactions writes after it),
  // opening without that data.
  const std::string path = NewTestDirectory();
  WriteStore(path, 10, /*compact=*/false);
  { BACKFILL_ASSERT_OK(RocksDbStateStore::Open(Options(path)).status()); }
  std::string manifest;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    if (entry.path().filename().string().rfind("MANIFEST-", 0) == 0) {
      manifest = entry.path().string();
    }
  }
  std::string bytes = ReadFile(manifest);
  const std::vector<size_t> offsets = RecordOffsets(bytes);
  ASSERT_GE(offsets.size(), 2u);
  const size_t last = offsets[offsets.size() - 2];
  bytes[last + 5] = static_cast<char>(0x7f);  // Length beyond the end.
  WriteFile(manifest, bytes);
  EXPECT_THAT(
      RocksDbStateStore::Open(Options(path)),
      StatusIs(
          absl::StatusCode::kDataLoss,
          AllOf(HasSubstr(std::filesystem::path(manifest).filename().string() +
                          " is damaged at offset " + std::to_string(last)),
                HasSubstr("ACKNOWLEDGED_EPOCH"))));
}

TEST(RocksDbCorruptionTest, AcknowledgedEpochFileItself) {
  const std::string path = NewTestDirectory();
  WriteStore(path, 3, /*compact=*/false);
  const std::string file = path + "/ACKNOWLEDGED_EPOCH";
  const std::string good = ReadFile(file);
  Corrupt(file, 0.5, 2);
  EXPECT_THAT(RocksDbStateStore::Open(Options(path)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("ACKNOWLEDGED_EPOCH is corrupt")));
  WriteFile(file, good.substr(0, 10));
  EXPECT_THAT(RocksDbStateStore::Open(Options(path)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("ACKNOWLEDGED_EPOCH is corrupt")));
  // Empty: created, then a crash before the first checkpoint.
  WriteFile(file, "");
  EXPECT_THAT(RocksDbStateStore::Open(Options(path)), IsOk());
  // Absent (an older store): nothing to compare.
  std::filesystem::remove(file);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(Options(path)));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(3));
}

// The record earlier versions wrote ("bfackv1\n", FNV-1a-64; FORMAT.md),
// without a MANIFEST (number 0: nothing to check there).
std::string V1AcknowledgedEpoch(uint64_t epoch) {
  std::string bytes = "bfackv1\n";
  for (uint64_t value : {epoch, uint64_t{0}, uint64_t{0}}) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      bytes.push_back(static_cast<char>(value >> shift));
    }
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  for (int shift = 56; shift >= 0; shift -= 8) {
    bytes.push_back(static_cast<char>(hash >> shift));
  }
  return bytes;
}

TEST(RocksDbCorruptionTest, OlderAcknowledgedEpochRecordIsStillChecked) {
  const std::string path = NewTestDirectory();
  WriteStore(path, 3, /*compact=*/false);
  const std::string file = path + "/ACKNOWLEDGED_EPOCH";
  WriteFile(file, V1AcknowledgedEpoch(5));
  EXPECT_THAT(RocksDbStateStore::Open(Options(path)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("restored checkpoint 3 but checkpoint 5 had "
                                 "been acknowledged")));
  WriteFile(file, V1AcknowledgedEpoch(3));
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                  RocksDbStateStore::Open(Options(path)));
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(3));
  }
  EXPECT_EQ(ReadFile(file).size(), 36u);  // Rewritten as the current record.
}

TEST(RocksDbCorruptionTest,
     CorruptTableFileBlockIsDataLossAtOpenWhenVerifying) {
  const std::string path = NewTestDirectory();
  WriteStore(path, 20, /*compact=*/true);
  const std::vector<std::string> tables = FilesEndingIn(path, ".sst");
  ASSERT_FALSE(tables.empty());
  std::string largest = tables[0];
  for (const std::string& t : tables) {
    if (std::filesystem::file_size(t) > std::filesystem::file_size(largest)) {
      largest = t;
    }
  }
  Corrupt(largest, 0.3);  // A data block.
  RocksDbStateStoreOptions options = Options(path);
  options.verify_checksums_on_open = true;
  EXPECT_THAT(
      RocksDbStateStore::Open(options),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("verify checksums"),
                     HasSubstr(
                         std::filesystem::path(largest).filename().string()))));
  // Without the full check Open succeeds, and the read that reaches the
  // block fails with DataLoss instead of returning bad or no rows.
  options.verify_checksums_on_open = false;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, store->NewIterator(kTable, 0, PkRange::All(), Epoch(20)));
  int rows = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++rows;
  EXPECT_LT(rows, 200);
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kDataLoss,
                                     HasSubstr("checksum mismatch")));
}

TEST(RocksDbCorruptionTest, CorruptManifestAndCurrentAreDataLoss) {
  for (const char* file : {"MANIFEST", "CURRENT"}) {
    SCOPED_TRACE(file);
    const std::string path = NewTestDirectory();
    WriteStore(path, 5, /*compact=*/true);
    std::string target;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().filename().string().rfind(file, 0) == 0) {
        target = entry.path().string();
      }
    }
    ASSERT_FALSE(target.empty());
    Corrupt(target, 0.5, 4);
    EXPECT_THAT(RocksDbStateStore::Open(Options(path)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(file)));
  }
}

TEST(RocksDbCorruptionTest, MissingCurrentIsDataLossNotANewDatabase) {
  const std::string path = NewTestDirectory();
  WriteStore(path, 5, /*compact=*/true);
  ASSERT_TRUE(std::filesystem::remove(std::filesystem::path(path) / "CURRENT"));
  for (const std::string& log : FilesEndingIn(path, ".log")) {
    std::filesystem::remove(log);
  }
  EXPECT_THAT(RocksDbStateStore::Open(Options(path)),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("CURRENT file is missing"),
                             HasSubstr("MANIFEST-"), HasSubstr(".sst"))));
  // Nothing was created over the old files.
  EXPECT_FALSE(
      std::filesystem::exists(std::filesystem::path(path) / "CURRENT"));
  // An empty or absent directory still makes a new store, and so does one
  // where creating it crashed after the first MANIFEST, before CURRENT.
  EXPECT_THAT(RocksDbStateStore::Open(Options(NewTestDirectory())), IsOk());
  const std::string crashed = NewTestDirectory();
  std::filesystem::create_directories(crashed);
  WriteFile(crashed + "/MANIFEST-000001", "partial");
  EXPECT_THAT(RocksDbStateStore::Open(Options(crashed)), IsOk());
}

// A file the CURRENT -> MANIFEST chain needs but that is gone is DataLoss
// naming it, writable or read-only: RocksDB reports a missing MANIFEST as an
// I/O error (which read as a failing disk, Internal) and a missing table
// file under its legacy name ("000015.ldb", never in the directory).
TEST(RocksDbCorruptionTest, AMissingFileTheDatabaseNeedsIsDataLossNamingIt) {
  for (const bool read_only : {false, true}) {
    SCOPED_TRACE(read_only ? "read-only" : "writable");
    {
      const std::string path = NewTestDirectory();
      WriteStore(path, 5, /*compact=*/true);
      WriteFile(path + "/CURRENT", "MANIFEST-000099\n");
      RocksDbStateStoreOptions options = Options(path);
      options.read_only = read_only;
      EXPECT_THAT(
          RocksDbStateStore::Open(options),
          StatusIs(absl::StatusCode::kDataLoss,
                   AllOf(HasSubstr("open " + path),
                         HasSubstr("MANIFEST-000099"), HasSubstr("missing"))));
    }
    {
      const std::string path = NewTestDirectory();
      WriteStore(path, 5, /*compact=*/true);
      const std::vector<std::string> tables = FilesEndingIn(path, ".sst");
      ASSERT_FALSE(tables.empty());
      ASSERT_TRUE(std::filesystem::remove(tables[0]));
      RocksDbStateStoreOptions options = Options(path);
      options.read_only = read_only;
      EXPECT_THAT(
          RocksDbStateStore::Open(options),
          StatusIs(absl::StatusCode::kDataLoss,
                   HasSubstr(absl::StrCat(
                       "table file ",
                       std::filesystem::path(tables[0]).filename().string(),
                       ", which the MANIFEST lists, is missing"))));
    }
  }
}

class FullDisk final : public FaultInjector {
 public:
  absl::Status Check(Operation operation, absl::string_view file) override {
    MutexLock lock(&mu_);
    if (full_ && operation == Operation::kWrite &&
        file.find(".log") != absl::string_view::npos) {
      return absl::ResourceExhaustedError("disk full");
    }
    return absl::OkStatus();
  }
  void Fill() {
    MutexLock lock(&mu_);
    full_ = true;
  }

 private:
  Mutex mu_;
  bool full_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(RocksDbCorruptionTest, FullDiskIsResourceExhaustedAndLosesNothing) {
  const std::string path = NewTestDirectory();
  auto injector = std::make_shared<FullDisk>();
  RocksDbStateStoreOptions options = Options(path);
  options.fault_injector = injector;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto local,
                                  store->NewLocalStateStore(kTable, {}));
    BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(1))));
    BACKFILL_ASSERT_OK(local->Insert(0, "k", "committed"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    BACKFILL_ASSERT_OK(local->Insert(0, "k", "lost"));
    BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
    injector->Fill();
    EXPECT_THAT(store->Checkpoint(Epoch(2)),
                StatusIs(absl::StatusCode::kResourceExhausted,
                         AllOf(HasSubstr("checkpoint write of epoch 2"),
                               HasSubstr("No space left on device"))));
  }
  options.fault_injector = nullptr;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(1));
  EXPECT_THAT(store->Get(TableKey{kTable, 0, "k"}, Epoch::Max()),
              IsOkAndHolds(Optional(std::string("committed"))));
}

}  // namespace
}  // namespace backfill
