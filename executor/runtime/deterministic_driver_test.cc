#include "executor/runtime/deterministic_driver.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/one_attempt_for_test.h"
#include "executor/runtime/streaming_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr DeterministicDriverOptions::CrashPhase kAnyStep =
    DeterministicDriverOptions::CrashPhase::kAnyStep;

TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"customer", DataType::kVarchar, 2, true},
                     {"qty", DataType::kInt32, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 16;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

StreamingJobOptions SmallJob() {
  StreamingJobOptions options;
  options.upstream = Table();
  options.output_columns = {1, 2};  // the view hides the pk
  options.initial_rows = 400;
  options.workload.seed = 3;
  options.workload.ops_per_second = 2000;
  options.workload.update_primary_key = true;
  options.workload.null_fraction = 0.1;
  options.workload.key_space = 800;
  options.parallelism = 3;
  options.chunk_size = 16;
  options.rate_limit = RateLimit::Fixed(2000);
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.extra_checkpoints_after_finish = 2;
  options.max_duration = absl::Seconds(60);
  // Paused for a while, then resumed at another rate in one barrier.
  options.actions = {{3, JobAction::Kind::kPause, 0},
                     {8, JobAction::Kind::kResume, 0},
                     {8, JobAction::Kind::kSetRateLimit, 5000}};
  return options;
}

OneAttempt RunJob(const StreamingJobOptions& options, uint64_t seed,
                  bool conflict = false) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  DeterministicDriverOptions driver;
  driver.seed = seed;
  driver.barrier_interval = options.barrier_interval;
  return RunOneAttemptForTest(
      *store, options, clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        return RunDeterministic(graph, coordinator, driver, clock);
      },
      [&](StateStore& s) {
        return conflict ? PlantConflictingViewRow(s, options)
                        : absl::OkStatus();
      });
}

// The whole job (definition, bulk load, attempts with recovery, verdict)
// on a fresh memory store and simulated clock, each attempt on the
// deterministic driver seeded seed * 1000 + its index; the first attempt
// crashes at `crash_at_step` in `phase`. `*attempts` counts the attempts.
absl::StatusOr<JobResult> RunCrashingOnce(
    const StreamingJobOptions& options, uint64_t seed, uint64_t crash_at_step,
    DeterministicDriverOptions::CrashPhase phase,
    std::function<void(const JobProgress&)> observer, uint32_t* attempts) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  *attempts = 0;
  return RunStreamingJobWithDriver(
      *store, options, nullptr, std::move(observer), clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        DeterministicDriverOptions driver;
        driver.seed = seed * 1000 + *attempts;
        driver.barrier_interval = options.barrier_interval;
        if ((*attempts)++ == 0) {
          driver.crash_at_step = crash_at_step;
          driver.crash_phase = phase;
        }
        return RunDeterministic(graph, coordinator, driver, clock);
      });
}

// A seeded step in [1, 1500] to crash the first attempt at.
uint64_t SeededCrashStep(uint64_t seed) {
  std::mt19937_64 random(seed);
  return std::uniform_int_distribution<uint64_t>(1, 1500)(random);
}

TEST(DeterministicDriverTest,
     RunsTheShippedGraphToAConsistentViewForManySeeds) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const OneAttempt run = RunJob(SmallJob(), seed);
    BACKFILL_ASSERT_OK(run.status);
    ASSERT_TRUE(run.verdict.has_value());
    EXPECT_TRUE(run.verdict->consistent) << run.verdict->mismatch;
    EXPECT_GT(run.verdict->view_rows, 0u);
    EXPECT_GE(run.result.snapshot_rows, 400u);
    EXPECT_GT(run.result.upstream_ops, 0u);
    EXPECT_GT(run.result.checkpoints, 3u);
    // The job state of the last checkpoint: resumed, at the new rate.
    ASSERT_TRUE(run.saved.has_value());
    EXPECT_FALSE(run.saved->state.paused);
    EXPECT_EQ(run.saved->state.rate_limit, RateLimit::Fixed(5000));
    EXPECT_EQ(run.saved->state.parallelism, 3u);
    EXPECT_EQ(run.saved->state.epochs_since_creation, run.result.epochs - 1);
  }
}

// Online rescales 3 -> 2 -> 4 -> 1 through the deterministic driver: new
// actors join mid-attempt, old ones are retired after their last
// checkpoint, at seeded points of the backfill; one rescale falls inside
// the pause.
StreamingJobOptions RescalingJob() {
  StreamingJobOptions options = SmallJob();
  options.actions.push_back({2, JobAction::Kind::kRescale, 0, 2});
  options.actions.push_back({5, JobAction::Kind::kRescale, 0, 4});
  options.actions.push_back({10, JobAction::Kind::kRescale, 0, 1});
  return options;
}

TEST(DeterministicDriverTest, RescalesOnlineToAConsistentViewForManySeeds) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const OneAttempt run = RunJob(RescalingJob(), seed);
    BACKFILL_ASSERT_OK(run.status);
    ASSERT_TRUE(run.verdict.has_value());
    EXPECT_TRUE(run.verdict->consistent) << run.verdict->mismatch;
    EXPECT_EQ(run.result.rescales, 3u);
    EXPECT_EQ(run.result.parallelism, 1u);
    EXPECT_GE(run.result.snapshot_rows, 400u);
    ASSERT_TRUE(run.saved.has_value());
    EXPECT_EQ(run.saved->state.parallelism, 1u);
    EXPECT_EQ(run.saved->state.rate_limit, RateLimit::Fixed(5000));
  }
}

// The progress reported at a rescale's barrier includes the rows the old
// actors read up to it (found by //tests:backfill_simulation, seed 76 with a
// rescale and a pause at one epoch: the report lagged a barrier, so the old
// actors' last rows showed up as read while the job was paused).
TEST(DeterministicDriverTest, NoSnapshotRowsReportedWhilePausedAcrossARescale) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    StreamingJobOptions options = SmallJob();
    options.checkpoint_frequency = 1;
    options.rate_limit = RateLimit::Disabled();
    options.actions = {{2, JobAction::Kind::kRescale, 0, 2},
                       {2, JobAction::Kind::kPause, 0},
                       {6, JobAction::Kind::kResume, 0}};
    std::vector<JobProgress> reports;
    std::unique_ptr<StateStore> store = NewMemoryStateStore();
    SimulatedClock clock;
    DeterministicDriverOptions driver;
    driver.seed = seed;
    driver.barrier_interval = options.barrier_interval;
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result,
        RunStreamingJobWithDriver(
            *store, options, nullptr,
            [&](const JobProgress& progress) { reports.push_back(progress); },
            clock, [&](JobGraph& graph, BarrierCoordinator& coordinator) {
              return RunDeterministic(graph, coordinator, driver, clock);
            }));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_EQ(result.rescales, 1u);
    int paused_intervals = 0;
    for (size_t i = 1; i < reports.size(); ++i) {
      if (!reports[i - 1].rate_limit.is_paused()) continue;
      ++paused_intervals;
      EXPECT_EQ(reports[i].snapshot_rows, reports[i - 1].snapshot_rows)
          << "barrier " << i << " after a paused one";
    }
    EXPECT_EQ(paused_intervals, 4);
  }
}

// A crash anywhere around the rescales: the job recovers with the
// parallelism of its last checkpoint and ends consistent at the last one.
TEST(DeterministicDriverTest, ACrashAroundRescalesRecoversToAConsistentView) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const uint64_t crash_at_step = SeededCrashStep(seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", crash at step ", crash_at_step));
    StreamingJobOptions options = RescalingJob();
    options.recovery_backoff = absl::ZeroDuration();  // simulated time
    uint32_t attempts = 0;
    absl::StatusOr<JobResult> result =
        RunCrashingOnce(options, seed, crash_at_step, kAnyStep, {}, &attempts);
    BACKFILL_ASSERT_OK(result.status());
    EXPECT_TRUE(result->consistent) << result->mismatch;
    EXPECT_EQ(result->recoveries, attempts - 1);
    EXPECT_EQ(result->parallelism, 1u);
    EXPECT_EQ(result->job_state.parallelism, 1u);
  }
}

TEST(DeterministicDriverTest, TheSameSeedGivesTheSameRun) {
  for (uint64_t seed : {5u, 11u}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const OneAttempt a = RunJob(SmallJob(), seed);
    const OneAttempt b = RunJob(SmallJob(), seed);
    BACKFILL_ASSERT_OK(a.status);
    BACKFILL_ASSERT_OK(b.status);
    EXPECT_EQ(a.result.epochs, b.result.epochs);
    EXPECT_EQ(a.result.checkpoints, b.result.checkpoints);
    EXPECT_EQ(a.result.upstream_ops, b.result.upstream_ops);
    EXPECT_EQ(a.result.snapshot_rows, b.result.snapshot_rows);
    EXPECT_EQ(a.verdict->upstream_rows, b.verdict->upstream_rows);
  }
}

TEST(DeterministicDriverTest,
     ABarrierNotCollectedByTheDeadlineIsDeadlineExceeded) {
  StreamingJobOptions options = SmallJob();
  options.actions = {};
  options.rate_limit = RateLimit::Fixed(10);  // 400 rows: 40 s
  options.max_duration = absl::Seconds(2);
  const OneAttempt run = RunJob(options, 1);
  EXPECT_THAT(run.status, StatusIs(absl::StatusCode::kDeadlineExceeded,
                                   HasSubstr("did not finish within its "
                                             "max_duration")));
}

TEST(DeterministicDriverTest, AnActorsErrorIsTheAttemptsError) {
  // The view's first insert of a key it already holds fails the view actor;
  // the attempt fails with that error, not with its consumers' end of input.
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const OneAttempt run = RunJob(SmallJob(), seed, /*conflict=*/true);
    EXPECT_FALSE(run.status.ok());
    EXPECT_THAT(run.status.message(), HasSubstr("Materialize(view, actor 2)"));
    EXPECT_THAT(run.status.message(), Not(HasSubstr("input ended")));
  }
}

// The whole job (definition, bulk load, attempts with recovery, verdict) on
// the deterministic driver, its first attempt crashed at a seeded step: the
// next attempt resumes from the last checkpoint and the view is consistent.
TEST(DeterministicDriverTest, ACrashAnywhereRecoversToAConsistentView) {
  int crashed = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const uint64_t crash_at_step = SeededCrashStep(seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", crash at step ", crash_at_step));
    StreamingJobOptions options = SmallJob();
    options.recovery_backoff = absl::ZeroDuration();  // simulated time
    uint32_t attempts = 0;
    absl::StatusOr<JobResult> result =
        RunCrashingOnce(options, seed, crash_at_step, kAnyStep, {}, &attempts);
    BACKFILL_ASSERT_OK(result.status());
    EXPECT_TRUE(result->consistent) << result->mismatch;
    EXPECT_EQ(result->recoveries, attempts - 1);
    EXPECT_FALSE(result->job_state.paused);
    EXPECT_EQ(result->job_state.rate_limit, RateLimit::Fixed(5000));
    if (attempts > 1) ++crashed;
    // The run created the job: a recovery within it is not a resume.
    EXPECT_FALSE(result->resumed);
  }
  // The crashes land inside the runs (not after they finished).
  EXPECT_GE(crashed, 6);
}

// Adaptive mode on the deterministic driver: the controller moves the rate
// on simulated barrier latencies, a crash at a seeded step recovers with the
// mode in force, and the view ends consistent.
TEST(DeterministicDriverTest, AnAdaptiveJobFinishesConsistentAcrossACrash) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const uint64_t crash_at_step = SeededCrashStep(seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", crash at step ", crash_at_step));
    StreamingJobOptions options = SmallJob();
    options.actions = {};
    options.initial_rows = 3000;  // > 1 s at the initial 1024 rows/s
    options.workload.key_space = 6000;
    options.rate_limit = RateLimit::Disabled();
    options.adaptive_target_barrier_latency = absl::Milliseconds(5);
    options.adaptive_min_rows_per_second = 50;
    options.recovery_backoff = absl::ZeroDuration();
    uint32_t attempts = 0;
    std::vector<RateLimit> rates;
    absl::StatusOr<JobResult> result = RunCrashingOnce(
        options, seed, crash_at_step, kAnyStep,
        [&](const JobProgress& progress) {
          if (!progress.backfill_done) rates.push_back(progress.rate_limit);
        },
        &attempts);
    BACKFILL_ASSERT_OK(result.status());
    EXPECT_TRUE(result->consistent) << result->mismatch;
    EXPECT_EQ(result->recoveries, attempts - 1);
    EXPECT_TRUE(result->job_state.adaptive());
    EXPECT_EQ(result->job_state.adaptive_target, absl::Milliseconds(5));
    EXPECT_GE(result->job_state.adaptive_rows_per_second, 50u);
    // Every barrier ran at a controller rate, and the controller moved it.
    ASSERT_FALSE(rates.empty());
    for (const RateLimit& rate : rates) EXPECT_TRUE(rate.is_fixed()) << rate;
    auto by_rate = [](RateLimit a, RateLimit b) {
      return a.rows_per_second() < b.rows_per_second();
    };
    EXPECT_LT(std::min_element(rates.begin(), rates.end(), by_rate)
                  ->rows_per_second(),
              std::max_element(rates.begin(), rates.end(), by_rate)
                  ->rows_per_second());
  }
}

// Crashes at a phase: while a barrier is in the graph, and after the view
// collected one but before its checkpoint. Each lands (the attempt fails
// saying where) and the job recovers to a consistent view.
TEST(DeterministicDriverTest, ACrashAtABarrierPhaseRecovers) {
  using Phase = DeterministicDriverOptions::CrashPhase;
  for (Phase phase : {Phase::kBarrierInFlight, Phase::kBarrierCollected}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(absl::StrCat("seed ", seed, ", phase ",
                                static_cast<int>(phase)));
      StreamingJobOptions options = SmallJob();
      options.recovery_backoff = absl::ZeroDuration();
      std::vector<std::string> errors;
      options.on_recovery = [&](const absl::Status& error, uint32_t) {
        errors.push_back(std::string(error.message()));
      };
      uint32_t attempts = 0;
      absl::StatusOr<JobResult> result =
          RunCrashingOnce(options, seed, 50 * seed, phase, {}, &attempts);
      BACKFILL_ASSERT_OK(result.status());
      EXPECT_TRUE(result->consistent) << result->mismatch;
      ASSERT_EQ(errors.size(), 1u);
      EXPECT_THAT(errors[0], HasSubstr(phase == Phase::kBarrierInFlight
                                           ? "(barrier in flight"
                                           : "(barrier collected"));
    }
  }
}

// A wake-up deadline between two nanoseconds (a source at 2376 ops/s) is
// reached: the simulated clock rounds the time the driver sets up, so the
// driver does not spin.
TEST(DeterministicDriverTest, ASubNanosecondDeadlineIsReached) {
  StreamingJobOptions options = SmallJob();
  options.workload.ops_per_second = 2376;
  options.workload.max_ops = 300;
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
      *store, options, nullptr, {}, clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        DeterministicDriverOptions driver;
        driver.barrier_interval = options.barrier_interval;
        driver.max_steps = 1'000'000;
        return RunDeterministic(graph, coordinator, driver, clock);
      });
  BACKFILL_ASSERT_OK(result.status());
  EXPECT_TRUE(result->consistent) << result->mismatch;
  EXPECT_EQ(result->upstream_ops, 300u);
}

}  // namespace
}  // namespace backfill
