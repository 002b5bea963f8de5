#include "storage/committed_rows.h"

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

// id (pk, stored only in the key), v.
TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 3;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {1};
  return catalog;
}

TEST(CommittedRowsTest, TheStoreIteratorReadsEveryVnodeInStorageOrder) {
  const uint64_t seed = 11;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table, StateTable::Create(Table(), *store, VnodeBitmap::All(4)));
  BACKFILL_ASSERT_OK(table->InitEpoch(EpochPair{Epoch(1), Epoch(0)}));
  for (int64_t id = 0; id < 50; ++id) {
    Row row = RandomRow({DataType::kInt64, DataType::kVarchar}, rng);
    row[0] = Datum(id);
    BACKFILL_ASSERT_OK(table->Insert(row));
  }
  BACKFILL_ASSERT_OK(table->Commit(EpochPair{Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));

  std::vector<std::pair<VirtualNode, std::string>> expected;
  std::vector<Row> expected_rows;
  for (int vnode = 0; vnode < 4; ++vnode) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto it, table->IterWithVnode(static_cast<VirtualNode>(vnode)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      expected.emplace_back(vnode, std::string(it->pk_bytes()));
      expected_rows.emplace_back(it->row().begin(), it->row().end());
    }
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, NewStoreCommittedRowIterator(*store, Table(), Epoch(1)));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(it->vnode(), expected[i].first);
    EXPECT_EQ(it->pk(), expected[i].second);
    EXPECT_TRUE(RowsEqual(it->row(), expected_rows[i]))
        << RowDebugString(it->row());
  }
  BACKFILL_EXPECT_OK(it->status());
  EXPECT_EQ(i, 50u);
}

// Issue 21: pk columns of a LIST and a STRUCT stored only in the key come
// back whole from the pk bytes.
TEST(CommittedRowsTest, NestedPkColumnsOutsideTheValueDecodeFromTheKey) {
  const uint64_t seed = 21;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  TableCatalog catalog;
  catalog.table_id = 4;
  catalog.name = "nested";
  catalog.columns = {
      {"tags", ColumnType::List(DataType::kFloat64), 1, true},
      {"point",
       ColumnType::Struct({{"x", DataType::kInt32, 1},
                           {"names", ColumnType::List(DataType::kVarchar), 2}}),
       2, false},
      {"v", DataType::kInt64, 3, true}};
  catalog.pk_indices = {1, 0};
  catalog.pk_orders = {OrderType::Descending(), OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {2};
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table, StateTable::Create(catalog, *store, VnodeBitmap::All(4)));
  BACKFILL_ASSERT_OK(table->InitEpoch(EpochPair{Epoch(1), Epoch(0)}));
  std::vector<Row> rows;
  for (int64_t i = 0; i < 60; ++i) {
    Row row = {RandomColumnDatum(catalog.columns[0].type, rng, 0.2),
               RandomColumnValue(catalog.columns[1].type, rng), Datum(i)};
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        std::optional<Row> existing,
        table->GetRow(ProjectRow(row, catalog.pk_indices)));
    if (existing.has_value()) continue;
    BACKFILL_ASSERT_OK(table->Insert(row));
    rows.push_back(std::move(row));
  }
  BACKFILL_ASSERT_OK(table->Commit(EpochPair{Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, NewStoreCommittedRowIterator(*store, catalog, Epoch(1)));
  size_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++seen) {
    const int64_t v = std::get<int64_t>(it->row()[2]);
    const Row* expected = nullptr;
    for (const Row& row : rows) {
      if (std::get<int64_t>(row[2]) == v) expected = &row;
    }
    ASSERT_NE(expected, nullptr) << RowDebugString(it->row());
    EXPECT_TRUE(RowsEqual(it->row(), *expected))
        << RowDebugString(it->row()) << " vs " << RowDebugString(*expected);
  }
  BACKFILL_EXPECT_OK(it->status());
  EXPECT_EQ(seen, rows.size());
}

TEST(CommittedRowsTest, ACorruptValueIsDataLossNamingTheTableAndKey) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommittedRowDecoder decoder,
                                CommittedRowDecoder::Create(Table()));
  Row row;
  EXPECT_THAT(decoder.Decode(2, "\x01\x02", "\xff\xff", &row),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("table 3 (t) vnode 2 pk \\001\\002: "
                                 "corrupt value")));
}

// A table whose value holds every column: decoded straight from the value.
TEST(CommittedRowsTest, AWholeRowValueDecodesAndACorruptOneIsDataLoss) {
  TableCatalog catalog = Table();
  catalog.value_indices = {0, 1};
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommittedRowDecoder decoder,
                                CommittedRowDecoder::Create(catalog));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueRowCodec> codec,
                                MakeValueCodec(catalog));
  const Row stored = {Datum(int64_t{42}), Datum(std::string("x"))};
  std::string value;
  codec->Encode(stored, &value);
  Row row = {Datum(int64_t{1})};  // reused: its old contents go
  BACKFILL_ASSERT_OK(decoder.Decode(1, "\x01", value, &row));
  EXPECT_TRUE(RowsEqual(row, stored)) << RowDebugString(row);
  EXPECT_THAT(decoder.Decode(2, "\x01\x02", "\xff\xff", &row),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("table 3 (t) vnode 2 pk \\001\\002: "
                                 "corrupt value: ")));
}

TEST(CommittedRowsTest, ABadCatalogIsInvalidArgument) {
  TableCatalog catalog = Table();
  catalog.pk_indices = {7};
  EXPECT_THAT(CommittedRowDecoder::Create(catalog).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
