// The persisted format, checked from outside: what the store writes is what
// FORMAT.md says, and corrupt bytes on disk surface as DataLoss naming the
// table and key, never a crash.
#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/raw_rocksdb_for_test.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/format_", ::getpid(),
                      "_", counter.fetch_add(1));
}

// Writes one row (table 9, vnode 2, pk "pk", "value") at epoch 1.
void WriteOneRow(const std::string& path) {
  RocksDbStateStoreOptions options;
  options.path = path;
  auto store = RocksDbStateStore::Open(options);
  ASSERT_THAT(store, IsOk());
  auto local = (*store)->NewLocalStateStore(9, {});
  ASSERT_THAT(local, IsOk());
  ASSERT_THAT((*local)->Init(EpochPair::ForInitial(Epoch(1))), IsOk());
  ASSERT_THAT((*local)->Insert(2, "pk", "value"), IsOk());
  ASSERT_THAT((*local)->Delete(2, "gone"), IsOk());
  ASSERT_THAT((*local)->Seal(EpochPair{Epoch(2), Epoch(1)}), IsOk());
  ASSERT_THAT((*store)->Checkpoint(Epoch(1)), IsOk());
}

TEST(RocksDbFormatTest, OnDiskLayoutMatchesFormatMd) {
  const std::string path = NewTestDirectory();
  WriteOneRow(path);
  std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
  ASSERT_TRUE(raw_rocksdb_for_test::Open(path, 1 << 20, &raw).ok());
  std::string value;
  ASSERT_TRUE(
      raw->db
          ->Get(rocksdb::ReadOptions(), raw->meta(), "committed_epoch", &value)
          .ok());
  EXPECT_EQ(value, std::string("\0\0\0\0\0\0\0\1", 8));
  ASSERT_TRUE(
      raw->db
          ->Get(rocksdb::ReadOptions(), raw->meta(), "format_version", &value)
          .ok());
  EXPECT_EQ(value, "backfill.state_store.v1");
  std::unique_ptr<rocksdb::Iterator> it(
      raw->db->NewIterator(rocksdb::ReadOptions(), raw->data()));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(),
            EncodeFullKey(FullKey{TableKey{9, 2, "gone"}, Epoch(1)}));
  EXPECT_EQ(it->value().ToString(), std::string("\0", 1));  // Tombstone.
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(
      it->key().ToString(),
      std::string("\0\0\0\x09\0\x02pk\xff\xff\xff\xff\xff\xff\xff\xfe", 16));
  EXPECT_EQ(it->value().ToString(), "\x01value");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

struct Corruption {
  std::string name;
  std::string key;
  std::string value;
  std::string message;
};

class RocksDbCorruptionTest : public ::testing::TestWithParam<Corruption> {};

TEST_P(RocksDbCorruptionTest, IsDataLossNamingTableAndKey) {
  const std::string path = NewTestDirectory();
  WriteOneRow(path);
  {
    std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
    ASSERT_TRUE(raw_rocksdb_for_test::Open(path, 1 << 20, &raw).ok());
    ASSERT_TRUE(raw->db
                    ->Put(rocksdb::WriteOptions(), raw->data(), GetParam().key,
                          GetParam().value)
                    .ok());
  }
  RocksDbStateStoreOptions options;
  options.path = path;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  auto it = store->NewIterator(9, 2, PkRange::All(), Epoch(1));
  ASSERT_THAT(it, IsOk());
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
  }
  EXPECT_THAT((*it)->status(), StatusIs(absl::StatusCode::kDataLoss,
                                        HasSubstr(GetParam().message)));
  auto local = store->NewLocalStateStore(9, {});
  ASSERT_THAT(local, IsOk());
  ASSERT_THAT((*local)->Init(EpochPair{Epoch(2), Epoch(1)}), IsOk());
  EXPECT_THAT((*local)->Get(2, "pk0"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("table 9")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RocksDbCorruptionTest,
    ::testing::Values(
        Corruption{"UnknownValueTag",
                   EncodeFullKey(FullKey{TableKey{9, 2, "pk0"}, Epoch(1)}),
                   "\x07junk", "unknown tag 7) of table 9 vnode 2 pk pk0"},
        Corruption{"EmptyValue",
                   EncodeFullKey(FullKey{TableKey{9, 2, "pk0"}, Epoch(1)}), "",
                   "(empty) of table 9 vnode 2 pk pk0"},
        Corruption{"TombstoneWithPayload",
                   EncodeFullKey(FullKey{TableKey{9, 2, "pk0"}, Epoch(1)}),
                   std::string("\0x", 2), "of table 9 vnode 2 pk pk0"},
        // A key no checkpoint writes (epoch suffix all ones = epoch 0).
        // (Shorter keys sort outside every vnode's bounds: never read.)
        Corruption{
            "KeyWithEpochZero",
            std::string("\0\0\0\x09\0\x02pk0", 9) + std::string(8, '\xff'),
            "\x01v",
            "corrupt state store key (epoch 0 is never written) "
            "while reading table 9 vnode 2"}),
    [](const ::testing::TestParamInfo<Corruption>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace backfill
