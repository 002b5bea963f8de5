// The raw committed reader against the state tables (and a std::map model)
// on random data with overwritten and deleted keys, compactions, and
// versions above the committed epoch planted straight into RocksDB; corrupt
// bytes are DataLoss naming the table and the key.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "serde/random_datum.h"
#include "serde/vnode_bitmap.h"
#include "storage/committed_rows.h"
#include "storage/rocksdb/raw_rocksdb_for_test.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/state_table.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/committed_reader_",
                      ::getpid(), "_", counter.fetch_add(1));
}

// id (pk, descending, stored only in the key), v, w.
TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 5;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true},
                     {"w", DataType::kInt32, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 8;
  catalog.value_indices = {1, 2};
  return catalog;
}

std::unique_ptr<RocksDbStateStore> OpenStore(const std::string& path) {
  RocksDbStateStoreOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<RocksDbStateStore>> store =
      RocksDbStateStore::Open(options);
  EXPECT_THAT(store.status(), testing::IsOk());
  return store.ok() ? *std::move(store) : nullptr;
}

struct ReadRow {
  VirtualNode vnode;
  std::string pk;
  Row row;
};

std::vector<ReadRow> ReadRaw(RocksDbStateStore& store) {
  std::vector<ReadRow> rows;
  absl::StatusOr<std::unique_ptr<CommittedRowIterator>> it =
      store.NewRawCommittedRowIterator(Table(),
                                       store.CommittedEpoch(Table().table_id));
  EXPECT_THAT(it.status(), testing::IsOk());
  if (!it.ok()) return rows;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    rows.push_back({(*it)->vnode(), std::string((*it)->pk()), (*it)->row()});
  }
  EXPECT_THAT((*it)->status(), testing::IsOk());
  return rows;
}

// Through a state table at the epoch after the committed one.
std::vector<ReadRow> ReadThroughStateTable(RocksDbStateStore& store) {
  std::vector<ReadRow> rows;
  absl::StatusOr<std::unique_ptr<StateTable>> table =
      StateTable::Create(Table(), store, VnodeBitmap::All(Table().vnode_count));
  EXPECT_THAT(table.status(), testing::IsOk());
  if (!table.ok()) return rows;
  const Epoch committed = store.CommittedEpoch(Table().table_id);
  EXPECT_THAT(
      (*table)->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}),
      testing::IsOk());
  for (int vnode = 0; vnode < Table().vnode_count; ++vnode) {
    absl::StatusOr<std::unique_ptr<RowIterator>> it =
        (*table)->IterWithVnode(static_cast<VirtualNode>(vnode));
    EXPECT_THAT(it.status(), testing::IsOk());
    if (!it.ok()) return rows;
    for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
      rows.push_back({static_cast<VirtualNode>(vnode),
                      std::string((*it)->pk_bytes()),
                      Row((*it)->row().begin(), (*it)->row().end())});
    }
    EXPECT_THAT((*it)->status(), testing::IsOk());
  }
  return rows;
}

void ExpectSameRows(const std::vector<ReadRow>& raw,
                    const std::vector<ReadRow>& expected) {
  ASSERT_EQ(raw.size(), expected.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("row ", i, ": ", RowDebugString(raw[i].row)));
    EXPECT_EQ(raw[i].vnode, expected[i].vnode);
    EXPECT_EQ(raw[i].pk, expected[i].pk);
    EXPECT_TRUE(RowsEqual(raw[i].row, expected[i].row))
        << RowDebugString(expected[i].row);
  }
}

void ExpectRowsMatchModel(const std::vector<ReadRow>& rows,
                          const std::map<int64_t, Row>& model) {
  std::map<int64_t, Row> read;
  for (const ReadRow& row : rows) {
    read.emplace(std::get<int64_t>(row.row[0]), row.row);
  }
  ASSERT_EQ(read.size(), model.size());
  for (const auto& [id, row] : model) {
    ASSERT_TRUE(read.contains(id)) << id;
    EXPECT_TRUE(RowsEqual(read.at(id), row)) << RowDebugString(row);
  }
}

// Random inserts, updates and deletes over 40 ids, a checkpoint per round,
// a full compaction halfway (tombstones dropped).
std::map<int64_t, Row> WriteRandomRounds(RocksDbStateStore& store,
                                         std::mt19937_64& rng) {
  std::map<int64_t, Row> model;
  absl::StatusOr<std::unique_ptr<StateTable>> table =
      StateTable::Create(Table(), store, VnodeBitmap::All(Table().vnode_count));
  EXPECT_THAT(table.status(), testing::IsOk());
  EpochPair epoch{Epoch(1), Epoch(0)};
  EXPECT_THAT((*table)->InitEpoch(epoch), testing::IsOk());
  for (int round = 0; round < 12; ++round) {
    for (int op = 0; op < 25; ++op) {
      const int64_t id = static_cast<int64_t>(rng() % 40);
      Row row = RandomRow(
          {DataType::kInt64, DataType::kVarchar, DataType::kInt32}, rng);
      row[0] = Datum(id);
      auto found = model.find(id);
      if (found == model.end()) {
        EXPECT_THAT((*table)->Insert(row), testing::IsOk());
        model.emplace(id, row);
      } else if (rng() % 3 == 0) {
        EXPECT_THAT((*table)->Delete(found->second), testing::IsOk());
        model.erase(found);
      } else {
        EXPECT_THAT((*table)->Update(found->second, row), testing::IsOk());
        found->second = row;
      }
    }
    const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
    EXPECT_THAT((*table)->Commit(next), testing::IsOk());
    EXPECT_THAT(store.Checkpoint(next.prev), testing::IsOk());
    epoch = next;
    if (round == 6) {
      EXPECT_THAT(store.Compact(), testing::IsOk());
    }
  }
  return model;
}

// Writes, straight into RocksDB, a version above the committed epoch for
// every stored row key: a tombstone, a row version with another key's value,
// in turn. Returns how many were planted.
int PlantVersionsAboveTheCommittedEpoch(const std::string& path,
                                        Epoch committed) {
  std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
  EXPECT_TRUE(raw_rocksdb_for_test::Open(path, 1 << 20, &raw).ok());
  if (raw == nullptr) return 0;
  std::vector<std::pair<std::string, std::string>> planted;
  std::string some_row_value;
  std::string last_user_key;
  std::unique_ptr<rocksdb::Iterator> it(
      raw->db->NewIterator(rocksdb::ReadOptions(), raw->data()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    const std::string user_key = key.substr(0, key.size() - 8);
    if (it->value().starts_with("\x01"))
      some_row_value = it->value().ToString();
    if (user_key == last_user_key) continue;
    last_user_key = user_key;
    std::string future = user_key;
    AppendEpochSuffix(Epoch(committed.value() + 2), &future);
    planted.emplace_back(future, planted.size() % 2 == 0 ? std::string("\0", 1)
                                                         : some_row_value);
  }
  EXPECT_TRUE(it->status().ok());
  it.reset();
  for (const auto& [key, value] : planted) {
    if (value.empty()) continue;  // No row value seen yet.
    EXPECT_TRUE(
        raw->db->Put(rocksdb::WriteOptions(), raw->data(), key, value).ok());
  }
  return static_cast<int>(planted.size());
}

TEST(CommittedTableReaderTest, AgreesWithTheStateTablesOnRandomData) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937_64 rng(seed);
    const std::string path = NewTestDirectory();
    std::map<int64_t, Row> model;
    Epoch committed;
    {
      std::unique_ptr<RocksDbStateStore> store = OpenStore(path);
      ASSERT_NE(store, nullptr);
      model = WriteRandomRounds(*store, rng);
      const std::vector<ReadRow> raw = ReadRaw(*store);
      ExpectSameRows(raw, ReadThroughStateTable(*store));
      ExpectRowsMatchModel(raw, model);
      committed = store->CommittedEpoch(Table().table_id);
    }
    EXPECT_GT(PlantVersionsAboveTheCommittedEpoch(path, committed), 10);
    std::unique_ptr<RocksDbStateStore> store = OpenStore(path);
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(store->CommittedEpoch(Table().table_id), committed);
    const std::vector<ReadRow> raw = ReadRaw(*store);
    ExpectSameRows(raw, ReadThroughStateTable(*store));
    ExpectRowsMatchModel(raw, model);
  }
}

TEST(CommittedTableReaderTest, AReadAboveTheCommittedEpochIsRefused) {
  std::unique_ptr<RocksDbStateStore> store = OpenStore(NewTestDirectory());
  ASSERT_NE(store, nullptr);
  std::mt19937_64 rng(7);
  WriteRandomRounds(*store, rng);
  const Epoch committed = store->CommittedEpoch(Table().table_id);
  EXPECT_THAT(
      store->NewRawCommittedRowIterator(Table(), Epoch(committed.value() + 1))
          .status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("above the committed epoch")));
}

struct Damage {
  std::string name;
  std::string value;  // Replaces the newest version of the first row.
  std::string message;
};

class CommittedTableReaderCorruptionTest
    : public ::testing::TestWithParam<Damage> {};

TEST_P(CommittedTableReaderCorruptionTest, IsDataLossNamingTheTableAndKey) {
  const std::string path = NewTestDirectory();
  {
    std::unique_ptr<RocksDbStateStore> store = OpenStore(path);
    ASSERT_NE(store, nullptr);
    std::mt19937_64 rng(3);
    WriteRandomRounds(*store, rng);
    ASSERT_THAT(store->Compact(), testing::IsOk());  // One version per row.
  }
  std::string first_key;
  {
    std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
    ASSERT_TRUE(raw_rocksdb_for_test::Open(path, 1 << 20, &raw).ok());
    std::unique_ptr<rocksdb::Iterator> it(
        raw->db->NewIterator(rocksdb::ReadOptions(), raw->data()));
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    first_key = it->key().ToString();
    it.reset();
    ASSERT_TRUE(raw->db
                    ->Put(rocksdb::WriteOptions(), raw->data(), first_key,
                          GetParam().value)
                    .ok());
  }
  absl::StatusOr<FullKeyView> key = DecodeFullKey(first_key);
  ASSERT_THAT(key.status(), testing::IsOk());
  std::unique_ptr<RocksDbStateStore> store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CommittedRowIterator> it,
      store->NewRawCommittedRowIterator(
          Table(), store->CommittedEpoch(Table().table_id)));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(
      it->status(),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr(DescribeStoredRow(Table(), key->vnode, key->pk)),
                     HasSubstr(GetParam().message))));
}

INSTANTIATE_TEST_SUITE_P(
    Values, CommittedTableReaderCorruptionTest,
    ::testing::Values(
        Damage{"UnknownTag", "\x07row", "corrupt value: unknown tag 7"},
        Damage{"Empty", "", "corrupt value: empty"},
        Damage{"TombstoneWithPayload", std::string("\0x", 2),
               "corrupt value: unknown tag 0"},
        Damage{"RowBytesThatDoNotDecode", "\x01\xff\xff\xff", "corrupt value"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace backfill
