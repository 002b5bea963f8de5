#include "executor/runtime/streaming_job.h"

#include <cstdlib>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

TableCatalog Table(int vnode_count) {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"customer", DataType::kVarchar, 2, true},
                     {"price", DataType::kFloat64, 3, true},
                     {"amount", DataType::kDecimal, 4, true},
                     {"at", DataType::kTimestamp, 5, true},
                     {"qty", DataType::kInt32, 6, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = vnode_count;
  catalog.value_indices = {0, 1, 2, 3, 4, 5};
  catalog.value_encoding = ValueEncoding::kColumnAware;
  return catalog;
}

StreamingJobOptions SmallJob() {
  StreamingJobOptions options;
  options.upstream = Table(16);
  options.initial_rows = 3000;
  options.workload.ops_per_second = 4000;
  options.workload.update_primary_key = true;
  options.workload.null_fraction = 0.1;
  options.workload.key_space = 6000;
  options.workload.seed = 7;
  options.parallelism = 3;
  options.chunk_size = 64;
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.extra_checkpoints_after_finish = 3;
  options.max_duration = absl::Seconds(120);
  return options;
}

TEST(StreamingJobTest, ViewEqualsTableInMemory) {
  auto store = NewMemoryStateStore();
  Registry registry;
  int observations = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, SmallJob(), &registry,
                      [&](const JobProgress&) { ++observations; }, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_GT(result.upstream_rows, 0u);
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GE(result.snapshot_rows, 1u);
  EXPECT_GT(observations, 0);
  EXPECT_FALSE(result.resumed);
}

TEST(StreamingJobTest, ViewEqualsTableOnRocksDbWithActionsAndResume) {
  RocksDbStateStoreOptions store_options;
  store_options.path = std::string(std::getenv("TEST_TMPDIR")) + "/job";
  std::filesystem::remove_all(store_options.path);
  StreamingJobOptions options = SmallJob();
  options.output_columns = {1, 3, 5};  // drops the pk column
  options.rate_limit = RateLimit::Fixed(20000);
  options.actions = {{3, JobAction::Kind::kPause, 0},
                     {6, JobAction::Kind::kResume, 0},
                     {8, JobAction::Kind::kSetRateLimit, 50000}};
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
  }
  // A second run of the finished job, at another parallelism, keeps the view
  // in sync.
  options.parallelism = 2;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_TRUE(result.resumed);
}

TEST(StreamingJobTest, RejectsBadOptions) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.parallelism = 17;
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = SmallJob();
  options.output_columns = {9};
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
