#include "executor/backfill/progress_rows.h"

#include <map>
#include <memory>

#include "executor/backfill/progress_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

// t(id INT64, v INT64): pk (id), 4 vnodes.
TableCatalog Upstream() {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kInt64, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {0, 1};
  return catalog;
}

VnodeBitmap FirstThree() {
  VnodeBitmap vnodes(4);
  for (VirtualNode vnode = 0; vnode < 3; ++vnode) vnodes.Set(vnode);
  return vnodes;
}

std::unique_ptr<StateTable> ProgressTable(StateStore& store, uint64_t curr) {
  auto table = StateTable::Create(BackfillProgressCatalog(Upstream(), 9), store,
                                  FirstThree());
  EXPECT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE((*table)->InitEpoch(EpochPair::ForInitial(Epoch(curr))).ok());
  return std::move(*table);
}

TEST(ProgressRowsTest, WritesInsertsThenUpdatesAndReadsThemBack) {
  auto store = NewMemoryStateStore();
  const std::vector<DataType> pk_types = {DataType::kInt64};
  {
    auto table = ProgressTable(*store, 1);
    BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillState state,
                                  ReadProgressRows(*table, pk_types));
    for (VirtualNode vnode : {0, 1, 2}) {
      EXPECT_TRUE(ProgressEquals(*state.Get(vnode), NotStarted{}));
    }
    BACKFILL_ASSERT_OK(state.UpdateProgress(0, {int64_t{5}}, 5));
    BACKFILL_ASSERT_OK(state.UpdateProgress(2, {int64_t{8}}, 1));
    BACKFILL_ASSERT_OK(WriteProgressRows(state, *table));  // two inserts
    EXPECT_TRUE(state.ChangedVnodes().empty());
    BACKFILL_ASSERT_OK(state.UpdateProgress(0, {int64_t{6}}, 1));
    BACKFILL_ASSERT_OK(WriteProgressRows(state, *table));  // one update
    BACKFILL_ASSERT_OK(table->Commit(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  }
  auto table = ProgressTable(*store, 2);
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillState state,
                                ReadProgressRows(*table, pk_types));
  EXPECT_TRUE(ProgressEquals(*state.Get(0), InProgress{{int64_t{6}}, 6}));
  EXPECT_TRUE(ProgressEquals(*state.Get(1), NotStarted{}));
  EXPECT_TRUE(ProgressEquals(*state.Get(2), InProgress{{int64_t{8}}, 1}));
  EXPECT_EQ(state.Get(3), nullptr);
  EXPECT_TRUE(state.ChangedVnodes().empty());
}

// Issue 21: a pk of a LIST and a STRUCT; the progress table's position
// columns hold them whole (nested NULLs, an empty list) and read back equal.
TEST(ProgressRowsTest, NestedPkPositionsReadBack) {
  TableCatalog upstream;
  upstream.table_id = 7;
  upstream.name = "nested";
  upstream.columns = {
      {"tags", ColumnType::List(DataType::kInt64), 1, true},
      {"point",
       ColumnType::Struct({{"x", DataType::kFloat64, 1},
                           {"names", ColumnType::List(DataType::kVarchar), 2}}),
       2, false}};
  upstream.pk_indices = {0, 1};
  upstream.pk_orders = {OrderType::Ascending(), OrderType::Descending()};
  upstream.dist_key_indices = {0, 1};
  upstream.vnode_count = 4;
  upstream.value_indices = {0, 1};
  BACKFILL_ASSERT_OK(ValidateTableCatalog(upstream));
  const TableCatalog progress = BackfillProgressCatalog(upstream, 9);
  BACKFILL_ASSERT_OK(ValidateProgressCatalog(upstream, progress));
  const Row pos0 = {ListValue{{int64_t{1}, Datum()}},
                    StructValue{{-0.0, ListValue{{std::string("a")}}}}};
  const Row pos2 = {ListValue{}, StructValue{{Datum(), Datum()}}};
  const std::vector<DataType> pk_types = upstream.PkTypes();
  auto store = NewMemoryStateStore();
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto table, StateTable::Create(progress, *store, FirstThree()));
    BACKFILL_ASSERT_OK(table->InitEpoch(EpochPair::ForInitial(Epoch(1))));
    BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillState state,
                                  ReadProgressRows(*table, pk_types));
    BACKFILL_ASSERT_OK(state.UpdateProgress(0, pos0, 3));
    BACKFILL_ASSERT_OK(state.UpdateProgress(2, pos2, 1));
    BACKFILL_ASSERT_OK(WriteProgressRows(state, *table));
    BACKFILL_ASSERT_OK(table->Commit(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table, StateTable::Create(progress, *store, FirstThree()));
  BACKFILL_ASSERT_OK(table->InitEpoch(EpochPair::ForInitial(Epoch(2))));
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillState state,
                                ReadProgressRows(*table, pk_types));
  EXPECT_TRUE(ProgressEquals(*state.Get(0), InProgress{pos0, 3}));
  EXPECT_TRUE(ProgressEquals(*state.Get(1), NotStarted{}));
  EXPECT_TRUE(ProgressEquals(*state.Get(2), InProgress{pos2, 1}));
}

TEST(ProgressRowsTest, ValidatesTheTablesShapeAndVnodes) {
  auto store = NewMemoryStateStore();
  auto table = ProgressTable(*store, 1);
  BACKFILL_EXPECT_OK(ValidateProgressTable(Upstream(), FirstThree(), *table));
  EXPECT_THAT(ValidateProgressTable(Upstream(), VnodeBitmap::All(4), *table),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("own different vnodes")));
  TableCatalog other = Upstream();
  other.columns[0].type = DataType::kInt32;
  EXPECT_THAT(ValidateProgressTable(other, FirstThree(), *table),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("progress_table")));
}

TEST(ProgressRowsTest, ARowThatDoesNotDecodeIsDataLoss) {
  auto store = NewMemoryStateStore();
  auto table = ProgressTable(*store, 1);
  // A position of two columns for a pk of one.
  BACKFILL_ASSERT_OK(
      table->Insert({int16_t{1}, int64_t{5}, false, int64_t{3}}));
  EXPECT_THAT(
      ReadProgressRows(*table, {DataType::kInt64, DataType::kInt64}).status(),
      StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace backfill
