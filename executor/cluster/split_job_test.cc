// A streaming job split over two graphs that only the gRPC data exchange
// connects, standing for two processes over one store: the coordinator's
// graph runs the source, the view and some backfill actors; a second graph
// (the "worker") runs the others. The view equals the table for every
// backfill kind; a worker whose exchange breaks fails the attempt, and the
// recovery (a new placement) ends consistent.
#include <string>
#include <vector>

#include "executor/cluster/split_job_harness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

class SplitJobTest : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(SplitJobTest, TheViewEqualsTheTableAcrossTheExchange) {
  auto store = NewMemoryStateStore();
  const StreamingJobOptions options = SplitJobOptions(GetParam());
  SplitRun run = RunSplit(*store, *store, options);
  BACKFILL_ASSERT_OK(run.result.status());
  const JobResult& result = *run.result;
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GE(result.snapshot_rows, 1u);
  EXPECT_GT(result.upstream_ops, 0u);
  // Source, view and actor 101 here; actors 100 and 102 on the worker.
  ASSERT_EQ(run.host_actors.size(), 1u);
  EXPECT_EQ(run.host_actors[0], 3u);
  EXPECT_EQ(run.worker_actors[0], 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, SplitJobTest,
    ::testing::Values(BackfillKind::kArrangement, BackfillKind::kNoShuffle,
                      BackfillKind::kSnapshot),
    [](const ::testing::TestParamInfo<BackfillKind>& info) {
      return std::string(BackfillKindName(info.param));
    });

// The worker's exchange server goes away mid-backfill: the attempt fails
// (its edges fail, never end), the job recovers once with a new placement
// from the last checkpoint, and the view equals the table.
TEST(SplitJobFailureTest, ALostWorkerExchangeFailsTheAttemptAndTheJobRecovers) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.rate_limit = RateLimit::Fixed(4000);  // 4000 rows: about 1 s
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(10);
  std::vector<std::string> errors;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    errors.push_back(error.ToString());
  };
  SplitRun run = RunSplit(*store, *store, options, /*broken_attempts=*/1,
                          /*break_after=*/absl::Milliseconds(300));
  BACKFILL_ASSERT_OK(run.result.status());
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(run.result->recoveries, 1u);
  // Whichever side noticed first: the coordinator's side (an edge from the
  // worker failed) or the worker's (its output to the lost server).
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::AnyOf(::testing::HasSubstr("exchange edge"),
                                          ::testing::HasSubstr("): output: ")));
  EXPECT_EQ(run.host_actors.size(), 2u);
}

// A split graph is not rescaled online.
TEST(SplitJobFailureTest, ARescaleActionIsRefusedForASplitGraph) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.rate_limit = RateLimit::Fixed(2000);
  options.actions = {{2, JobAction::Kind::kRescale, 0, 2}};
  options.max_recoveries = 0;
  SplitRun run = RunSplit(*store, *store, options);
  EXPECT_THAT(run.result.status(),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                ::testing::HasSubstr("not rescaled online")));
}

}  // namespace
}  // namespace backfill
