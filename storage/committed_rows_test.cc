#include "storage/committed_rows.h"

#include <memory>
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
