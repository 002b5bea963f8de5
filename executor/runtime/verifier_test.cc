#include "executor/runtime/verifier.h"

#include <memory>

#include "executor/runtime/demo/bulk_load.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;

TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {0, 1};
  return catalog;
}

StreamingJobOptions Job() {
  StreamingJobOptions options;
  options.upstream = Table();
  options.output_columns = {1};  // the view keeps id hidden
  options.initial_rows = 30;
  options.workload.seed = 9;
  return options;
}

// Writes `rows` (view columns: v, id) into the view and checkpoints.
void WriteView(StateStore& store, const StreamingJobOptions& options,
               const std::vector<Row>& rows) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto view, StateTable::Create(ViewCatalog(options), store,
                                    VnodeBitmap::All(Table().vnode_count)));
  const Epoch committed = store.CommittedEpoch(options.view_table_id);
  const Epoch start = std::max(committed, store.CommittedEpoch(1));
  EpochPair epoch{Epoch(start.value() + 1), start};
  BACKFILL_ASSERT_OK(view->InitEpoch(epoch));
  for (const Row& row : rows) BACKFILL_ASSERT_OK(view->Insert(row));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_ASSERT_OK(view->Commit(next));
  BACKFILL_ASSERT_OK(store.Checkpoint(next.prev));
}

// The upstream rows as view rows.
std::vector<Row> AsView(StateStore& store, const StreamingJobOptions& options) {
  absl::StatusOr<std::vector<Row>> rows =
      ReadCommittedRows(store, options.upstream, {1, 0});
  EXPECT_TRUE(rows.ok());
  return rows.value_or(std::vector<Row>{});
}

TEST(VerifierTest, AnEqualViewIsConsistent) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  WriteView(*store, options, AsView(*store, options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.upstream_rows, 30u);
  EXPECT_EQ(verdict.view_rows, 30u);
  EXPECT_EQ(verdict.mismatch, "");
}

TEST(VerifierTest, AMissingRowIsACountMismatch) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  std::vector<Row> rows = AsView(*store, options);
  rows.pop_back();
  WriteView(*store, options, rows);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_EQ(verdict.mismatch, "table has 30 rows, view has 29");
}

TEST(VerifierTest, ADifferentValueNamesTheFirstDifferingRow) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  std::vector<Row> rows = AsView(*store, options);
  rows[4][0] = Datum(std::string("changed"));
  WriteView(*store, options, rows);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_THAT(verdict.mismatch, HasSubstr("changed"));
  EXPECT_THAT(verdict.mismatch, HasSubstr(": table "));
}

TEST(VerifierTest, CommittedRowsComeInTheCanonicalOrder) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  // By id ascending (the memcomparable order of the projected columns),
  // whatever the table's pk order and vnodes.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::vector<Row> rows, ReadCommittedRows(*store, options.upstream, {0}));
  ASSERT_EQ(rows.size(), 30u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(DatumsEqual(rows[i][0], Datum(static_cast<int64_t>(i))));
  }
}

}  // namespace
}  // namespace backfill
