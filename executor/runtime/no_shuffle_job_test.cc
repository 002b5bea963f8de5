// The streaming job with a no-shuffle backfill (StreamingJobOptions::
// backfill_kind = kNoShuffle): the upstream table written by one writer per
// backfill actor, each backfill beside its writer; the view equals the table,
// a restart resumes from the saved positions, and a restart at another
// parallelism is refused.
#include <string>

#include "executor/runtime/streaming_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

StreamingJobOptions NoShuffleJob() {
  StreamingJobOptions options;
  options.upstream.table_id = 1;
  options.upstream.name = "orders";
  options.upstream.columns = {{"id", DataType::kInt64, 1, false},
                              {"customer", DataType::kVarchar, 2, true},
                              {"qty", DataType::kInt32, 3, true}};
  options.upstream.pk_indices = {0};
  options.upstream.pk_orders = {OrderType::Descending()};
  options.upstream.dist_key_indices = {0};
  options.upstream.vnode_count = 16;
  options.upstream.value_indices = {0, 1, 2};
  options.output_columns = {1, 2};  // the pk is hidden in the view
  options.backfill_kind = BackfillKind::kNoShuffle;
  options.initial_rows = 3000;
  options.workload.ops_per_second = 4000;
  options.workload.update_primary_key = true;
  options.workload.null_fraction = 0.1;
  options.workload.key_space = 6000;
  options.workload.seed = 11;
  options.parallelism = 3;
  options.chunk_size = 64;
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.max_duration = absl::Seconds(120);
  return options;
}

TEST(NoShuffleJobTest, ViewEqualsTableWithPauseAndRateLimit) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = NoShuffleJob();
  options.actions = {{2, JobAction::Kind::kPause, 0},
                     {6, JobAction::Kind::kResume, 0},
                     {6, JobAction::Kind::kSetRateLimit, 20000}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_GT(result.upstream_rows, 0u);
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GE(result.snapshot_rows, 1u);
  EXPECT_EQ(result.recoveries, 0u);
}

TEST(NoShuffleJobTest, ResumesFromItsPositionsButNotAtAnotherParallelism) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = NoShuffleJob();
  options.rate_limit = RateLimit::Fixed(1000);  // 3000 rows: about 3 s
  options.max_duration = absl::Milliseconds(800);
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  StreamingJobOptions rescaled = options;
  rescaled.max_duration = absl::Seconds(60);
  rescaled.overrides.parallelism = 2;
  EXPECT_THAT(RunStreamingJob(*store, rescaled, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot resume at another parallelism: it "
                                 "runs at 3, asked for 2")));
  options.max_duration = absl::Seconds(60);
  options.overrides.rate_limit = RateLimit::Disabled();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult resumed,
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(resumed.consistent) << resumed.mismatch;
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.recoveries, 0u);
  // The first run's rows were not read again.
  EXPECT_LT(resumed.snapshot_rows_this_run, resumed.snapshot_rows);
}

TEST(NoShuffleJobTest, ARescaleActionIsRejected) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = NoShuffleJob();
  options.actions = {{3, JobAction::Kind::kRescale, 0, 2}};
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot be rescaled")));
}

}  // namespace
}  // namespace backfill
