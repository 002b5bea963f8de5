// The ACKNOWLEDGED_EPOCH record and the MANIFEST prefix check, on files
// written by hand: no database.
#include "storage/rocksdb/acknowledged_epoch.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/base/internal/endian.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;

const AcknowledgedEpoch kAcknowledged{Epoch(42), 5, 1234};

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/acknowledged_", ::getpid(),
                   "_", counter.fetch_add(1));
  std::filesystem::create_directories(dir);
  return dir;
}
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

// The record of earlier versions, written from FORMAT.md.
std::string V1Record(const AcknowledgedEpoch& acknowledged) {
  std::string bytes = "bfackv1\n";
  char field[8];
  for (uint64_t value :
       {acknowledged.epoch.value(), acknowledged.manifest_number,
        acknowledged.manifest_size}) {
    absl::big_endian::Store64(field, value);
    bytes.append(field, 8);
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes)
    hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  absl::big_endian::Store64(field, hash);
  bytes.append(field, 8);
  return bytes;
}

TEST(AcknowledgedEpochTest, LayoutIsPinned) {
  const std::string bytes = EncodeAcknowledgedEpoch(kAcknowledged);
  ASSERT_EQ(bytes.size(), kAcknowledgedEpochSize);
  EXPECT_EQ(bytes.substr(0, 8), "bfackv2\n");
  EXPECT_EQ(absl::big_endian::Load64(bytes.data() + 8), 42u);
  EXPECT_EQ(absl::big_endian::Load64(bytes.data() + 16), 5u);
  EXPECT_EQ(absl::big_endian::Load64(bytes.data() + 24), 1234u);
  // CRC-32 (zlib / IEEE): the record of all-zero fields has this one.
  const std::string zero = EncodeAcknowledgedEpoch({});
  EXPECT_EQ(absl::big_endian::Load32(zero.data() + 32), 0xa48a5970u)
      << std::hex << absl::big_endian::Load32(zero.data() + 32);
}

TEST(AcknowledgedEpochTest, RoundTripsAndReadsTheOlderRecord) {
  EXPECT_THAT(DecodeAcknowledgedEpoch(EncodeAcknowledgedEpoch(kAcknowledged)),
              IsOkAndHolds(Optional(kAcknowledged)));
  EXPECT_THAT(DecodeAcknowledgedEpoch(V1Record(kAcknowledged)),
              IsOkAndHolds(Optional(kAcknowledged)));
  EXPECT_THAT(DecodeAcknowledgedEpoch(""), IsOkAndHolds(std::nullopt));
}

TEST(AcknowledgedEpochTest, EveryDamagedByteIsDataLoss) {
  for (const std::string& good :
       {EncodeAcknowledgedEpoch(kAcknowledged), V1Record(kAcknowledged)}) {
    for (size_t i = 0; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] ^= 0x10;
      EXPECT_THAT(DecodeAcknowledgedEpoch(bad),
                  StatusIs(absl::StatusCode::kDataLoss,
                           HasSubstr("ACKNOWLEDGED_EPOCH is corrupt")))
          << "byte " << i << " of a " << good.size() << "-byte record";
    }
    EXPECT_THAT(DecodeAcknowledgedEpoch(good.substr(0, good.size() - 1)),
                StatusIs(absl::StatusCode::kDataLoss));
    EXPECT_THAT(DecodeAcknowledgedEpoch(good + "x"),
                StatusIs(absl::StatusCode::kDataLoss));
  }
}

TEST(AcknowledgedEpochTest, ReadsWhatTheWriterWrote) {
  const std::string dir = NewTestDirectory();
  EXPECT_THAT(ReadAcknowledgedEpoch(dir), IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto writer,
                                AcknowledgedEpochWriter::Open(dir));
  // Created, not yet written: empty, checks nothing.
  EXPECT_THAT(ReadAcknowledgedEpoch(dir), IsOkAndHolds(std::nullopt));
  writer->Write(kAcknowledged);
  EXPECT_THAT(ReadAcknowledgedEpoch(dir),
              IsOkAndHolds(Optional(kAcknowledged)));
  writer->Write(AcknowledgedEpoch{Epoch(43), 6, 99});
  EXPECT_THAT(ReadAcknowledgedEpoch(dir),
              IsOkAndHolds(Optional(AcknowledgedEpoch{Epoch(43), 6, 99})));
  WriteFile(dir + "/ACKNOWLEDGED_EPOCH", "garbage");
  EXPECT_THAT(ReadAcknowledgedEpoch(dir),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("open " + dir +
                                 ": ACKNOWLEDGED_EPOCH is corrupt (7 bytes")));
}

TEST(AcknowledgedEpochTest, WriterReplacesAnOlderRecordWhole) {
  const std::string dir = NewTestDirectory();
  const std::string path = dir + "/ACKNOWLEDGED_EPOCH";
  WriteFile(path, V1Record(kAcknowledged));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto writer,
                                AcknowledgedEpochWriter::Open(dir));
  EXPECT_THAT(ReadAcknowledgedEpoch(dir),
              IsOkAndHolds(Optional(kAcknowledged)));
  writer->Write(AcknowledgedEpoch{Epoch(50), 7, 10});
  EXPECT_EQ(ReadFile(path).size(), kAcknowledgedEpochSize);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  writer->Write(AcknowledgedEpoch{Epoch(51), 7, 20});  // In place now.
  EXPECT_THAT(ReadAcknowledgedEpoch(dir),
              IsOkAndHolds(Optional(AcknowledgedEpoch{Epoch(51), 7, 20})));
}

// A RocksDB log-format record (crc not checked here) of `length` bytes.
std::string Record(size_t length, uint8_t type = 1) {
  std::string record(7 + length, 'r');
  record[0] = record[1] = record[2] = record[3] = 0;
  record[4] = static_cast<char>(length & 0xff);
  record[5] = static_cast<char>(length >> 8);
  record[6] = static_cast<char>(type);
  return record;
}

// A directory whose CURRENT names MANIFEST-000005 holding `manifest`.
std::string ManifestDir(const std::string& manifest) {
  const std::string dir = NewTestDirectory();
  WriteFile(dir + "/CURRENT", "MANIFEST-000005\n");
  WriteFile(dir + "/MANIFEST-000005", manifest);
  return dir;
}

TEST(CheckManifestPrefixTest, CompleteRecordsPass) {
  const std::string manifest = Record(10) + Record(300) + Record(0);
  const std::string dir = ManifestDir(manifest + "torn tail");
  EXPECT_THAT(CheckManifestPrefix(dir, {Epoch(3), 5, manifest.size()}), IsOk());
  // Records skip the trailer of a block (< 7 bytes left).
  const std::string blocks =
      Record(32768 - 7 - 3) + std::string(3, '\0') + Record(5);
  EXPECT_THAT(
      CheckManifestPrefix(ManifestDir(blocks), {Epoch(3), 5, blocks.size()}),
      IsOk());
}

TEST(CheckManifestPrefixTest, DamagedRecordsAreDataLoss) {
  const std::string good = Record(10) + Record(20);
  std::string bad_type = good;
  bad_type[17 + 6] = 0;
  EXPECT_THAT(
      CheckManifestPrefix(ManifestDir(bad_type), {Epoch(3), 5, good.size()}),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("MANIFEST-000005 is damaged at offset 17 "
                               "(record type 0)"),
                     HasSubstr("checkpoint 3 saw its first 44 bytes"),
                     HasSubstr("ACKNOWLEDGED_EPOCH"))));
  std::string long_length = good;
  long_length[17 + 5] = 0x7f;
  EXPECT_THAT(
      CheckManifestPrefix(ManifestDir(long_length), {Epoch(3), 5, good.size()}),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("damaged at offset 17 (record length")));
  EXPECT_THAT(
      CheckManifestPrefix(ManifestDir(good.substr(0, 30)),
                          {Epoch(3), 5, good.size()}),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the file is shorter")));
}

TEST(CheckManifestPrefixTest, OnlyTheAcknowledgedManifestIsChecked) {
  const std::string dir = ManifestDir("not a log at all");
  EXPECT_THAT(CheckManifestPrefix(dir, {Epoch(3), 6, 16}), IsOk());  // Newer.
  EXPECT_THAT(CheckManifestPrefix(dir, {Epoch(3), 0, 16}), IsOk());  // Unknown.
  EXPECT_THAT(CheckManifestPrefix(NewTestDirectory(), {Epoch(3), 5, 16}),
              IsOk());  // No CURRENT: RocksDB reports it.
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
