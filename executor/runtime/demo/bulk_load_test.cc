#include "executor/runtime/demo/bulk_load.h"

#include <memory>

#include "executor/runtime/demo/workload.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

StreamingJobOptions Job() {
  StreamingJobOptions options;
  TableCatalog& catalog = options.upstream;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 8;
  catalog.value_indices = {0, 1};
  options.initial_rows = 100;
  options.workload.seed = 4;
  options.workload.null_fraction = 0.2;
  return options;
}

TEST(BulkLoadTest, LoadsTheWorkloadRowsOnceAndCheckpoints) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK_AND_ASSIGN(bool loaded, LoadInitialRows(*store, options));
  EXPECT_TRUE(loaded);
  const Epoch committed = store->CommittedEpoch(options.upstream.table_id);
  EXPECT_GT(committed.value(), 0u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table,
      StateTable::Create(options.upstream, *store, VnodeBitmap::All(8)));
  BACKFILL_ASSERT_OK(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  for (uint64_t key = 0; key < options.initial_rows; ++key) {
    const Row expected = WorkloadRow(options.upstream, options.workload.seed,
                                     key, 0, options.workload.null_fraction);
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Row> row,
                                  table->GetRow(Row{expected[0]}));
    ASSERT_TRUE(row.has_value()) << key;
    EXPECT_TRUE(RowsEqual(*row, expected)) << key;
  }
  table.reset();
  // A second load finds the marker: nothing is written.
  BACKFILL_ASSERT_OK_AND_ASSIGN(loaded, LoadInitialRows(*store, options));
  EXPECT_FALSE(loaded);
  EXPECT_EQ(store->CommittedEpoch(options.upstream.table_id), committed);
}

TEST(BulkLoadTest, RejectsABadCatalog) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  StreamingJobOptions options = Job();
  options.upstream.pk_indices = {5};
  EXPECT_THAT(LoadInitialRows(*store, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
