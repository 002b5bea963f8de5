#include "storage/replicated_state_table.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Optional;

// The reference's unit scenario: base table of 3 INT32 columns, pk col0.
TableCatalog BaseCatalog() {
  TableCatalog catalog;
  catalog.table_id = 3;
  catalog.name = "base";
  catalog.columns = {{"c0", DataType::kInt32, 10, false},
                     {"c1", DataType::kInt32, 11, false},
                     {"c2", DataType::kInt32, 12, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 1;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

std::vector<Row> ReadAll(ReplicatedStateTable& table) {
  std::vector<Row> rows;
  auto it = table.IterWithVnode(0);
  EXPECT_TRUE(it.ok());
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    rows.emplace_back((*it)->row().begin(), (*it)->row().end());
  }
  EXPECT_TRUE((*it)->status().ok());
  return rows;
}

TEST(ReplicatedStateTableTest, ReplicatedWritesVisibleBeforeCommitThenMerged) {
  auto store = NewMemoryStateStore();
  const TableCatalog catalog = BaseCatalog();
  const EpochPair first = EpochPair::ForInitial(Epoch(1));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto base, StateTable::Create(catalog, *store, VnodeBitmap::All(1)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto replica, ReplicatedStateTable::Create(
                        catalog, *store, VnodeBitmap::All(1), {12, 10}));
  BACKFILL_ASSERT_OK(base->InitEpoch(first));
  BACKFILL_ASSERT_OK(replica->InitEpoch(first));
  EXPECT_EQ(replica->pk_in_output_indices(), absl::Span<const int>({1}));

  // Epoch 1: the base writes a row; the replica receives S2 = (c2, c0) rows.
  BACKFILL_ASSERT_OK(base->Insert(Row{int32_t{1}, int32_t{11}, int32_t{111}}));
  BACKFILL_ASSERT_OK(
      replica->Write(RowOp::kInsert, Row{int32_t{111}, int32_t{1}}));
  // A replicated write is visible through the replica before any commit.
  EXPECT_THAT(replica->GetRow(Row{int32_t{1}}),
              IsOkAndHolds(Optional(Row{int32_t{111}, int32_t{1}})));
  const EpochPair second = first.Next(Epoch(2));
  BACKFILL_ASSERT_OK(base->Commit(second));
  BACKFILL_ASSERT_OK(replica->Commit(second));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));

  // Epoch 2: a replicated row the base has not committed yet.
  BACKFILL_ASSERT_OK(
      replica->Write(RowOp::kInsert, Row{int32_t{222}, int32_t{2}}));
  const EpochPair third = second.Next(Epoch(3));
  BACKFILL_ASSERT_OK(replica->Commit(third));
  // The committed row and the replicated row, in key order.
  EXPECT_EQ(ReadAll(*replica),
            (std::vector<Row>{Row{int32_t{111}, int32_t{1}},
                              Row{int32_t{222}, int32_t{2}}}));
  // Never committed: a fresh reader of the table sees only the base row.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto fresh, ReplicatedStateTable::Create(
                      catalog, *store, VnodeBitmap::All(1), {10, 11, 12}));
  BACKFILL_ASSERT_OK(fresh->InitEpoch(second));
  EXPECT_EQ(ReadAll(*fresh),
            (std::vector<Row>{Row{int32_t{1}, int32_t{11}, int32_t{111}}}));
  // Once the committed epoch reaches the replicated batch it is dropped (the
  // upstream's own commit carries the data; here the base never wrote row 2).
  BACKFILL_ASSERT_OK(base->Commit(third));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
  EXPECT_EQ(ReadAll(*replica),
            (std::vector<Row>{Row{int32_t{111}, int32_t{1}}}));
}

TEST(ReplicatedStateTableTest, NullFillsColumnsOutsideS2EvenIfNotNullable) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto replica, ReplicatedStateTable::Create(BaseCatalog(), *store,
                                                 VnodeBitmap::All(1), {10}));
  BACKFILL_ASSERT_OK(replica->InitEpoch(EpochPair::ForInitial(Epoch(1))));
  BACKFILL_ASSERT_OK(replica->Write(RowOp::kUpdateInsert, Row{int32_t{5}}));
  EXPECT_THAT(replica->GetRow(Row{int32_t{5}}),
              IsOkAndHolds(Optional(Row{int32_t{5}})));
  BACKFILL_ASSERT_OK(replica->Write(RowOp::kUpdateDelete, Row{int32_t{5}}));
  EXPECT_THAT(replica->GetRow(Row{int32_t{5}}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(replica->Write(RowOp::kInsert, Row{int32_t{5}, int32_t{6}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ReplicatedStateTableTest, ChecksS2ColumnsAgainstTheUpstreamSchema) {
  auto store = NewMemoryStateStore();
  // S2 = (c1, c0): c1 is NOT NULL upstream and stays so here; c2 is outside.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto replica, ReplicatedStateTable::Create(
                        BaseCatalog(), *store, VnodeBitmap::All(1), {11, 10}));
  BACKFILL_ASSERT_OK(replica->InitEpoch(EpochPair::ForInitial(Epoch(1))));
  EXPECT_THAT(replica->Write(RowOp::kInsert, Row{Datum(), int32_t{1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 1 (c1) is not nullable")));
  EXPECT_THAT(replica->Write(RowOp::kInsert, Row{int64_t{7}, int32_t{1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 1 (c1) expects")));
  EXPECT_THAT(replica->GetRow(Row{int32_t{1}}), IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK(
      replica->Write(RowOp::kInsert, Row{int32_t{7}, int32_t{1}}));
  EXPECT_THAT(replica->GetRow(Row{int32_t{1}}),
              IsOkAndHolds(Optional(Row{int32_t{7}, int32_t{1}})));
  // What it reports is the upstream's catalog, nullability included.
  EXPECT_FALSE(replica->catalog().columns[1].nullable);
  EXPECT_FALSE(replica->catalog().columns[0].nullable);
}

TEST(ReplicatedStateTableTest, RejectsBadOutputColumns) {
  auto store = NewMemoryStateStore();
  EXPECT_THAT(ReplicatedStateTable::Create(BaseCatalog(), *store,
                                           VnodeBitmap::All(1), {12}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("primary-key column 0 (c0) is not in")));
  EXPECT_THAT(ReplicatedStateTable::Create(BaseCatalog(), *store,
                                           VnodeBitmap::All(1), {10, 99}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("output_column_ids[1] = 99")));
  EXPECT_THAT(
      ReplicatedStateTable::Create(BaseCatalog(), *store, VnodeBitmap::All(1),
                                   {10, 10}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("appears twice")));
}

}  // namespace
}  // namespace backfill
