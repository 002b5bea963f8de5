// Database: opening, metadata and RAII ownership (needs a database: RocksDB
// in TEST_TMPDIR).
#include "storage/rocksdb/database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

RocksDbStateStoreOptions Options() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  RocksDbStateStoreOptions options;
  options.path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/database_",
                              ::getpid(), "_", counter.fetch_add(1));
  return options;
}

std::shared_ptr<GcEpochs> Gc() { return std::make_shared<GcEpochs>(Epoch(0)); }

TEST(DatabaseTest, NewDatabaseHasTheFormatVersionAndEpochZero) {
  const RocksDbStateStoreOptions options = Options();
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto database, Database::Open(options, Gc()));
    EXPECT_THAT(database->LoadCommittedEpoch(), IsOkAndHolds(Epoch(0)));
    std::string version;
    ASSERT_TRUE(database->db()
                    .Get(rocksdb::ReadOptions(), database->meta(),
                         kFormatVersionKey, &version)
                    .ok());
    EXPECT_EQ(version, "backfill.state_store.v1");
    EXPECT_EQ(database->data()->GetName(), "data");
    ASSERT_TRUE(database->db()
                    .Put(rocksdb::WriteOptions(), database->meta(),
                         kCommittedEpochKey, EncodeCommittedEpoch(Epoch(7)))
                    .ok());
  }
  // Destroying it closed the database (RocksDB's lock is free again).
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto reopened, Database::Open(options, Gc()));
  EXPECT_THAT(reopened->LoadCommittedEpoch(), IsOkAndHolds(Epoch(7)));
}

TEST(DatabaseTest, CommittedEpochIsBigEndian) {
  EXPECT_EQ(EncodeCommittedEpoch(Epoch(0x0102030405060708)),
            std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
}

TEST(DatabaseTest, AnotherFormatIsFailedPrecondition) {
  const RocksDbStateStoreOptions options = Options();
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto database, Database::Open(options, Gc()));
  ASSERT_TRUE(database->db()
                  .Put(rocksdb::WriteOptions(), database->meta(),
                       kFormatVersionKey, "something.else.v9")
                  .ok());
  EXPECT_THAT(database->LoadCommittedEpoch(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("unsupported format version "
                                 "something.else.v9")));
  ASSERT_TRUE(database->db()
                  .Put(rocksdb::WriteOptions(), database->meta(),
                       kFormatVersionKey, kFormatVersion)
                  .ok());
  ASSERT_TRUE(database->db()
                  .Put(rocksdb::WriteOptions(), database->meta(),
                       kCommittedEpochKey, "short")
                  .ok());
  EXPECT_THAT(database->LoadCommittedEpoch(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("committed epoch has 5 bytes")));
}

TEST(DatabaseTest, MissingDatabaseIsNotFoundWithoutCreateIfMissing) {
  RocksDbStateStoreOptions options = Options();
  options.create_if_missing = false;
  EXPECT_THAT(
      Database::Open(options, Gc()),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("open " + options.path)));
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
