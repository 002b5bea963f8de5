// The streaming job with the two backfills whose vnode split is fixed
// (StreamingJobOptions::backfill_kind = kNoShuffle, kSnapshot): one position
// per actor, so both are checked alike: the view equals the table (with
// pauses and a rate limit), a restart resumes from the saved progress, and a
// restart at another parallelism and a rescale action are refused. The
// no-shuffle backfill reads the table its actor's own writer writes; the
// snapshot backfill also keeps a log (its budget holds the upstream) and
// refuses to resume another kind's progress. ResumedJobTest runs every
// kind, the arrangement backfill too, through a resumed run's counts.
#include <functional>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/runtime/streaming_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

StreamingJobOptions Job(BackfillKind kind) {
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
  options.backfill_kind = kind;
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

// The test name of a parameter: the kind's name.
std::string KindName(const ::testing::TestParamInfo<BackfillKind>& info) {
  return std::string(BackfillKindName(info.param));
}

class FixedSplitJobTest : public ::testing::TestWithParam<BackfillKind> {};

// Runs `options` (Job) at 1000 rows/s until its deadline ends it
// mid-backfill (3000 rows: about 3 s; 0.8 s allowed); then it resumes.
// `observer` sees its progress.
void RunUntilTheDeadline(
    StateStore& store, StreamingJobOptions options,
    std::function<void(const JobProgress&)> observer = {}) {
  options.rate_limit = RateLimit::Fixed(1000);
  options.max_duration = absl::Milliseconds(800);
  EXPECT_THAT(RunStreamingJob(store, options, nullptr, std::move(observer),
                              Clock::Real()),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_P(FixedSplitJobTest, ViewEqualsTableWithPauseAndRateLimit) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = Job(GetParam());
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
  if (GetParam() == BackfillKind::kSnapshot) {
    EXPECT_GT(result.peak_snapshot_log_bytes, 0u);
  } else {
    EXPECT_EQ(result.peak_snapshot_log_bytes, 0u);
  }
}

TEST_P(FixedSplitJobTest, DoesNotResumeAtAnotherParallelism) {
  auto store = NewMemoryStateStore();
  RunUntilTheDeadline(*store, Job(GetParam()));
  StreamingJobOptions rescaled = Job(GetParam());
  rescaled.overrides.parallelism = 2;
  EXPECT_THAT(RunStreamingJob(*store, rescaled, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat(
                           BackfillKindName(GetParam()),
                           " backfill cannot resume at another parallelism: "
                           "it runs at 3, asked for 2"))));
}

class ResumedJobTest : public ::testing::TestWithParam<BackfillKind> {};

// Runs `options` on `store` to the end, checking that it resumed the job
// there and ended consistent; the result, or nullopt after a failure.
std::optional<JobResult> ResumeToTheEnd(StateStore& store,
                                        const StreamingJobOptions& options) {
  absl::StatusOr<JobResult> resumed =
      RunStreamingJob(store, options, nullptr, {}, Clock::Real());
  EXPECT_TRUE(resumed.ok()) << resumed.status();
  if (!resumed.ok()) return std::nullopt;
  EXPECT_TRUE(resumed->consistent) << resumed->mismatch;
  EXPECT_TRUE(resumed->resumed);
  return *std::move(resumed);
}

// A resumed job reads on from its saved progress, and counts as its own the
// rows it read in its first epoch: the rows read before it are those its
// actors' persisted progress held when they started, not what they
// reported at the first barrier (for a rest read at once, everything: the
// command printed 0 snapshot rows/s for a run resumed after its time limit).
TEST_P(ResumedJobTest, CountsTheRowsItReadInItsFirstEpochAsItsOwn) {
  auto store = NewMemoryStateStore();
  RunUntilTheDeadline(*store, Job(GetParam()));
  StreamingJobOptions options = Job(GetParam());
  options.overrides.rate_limit = RateLimit::Disabled();
  // Unlimited, the rest is read before the first barrier after the
  // initial one.
  options.barrier_interval = absl::Milliseconds(300);
  const std::optional<JobResult> run = ResumeToTheEnd(*store, options);
  ASSERT_TRUE(run.has_value());
  const JobResult& resumed = *run;
  EXPECT_EQ(resumed.recoveries, 0u);
  ASSERT_TRUE(resumed.snapshot_rows_before_run.has_value());
  // The first run's rows were not read again: at most 1000 rows/s for
  // under 0.8 s, it read under half.
  EXPECT_GT(*resumed.snapshot_rows_before_run, 0u);
  EXPECT_LT(*resumed.snapshot_rows_before_run, resumed.snapshot_rows / 2);
  EXPECT_EQ(resumed.snapshot_rows_this_run,
            resumed.snapshot_rows - *resumed.snapshot_rows_before_run);
  EXPECT_GT(resumed.snapshot_rows_per_second, 0);
}

// A resumed run reports the upstream changes it generated, not the
// source's offset since the job began: here the first run's source made
// all the changes it may (max_ops), so the resumed one makes none (the
// command reported the first run's 500 again).
TEST_P(ResumedJobTest, CountsOnlyTheUpstreamChangesOfThisRun) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = Job(GetParam());
  options.workload.max_ops = 500;  // about 0.13 s at 4000 ops/s
  JobProgress last;
  RunUntilTheDeadline(*store, options, [&last](const JobProgress& progress) {
    last = progress;
  });
  EXPECT_EQ(last.upstream_ops, 500u);
  const std::optional<JobResult> resumed = ResumeToTheEnd(*store, options);
  ASSERT_TRUE(resumed.has_value());
  EXPECT_EQ(resumed->upstream_ops_before_run, 500u);
  EXPECT_EQ(resumed->upstream_ops, 0u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ResumedJobTest,
                         ::testing::Values(BackfillKind::kArrangement,
                                           BackfillKind::kNoShuffle,
                                           BackfillKind::kSnapshot),
                         KindName);

TEST_P(FixedSplitJobTest, ARescaleActionIsRejected) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = Job(GetParam());
  options.actions = {{3, JobAction::Kind::kRescale, 0, 2}};
  EXPECT_THAT(
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat(BackfillKindName(GetParam()),
                                      " backfill cannot be rescaled"))));
}

INSTANTIATE_TEST_SUITE_P(Kinds, FixedSplitJobTest,
                         ::testing::Values(BackfillKind::kNoShuffle,
                                           BackfillKind::kSnapshot),
                         KindName);

TEST(SnapshotJobTest, ASmallLogBudgetHoldsTheUpstreamAndEndsConsistent) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = Job(BackfillKind::kSnapshot);
  options.rate_limit = RateLimit::Fixed(6000);
  options.snapshot_log_budget_bytes = 4096;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  // Each of the 3 actors exceeds its budget by at most one upstream chunk.
  EXPECT_GT(result.peak_snapshot_log_bytes, 0u);
  EXPECT_LT(result.peak_snapshot_log_bytes, 3u * (4096 + 256 * 1024));
}

TEST(SnapshotJobTest, ARerunOfAnotherKindOverSavedProgressIsRefused) {
  for (BackfillKind first :
       {BackfillKind::kArrangement, BackfillKind::kSnapshot}) {
    SCOPED_TRACE(BackfillKindName(first));
    auto store = NewMemoryStateStore();
    StreamingJobOptions options = Job(first);
    options.rate_limit = RateLimit::Fixed(1000);
    options.max_duration = absl::Milliseconds(500);
    EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
                StatusIs(absl::StatusCode::kDeadlineExceeded));
    options.backfill_kind = first == BackfillKind::kSnapshot
                                ? BackfillKind::kArrangement
                                : BackfillKind::kSnapshot;
    options.max_duration = absl::Seconds(60);
    EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("the saved backfill progress is of")));
  }
}

}  // namespace
}  // namespace backfill
