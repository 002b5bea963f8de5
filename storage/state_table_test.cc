#include "storage/state_table.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "serde/memcmp_codec.h"
#include "serde/random_datum.h"
#include "serde/vnode_hash.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Optional;

// t(id INT64, name VARCHAR, score INT32): pk (id DESC), dist key (id).
TableCatalog MakeCatalog(int vnode_count = 4) {
  TableCatalog catalog;
  catalog.table_id = 11;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"name", DataType::kVarchar, 2, true},
                     {"score", DataType::kInt32, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = vnode_count;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

Row R(int64_t id, std::string name, int32_t score) {
  return Row{id, std::move(name), score};
}

class StateTableTest : public ::testing::Test {
 protected:
  std::unique_ptr<StateTable> NewTable(const TableCatalog& catalog,
                                       StateTableOptions options = {}) {
    auto table = StateTable::Create(catalog, *store_,
                                    VnodeBitmap::All(catalog.vnode_count),
                                    options);
    EXPECT_THAT(table, IsOk());
    return std::move(*table);
  }

  std::unique_ptr<StateStore> store_ = NewMemoryStateStore();
  const EpochPair first_ = EpochPair::ForInitial(Epoch(1));
};

TEST_F(StateTableTest, InsertGetIterateInPkOrderAcrossVnodes) {
  auto table = NewTable(MakeCatalog());
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  for (int64_t id = 1; id <= 20; ++id) {
    BACKFILL_ASSERT_OK(table->Insert(R(id, "n" + std::to_string(id), 0)));
  }
  EXPECT_THAT(table->GetRow(Row{int64_t{7}}),
              IsOkAndHolds(Optional(R(7, "n7", 0))));
  EXPECT_THAT(table->GetRow(Row{int64_t{70}}), IsOkAndHolds(std::nullopt));
  int total = 0;
  for (VirtualNode vnode = 0; vnode < 4; ++vnode) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(vnode));
    int64_t previous = INT64_MAX;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const int64_t id = std::get<int64_t>(it->row()[0]);
      EXPECT_LT(id, previous) << "DESC pk order within vnode " << vnode;
      EXPECT_EQ(table->ComputeVnode(it->row()), vnode);
      previous = id;
      ++total;
    }
    BACKFILL_EXPECT_OK(it->status());
  }
  EXPECT_EQ(total, 20);
}

TEST_F(StateTableTest, IterAfterPositionIsStrictlyAfter) {
  TableCatalog catalog = MakeCatalog(1);
  catalog.dist_key_indices.clear();  // singleton: everything in vnode 0
  auto table = NewTable(catalog);
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  for (int64_t id = 1; id <= 5; ++id) BACKFILL_ASSERT_OK(table->Insert(R(id, "", 0)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto it, table->IterWithVnode(0, PkRowRange::After(Row{int64_t{3}})));
  std::vector<int64_t> ids;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ids.push_back(std::get<int64_t>(it->row()[0]));
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 1}));  // DESC: after 3 come 2, 1
}

TEST_F(StateTableTest, NewRowIteratorIsNotPositionedUntilSeekToFirst) {
  TableCatalog catalog = MakeCatalog(1);
  catalog.dist_key_indices.clear();  // singleton: everything in vnode 0
  auto table = NewTable(catalog);
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  BACKFILL_ASSERT_OK(table->Insert(R(1, "", 0)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(0));
  EXPECT_FALSE(it->Valid());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  EXPECT_FALSE(it->Valid());
  it->SeekToFirst();  // Again from the first row.
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(std::get<int64_t>(it->row()[0]), 1);
  EXPECT_THAT(it->status(), IsOk());
}

TEST_F(StateTableTest, ConsistencyChecks) {
  auto table = NewTable(MakeCatalog());
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  BACKFILL_ASSERT_OK(table->Insert(R(1, "a", 1)));
  EXPECT_THAT(table->Insert(R(1, "b", 2)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("pk already exists")));
  EXPECT_THAT(table->Delete(R(2, "a", 1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no row with this pk")));
  EXPECT_THAT(table->Delete(R(1, "a", 9)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("differs")));
  EXPECT_THAT(table->Update(R(1, "x", 1), R(1, "y", 1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  BACKFILL_ASSERT_OK(table->Update(R(1, "a", 1), R(1, "b", 2)));
  EXPECT_THAT(table->GetRow(Row{int64_t{1}}), IsOkAndHolds(Optional(R(1, "b", 2))));
  // A pk-changing update moves the row.
  BACKFILL_ASSERT_OK(table->Update(R(1, "b", 2), R(5, "b", 2)));
  EXPECT_THAT(table->GetRow(Row{int64_t{1}}), IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK(table->Delete(R(5, "b", 2)));
  EXPECT_THAT(table->Insert(Row{Datum(), std::string("a"), int32_t{1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not nullable")));
}

TEST_F(StateTableTest, InconsistentModeLastWriteWins) {
  StateTableOptions options;
  options.op_consistency = OpConsistency::kInconsistent;
  auto table = NewTable(MakeCatalog(), options);
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  BACKFILL_ASSERT_OK(table->Insert(R(1, "a", 1)));
  BACKFILL_ASSERT_OK(table->Insert(R(1, "b", 2)));
  BACKFILL_ASSERT_OK(table->Delete(R(3, "", 0)));
  EXPECT_THAT(table->GetRow(Row{int64_t{1}}), IsOkAndHolds(Optional(R(1, "b", 2))));
}

TEST_F(StateTableTest, UnownedVnodeIsAnError) {
  const TableCatalog catalog = MakeCatalog();
  VnodeBitmap owned(catalog.vnode_count);
  owned.Set(0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto table,
                                StateTable::Create(catalog, *store_, owned));
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  int rejected = 0;
  for (int64_t id = 0; id < 16; ++id) {
    const Row row = R(id, "", 0);
    absl::Status status = table->Insert(row);
    if (table->ComputeVnode(row) == 0) {
      EXPECT_THAT(status, IsOk());
    } else {
      EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                                   HasSubstr("does not own")));
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_THAT(table->IterWithVnode(1),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(StateTable::Create(catalog, *store_, VnodeBitmap(8)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("vnode bitmap has 8 bits")));
}

TEST_F(StateTableTest, EpochProtocolIsChecked) {
  auto table = NewTable(MakeCatalog());
  EXPECT_THAT(table->Insert(R(1, "", 0)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(table->Commit(first_.Next(Epoch(2))),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  EXPECT_THAT(table->InitEpoch(first_),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(table->Commit(EpochPair{Epoch(5), Epoch(4)}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("does not continue")));
  BACKFILL_ASSERT_OK(table->Commit(first_.Next(Epoch(2))));
  EXPECT_EQ(table->epoch(), Epoch(2));
}

TEST_F(StateTableTest, InitWaitsForTheCommittedEpoch) {
  const TableCatalog catalog = MakeCatalog();
  auto writer = NewTable(catalog);
  BACKFILL_ASSERT_OK(writer->InitEpoch(first_));
  BACKFILL_ASSERT_OK(writer->Insert(R(1, "a", 1)));
  const EpochPair second = first_.Next(Epoch(2));
  BACKFILL_ASSERT_OK(writer->Commit(second));

  auto reader = NewTable(catalog);
  const EpochPair reader_first = second.Next(Epoch(3));  // needs committed >= 2
  EXPECT_FALSE(reader->ReadyToInit(reader_first));
  SimulatedClock clock;
  InitWait wait;
  wait.clock = &clock;
  wait.deadline = clock.Now();  // already passed: fails instead of hanging
  EXPECT_THAT(reader->InitEpoch(reader_first, wait),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_FALSE(reader->ReadyToInit(reader_first));
  BACKFILL_ASSERT_OK(writer->Commit(reader_first));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_TRUE(reader->ReadyToInit(reader_first));
  BACKFILL_ASSERT_OK(reader->InitEpoch(reader_first, wait));
  EXPECT_THAT(reader->GetRow(Row{int64_t{1}}), IsOkAndHolds(Optional(R(1, "a", 1))));
}

TEST_F(StateTableTest, PkColumnsOutsideTheValueComeFromTheKey) {
  TableCatalog catalog = MakeCatalog();
  catalog.value_indices = {1, 2};
  auto table = NewTable(catalog);
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  BACKFILL_ASSERT_OK(table->Insert(R(42, "x", 3)));
  EXPECT_THAT(table->GetRow(Row{int64_t{42}}), IsOkAndHolds(Optional(R(42, "x", 3))));
}

TEST_F(StateTableTest, CorruptValueIsDataLossNamingTheTable) {
  const TableCatalog catalog = MakeCatalog();
  // Write garbage bytes under a valid key through the raw local store.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto raw,
                                store_->NewLocalStateStore(catalog.table_id, {}));
  BACKFILL_ASSERT_OK(raw->Init(first_));
  auto table = NewTable(catalog);
  const Row row = R(9, "a", 1);
  const VirtualNode vnode = table->ComputeVnode(row);
  const std::string pk = table->pk_serde().Serialize(Row{int64_t{9}});
  BACKFILL_ASSERT_OK(raw->Insert(vnode, pk, "\xff\x01garbage"));
  BACKFILL_ASSERT_OK(raw->Seal(first_.Next(Epoch(2))));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK(table->InitEpoch(first_.Next(Epoch(2))));
  EXPECT_THAT(table->GetRow(Row{int64_t{9}}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("table 11 (t) vnode")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(vnode));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kDataLoss));
}

// ReadColumns is the batch form of Next taking row(): same rows, same
// order, the iterator left on the row after the batch; for a value that is
// the whole row (decoded in place) and one that is not (pk from the key).
TEST_F(StateTableTest, ReadColumnsIsTheBatchFormOfNext) {
  for (const bool whole_row : {true, false}) {
    SCOPED_TRACE(whole_row ? "whole row" : "pk outside the value");
    store_ = NewMemoryStateStore();
    TableCatalog catalog = MakeCatalog(/*vnode_count=*/1);
    if (!whole_row) catalog.value_indices = {1, 2};
    auto table = NewTable(catalog);
    BACKFILL_ASSERT_OK(table->InitEpoch(first_));
    std::vector<Row> expected;
    for (int64_t id = 40; id >= 1; --id) {  // pk order: id DESC
      Row row{id, id % 3 == 0 ? Datum() : Datum(absl::StrCat("name-", id)),
              static_cast<int32_t>(id * 7)};
      BACKFILL_ASSERT_OK(table->Insert(row));
      expected.push_back(std::move(row));
    }
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(absl::StrCat("seed=", seed));
      std::mt19937_64 rng(seed);
      BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(0));
      it->SeekToFirst();
      std::vector<std::vector<Datum>> columns(3);
      size_t consumed = 0;
      while (it->Valid()) {
        const size_t max_rows = rng() % 9;  // 0 reads nothing
        const size_t n = it->ReadColumns(max_rows, absl::MakeSpan(columns));
        ASSERT_EQ(n, std::min(max_rows, expected.size() - consumed));
        consumed += n;
        for (const auto& column : columns) ASSERT_EQ(column.size(), consumed);
        if (consumed < expected.size()) {
          ASSERT_TRUE(it->Valid());
          ASSERT_EQ(it->row(), expected[consumed]);
          ASSERT_EQ(it->pk_bytes(),
                    table->pk_serde().Serialize(Row{expected[consumed][0]}));
        }
      }
      BACKFILL_ASSERT_OK(it->status());
      ASSERT_EQ(consumed, expected.size());
      for (size_t r = 0; r < expected.size(); ++r) {
        ASSERT_EQ((Row{columns[0][r], columns[1][r], columns[2][r]}),
                  expected[r])
            << r;
      }
    }
  }
}

// A corrupt value stops a batch: the rows before it are appended, the
// error is status()'s and the iterator ends, as with Next.
TEST_F(StateTableTest, ReadColumnsStopsAtACorruptValue) {
  const TableCatalog catalog = MakeCatalog(/*vnode_count=*/1);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto raw, store_->NewLocalStateStore(catalog.table_id, {}));
  BACKFILL_ASSERT_OK(raw->Init(first_));
  auto table = NewTable(catalog);
  const std::string pk = table->pk_serde().Serialize(Row{int64_t{9}});
  BACKFILL_ASSERT_OK(raw->Insert(0, pk, "\xff\x01garbage"));
  BACKFILL_ASSERT_OK(raw->Seal(first_.Next(Epoch(2))));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  BACKFILL_ASSERT_OK(table->InitEpoch(first_.Next(Epoch(2))));
  for (int64_t id = 20; id >= 10; --id) {
    BACKFILL_ASSERT_OK(table->Insert(R(id, "n", 1)));
  }
  BACKFILL_ASSERT_OK(table->Insert(R(3, "n", 1)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(0));
  it->SeekToFirst();
  std::vector<std::vector<Datum>> columns(3);
  EXPECT_EQ(it->ReadColumns(100, absl::MakeSpan(columns)), 11u);  // 20..10
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kDataLoss,
                                     HasSubstr("table 11 (t) vnode 0")));
  for (const auto& column : columns) EXPECT_EQ(column.size(), 11u);
  EXPECT_EQ(columns[0].back(), Datum(int64_t{10}));
}

TEST_F(StateTableTest, VnodeColumnGivesTheVnode) {
  // Shaped like the backfill progress table: keyed by vnode.
  TableCatalog catalog;
  catalog.table_id = 12;
  catalog.name = "progress";
  catalog.columns = {{"vnode", DataType::kInt16, 0, false},
                     {"pos", DataType::kInt64, 1, true},
                     {"finished", DataType::kBoolean, 2, false},
                     {"row_count", DataType::kInt64, 3, false}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_column = 0;
  catalog.vnode_count = 8;
  catalog.value_indices = {1, 2, 3};
  VnodeBitmap owned(8);
  owned.Set(2);
  owned.Set(5);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto table,
                                StateTable::Create(catalog, *store_, owned));
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  const Row row = {int16_t{5}, int64_t{42}, false, int64_t{17}};
  EXPECT_EQ(table->ComputeVnode(row), 5);
  BACKFILL_ASSERT_OK(table->Insert(row));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(5));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(RowsEqual(it->row(), row));
  EXPECT_THAT(table->GetRow(Row{int16_t{5}}), IsOkAndHolds(Optional(row)));
  EXPECT_THAT(table->Insert(Row{int16_t{3}, Datum(), true, int64_t{0}}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(table->Insert(Row{int16_t{9}, Datum(), true, int64_t{0}}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(table->GetRow(Row{int16_t{9}}), IsOkAndHolds(std::nullopt));
}

// Issue 21: a LIST and a STRUCT in the pk and the distribution key, stored
// only in the key (value_indices leaves them out): rows read back whole, each
// vnode in the pk order CompareRows gives, vnodes as VnodeHasher computes
// them, and a range starting after a one-column pk prefix.
TableCatalog NestedKeyCatalog() {
  TableCatalog catalog;
  catalog.table_id = 21;
  catalog.name = "nested";
  const ColumnType point = ColumnType::Struct(
      {{"x", DataType::kInt32, 1},
       {"labels", ColumnType::List(DataType::kVarchar), 2}});
  catalog.columns = {{"tags", ColumnType::List(DataType::kFloat64), 1, true},
                     {"point", point, 2, false},
                     {"v", DataType::kVarchar, 3, true}};
  catalog.pk_indices = {0, 1};
  catalog.pk_orders = {OrderType::AscendingNullsFirst(),
                       OrderType::Descending()};
  catalog.dist_key_indices = {1, 0};
  catalog.vnode_count = 4;
  catalog.value_indices = {2};
  return catalog;
}

TEST_F(StateTableTest, ListAndStructPrimaryKeyColumns) {
  const uint64_t seed = 2121;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  const TableCatalog catalog = NestedKeyCatalog();
  auto table = NewTable(catalog);
  EXPECT_EQ(table->pk_serde().DebugString(),
            "(LIST<FLOAT64> ASC NULLS FIRST, STRUCT<x INT32, labels "
            "LIST<VARCHAR>> DESC NULLS FIRST)");
  BACKFILL_ASSERT_OK(table->InitEpoch(first_));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      VnodeHasher hasher,
      VnodeHasher::Create(catalog.dist_key_indices, catalog.vnode_count));
  std::vector<Row> rows;
  for (int i = 0; i < 300; ++i) {
    Row row = {RandomColumnDatum(catalog.columns[0].type, rng, 0.1),
               RandomColumnValue(catalog.columns[1].type, rng),
               RandomDatum(DataType::kVarchar, rng)};
    const Row pk = ProjectRow(row, catalog.pk_indices);
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Row> existing,
                                  table->GetRow(pk));
    if (existing.has_value()) continue;
    BACKFILL_ASSERT_OK(table->Insert(row));
    EXPECT_EQ(table->ComputeVnode(row), hasher.VnodeOf(row));
    rows.push_back(std::move(row));
  }
  ASSERT_GT(rows.size(), 100u);
  for (const Row& row : rows) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        std::optional<Row> got,
        table->GetRow(ProjectRow(row, catalog.pk_indices)));
    ASSERT_TRUE(got.has_value()) << RowDebugString(row);
    EXPECT_TRUE(RowsEqual(*got, row))
        << RowDebugString(*got) << " vs " << RowDebugString(row);
  }
  size_t total = 0;
  for (VirtualNode vnode = 0; vnode < 4; ++vnode) {
    std::vector<Row> expected;
    for (const Row& row : rows) {
      if (hasher.VnodeOf(row) == vnode) {
        expected.push_back(ProjectRow(row, catalog.pk_indices));
      }
    }
    std::sort(expected.begin(), expected.end(),
              [&](const Row& a, const Row& b) {
                return CompareRows(a, b, catalog.pk_orders) < 0;
              });
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(vnode));
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_LT(i, expected.size());
      const Row pk = ProjectRow(it->row(), catalog.pk_indices);
      EXPECT_TRUE(RowsEqual(pk, expected[i]))
          << RowDebugString(pk) << " vs " << RowDebugString(expected[i]);
    }
    BACKFILL_ASSERT_OK(it->status());
    EXPECT_EQ(i, expected.size());
    total += i;
    if (expected.empty()) continue;
    // After the first row's tags (a pk prefix): every row with other tags.
    const Row prefix = {expected.front()[0]};
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto after, table->IterWithVnode(vnode, PkRowRange::After(prefix)));
    size_t skipped = 0;
    while (skipped < expected.size() &&
           CompareRows(RowView(expected[skipped]).first(1), prefix,
                       {catalog.pk_orders[0]}) == 0) {
      ++skipped;
    }
    size_t seen = 0;
    for (after->SeekToFirst(); after->Valid(); after->Next(), ++seen) {
      ASSERT_LT(skipped + seen, expected.size());
      EXPECT_TRUE(RowsEqual(ProjectRow(after->row(), catalog.pk_indices),
                            expected[skipped + seen]));
    }
    BACKFILL_ASSERT_OK(after->status());
    EXPECT_EQ(skipped + seen, expected.size());
  }
  EXPECT_EQ(total, rows.size());
  // Deleting by a row whose pk equals a stored one removes it.
  BACKFILL_ASSERT_OK(table->Delete(rows[0]));
  EXPECT_THAT(table->GetRow(ProjectRow(rows[0], catalog.pk_indices)),
              IsOkAndHolds(std::nullopt));
}

// A key column holding JSONB or MAP, at any depth, is refused.
TEST(StateTableCatalogTest, JsonbOrMapInsideAKeyColumnIsInvalidArgument) {
  TableCatalog catalog = NestedKeyCatalog();
  catalog.columns[0].type = ColumnType::List(DataType::kJsonb);
  EXPECT_THAT(ValidateTableCatalog(catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("primary_key[0] = 0 (tags): ")));
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  EXPECT_THAT(
      StateTable::Create(catalog, *store, VnodeBitmap::All(4)).status(),
      StatusIs(absl::StatusCode::kInvalidArgument));
  catalog = NestedKeyCatalog();
  BACKFILL_EXPECT_OK(ValidateTableCatalog(catalog));
}

}  // namespace
}  // namespace backfill
