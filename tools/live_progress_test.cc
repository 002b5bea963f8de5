#include "tools/live_progress.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "executor/runtime/deterministic_driver.h"
#include "executor/runtime/streaming_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/rate_limit.h"
#include "storage/forwarding_state_store.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/vnode_size_estimator.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"
#include "tools/scenario_spec.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/live_progress_",
                      ::getpid(), "_", counter.fetch_add(1));
}

// The default scenario's job, its row count and the upstream's rate scaled
// down by `divisor` together (the same shape: the same share of the table
// changes per second of the backfill).
StreamingJobOptions ScaledDefaultJob(uint64_t divisor) {
  tools::Scenario scenario = DefaultScenario();
  scenario.set_initial_rows(scenario.initial_rows() / divisor);
  scenario.mutable_workload()->set_key_space(scenario.workload().key_space() /
                                             divisor);
  scenario.mutable_workload()->set_ops_per_second(
      scenario.workload().ops_per_second() / divisor);
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(scenario);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec->job;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// Before the first barrier the ticks show what the job does, labelled,
// without a percentage; then every Observe shows the snapshot's share; a
// recovery is labelled again.
TEST(LiveProgressTest, PhasesBeforeTheBackfillAreLabelledWithoutAPercentage) {
  SimulatedClock clock;
  std::ostringstream out;
  std::atomic<uint64_t> written{0};
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  options.initial_rows = 1000;
  options.upstream_written_rows = [&] { return written.load(); };
  LiveProgress live(&out,
                    {.mode = DisplayMode::kPlain, .plain_interval_seconds = 1},
                    options, clock);
  live.Tick();
  clock.AdvanceTime(absl::Seconds(1));
  written = 400;
  live.Tick();
  clock.AdvanceTime(absl::Seconds(1));
  written = 1000;
  live.Tick();
  clock.AdvanceTime(absl::Seconds(1));
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  JobProgress progress;
  progress.seconds = 3;
  const SnapshotProgressEstimate estimate =
      live.Observe(progress, *store, nullptr);
  EXPECT_EQ(estimate.percent, 0);
  EXPECT_EQ(estimate.vnodes_total, 256u);
  clock.AdvanceTime(absl::Seconds(1));
  live.OnRecovery();
  live.Tick();
  live.Finish();
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 5u) << out.str();
  EXPECT_EQ(lines[0], "  starting | 0.0s");
  EXPECT_EQ(lines[1], "  bulk load | rows 400/1,000 | 1.0s");
  EXPECT_EQ(lines[2], "  creating the view | 2.0s");
  EXPECT_THAT(lines[3], StartsWith("   0.0% of snapshot | vnodes 0/256 done"));
  EXPECT_EQ(lines[4], "  recovering from the last checkpoint | 4.0s");
  for (int i : {0, 1, 2, 4}) EXPECT_THAT(lines[i], Not(HasSubstr("%")));
}

// The job's rate limit in force (the adaptive controller's rate) shows on
// the line while the backfill reads; once it is done the limit binds nothing
// and is not shown.
TEST(LiveProgressTest, TheRateLimitInForceShowsWhileTheBackfillReads) {
  SimulatedClock clock;
  std::ostringstream out;
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  LiveProgress live(&out,
                    {.mode = DisplayMode::kPlain, .plain_interval_seconds = 0},
                    options, clock);
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  JobProgress progress;
  progress.rate_limit = RateLimit::Fixed(84'864);
  live.Observe(progress, *store, nullptr);
  progress.rate_limit = RateLimit::Pause();
  live.Observe(progress, *store, nullptr);
  progress.rate_limit = RateLimit::Disabled();
  live.Observe(progress, *store, nullptr);
  progress.rate_limit = RateLimit::Fixed(6'000);
  progress.adaptive_target_unreachable = true;
  live.Observe(progress, *store, nullptr);
  progress.rate_limit = RateLimit::Fixed(5'000);
  progress.backfill_done = true;
  live.Observe(progress, *store, nullptr);
  live.Finish();
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 5u) << out.str();
  // One sample gives no rate yet: "--", not 0.
  EXPECT_THAT(lines[0], HasSubstr(" | -- rows/s (limit 84,864) | ETA "));
  EXPECT_THAT(lines[0], HasSubstr(" | upstream -- ops/s | "));
  EXPECT_THAT(lines[1], HasSubstr(" rows/s (paused) | ETA "));
  EXPECT_THAT(lines[3],
              HasSubstr(" rows/s (limit 6,000, target unreachable) | ETA "));
  for (int i : {2, 4}) {
    EXPECT_THAT(lines[i], Not(HasSubstr("limit")));
    EXPECT_THAT(lines[i], Not(HasSubstr("paused")));
    EXPECT_THAT(lines[i], Not(HasSubstr("unreachable")));
  }
}

TEST(LiveProgressTest, AResumedJobSaysSo) {
  SimulatedClock clock;
  std::ostringstream out;
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  options.initial_rows = 1000;
  options.resuming = true;
  options.upstream_written_rows = [] { return uint64_t{10}; };
  LiveProgress live(&out, {.mode = DisplayMode::kPlain}, options, clock);
  live.Tick();
  live.Finish();
  EXPECT_EQ(out.str(), "  resuming from the last checkpoint | 0.0s\n");
}

// The ticker thread shows the phase at once (its first tick runs before it
// looks at Finish), and runs beside Observe.
TEST(LiveProgressTest, TheTickerShowsThePhaseAtOnce) {
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  options.initial_rows = 1000;
  {
    SimulatedClock clock;
    std::ostringstream out;
    LiveProgress live(&out, {.mode = DisplayMode::kPlain}, options, clock);
    live.Start();
    live.Finish();
    EXPECT_EQ(out.str(), "  starting | 0.0s\n");
  }
  SimulatedClock clock;
  std::ostringstream out;
  LiveProgress live(&out,
                    {.mode = DisplayMode::kPlain, .plain_interval_seconds = 0},
                    options, clock);
  live.Start();
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  for (int i = 1; i <= 5; ++i) {
    clock.AdvanceTime(absl::Seconds(1));  // wakes the ticker
    JobProgress progress;
    progress.seconds = i;
    live.Observe(progress, *store, nullptr);
  }
  live.Finish();
  EXPECT_THAT(out.str(), HasSubstr("% of snapshot | vnodes 0/256 done"));
}

// Without an output nothing is shown and no thread runs, but the estimate
// is made (for the metrics).
TEST(LiveProgressTest, WithoutAnOutputOnlyEstimates) {
  SimulatedClock clock;
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  LiveProgress live(nullptr, {}, options, clock);
  live.Start();
  live.Tick();
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  EXPECT_EQ(live.Observe(JobProgress{}, *store, nullptr).vnodes_total, 256u);
}

// A store that counts the reads of the progress table (each read opens a
// local instance) and reports the committed epoch the test sets; the rest
// goes to a memory store.
class CountingStore : public ForwardingStateStore {
 public:
  CountingStore() : ForwardingStateStore(nullptr) { set_inner(base_.get()); }
  int reads() const { return reads_; }
  void set_committed(Epoch epoch) { committed_ = epoch; }

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override {
    ++reads_;
    return ForwardingStateStore::NewLocalStateStore(table_id, options);
  }
  Epoch CommittedEpoch(TableId) const override { return committed_; }
  bool IsCommitted(TableId, Epoch epoch) const override {
    return committed_ >= epoch;
  }

 private:
  std::unique_ptr<StateStore> base_ = NewMemoryStateStore();
  Epoch committed_{0};
  int reads_ = 0;
};

// Fails its first estimate, then gives every vnode 1 byte.
class FlakySizes : public VnodeSizeEstimator {
 public:
  int calls() const { return calls_; }
  absl::StatusOr<std::vector<uint64_t>> ApproximateVnodeBytes(
      TableId, int vnode_count) override {
    if (calls_++ == 0) return absl::UnavailableError("flaky estimate");
    return std::vector<uint64_t>(vnode_count, 1);
  }

 private:
  int calls_ = 0;
};

// The progress table is read only when the committed epoch moved and
// min_read_interval_seconds passed (or an actor's vnodes finished); a failed
// size estimate is tried again at the next read, a good one is kept.
TEST(LiveProgressTest, ReadsAreThrottledAndAFailedSizeEstimateIsRetried) {
  SimulatedClock clock;
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  options.min_read_interval_seconds = 0.5;
  LiveProgress live(nullptr, {}, options, clock);
  CountingStore store;
  FlakySizes sizes;
  JobProgress progress;
  // Observes at `seconds` of job time; the progress table's reads so far.
  auto reads_after_observing_at = [&](double seconds) {
    progress.seconds = seconds;
    live.Observe(progress, store, &sizes);
    return store.reads();
  };
  EXPECT_EQ(reads_after_observing_at(10), 1);
  EXPECT_EQ(sizes.calls(), 1);
  // The same committed epoch: nothing to read.
  EXPECT_EQ(reads_after_observing_at(20), 1);
  // A new epoch, but too soon (after the read at 10).
  store.set_committed(Epoch(1));
  EXPECT_EQ(reads_after_observing_at(10.1), 1);
  // Due: read, and the sizes are estimated again.
  EXPECT_EQ(reads_after_observing_at(10.6), 2);
  EXPECT_EQ(sizes.calls(), 2);
  // Too soon, but an actor's vnodes finished: read; the sizes are kept.
  store.set_committed(Epoch(2));
  progress.vnodes_completed = 4;
  EXPECT_EQ(reads_after_observing_at(10.7), 3);
  EXPECT_EQ(sizes.calls(), 2);
  // Too soon and no news.
  store.set_committed(Epoch(3));
  EXPECT_EQ(reads_after_observing_at(10.8), 3);
}

// A snapshot backfill keeps one progress row per actor: the share is the
// actors' rows over the initial rows and their finished vnodes, without a
// read of the per-vnode progress table (which holds nothing for this kind).
TEST(LiveProgressTest, ASnapshotBackfillsShareIsTheActorsRowsOverThePrior) {
  SimulatedClock clock;
  LiveProgressOptions options;
  options.definition = JobDefinitionOf(ScaledDefaultJob(1000));
  options.backfill_kind = BackfillKind::kSnapshot;
  options.initial_rows = 1000;
  options.min_read_interval_seconds = 0;
  LiveProgress live(nullptr, {}, options, clock);
  CountingStore store;
  FlakySizes sizes;
  JobProgress progress;
  progress.seconds = 1;
  progress.snapshot_rows = 250;
  SnapshotProgressEstimate estimate = live.Observe(progress, store, &sizes);
  EXPECT_DOUBLE_EQ(estimate.percent, 25);
  EXPECT_EQ(estimate.rows_read, 250u);
  EXPECT_EQ(estimate.estimated_total_rows, 1000u);
  EXPECT_EQ(estimate.vnodes_finished, 0u);
  EXPECT_EQ(estimate.vnodes_total, 256u);
  // One actor of two joined: its vnodes are done; more rows than the
  // prior raise the total, and the share stays below 100.
  store.set_committed(Epoch(1));
  progress.seconds = 2;
  progress.snapshot_rows = 1100;
  progress.vnodes_completed = 128;
  estimate = live.Observe(progress, store, &sizes);
  EXPECT_EQ(estimate.vnodes_finished, 128u);
  EXPECT_EQ(estimate.estimated_total_rows, 1100u);
  EXPECT_DOUBLE_EQ(estimate.percent, 99.9);
  EXPECT_DOUBLE_EQ(estimate.rows_per_second, 850);
  progress.seconds = 3;
  progress.backfill_done = true;
  estimate = live.Observe(progress, store, &sizes);
  EXPECT_EQ(estimate.percent, 100);
  EXPECT_EQ(estimate.vnodes_finished, 256u);
  EXPECT_EQ(estimate.eta_seconds, 0);
  // Neither the progress table nor the sizes were read.
  EXPECT_EQ(store.reads(), 0);
  EXPECT_EQ(sizes.calls(), 0);
}

// The same with a real snapshot backfill (the default scenario scaled down
// 100 times, the deterministic driver, the memory store): the share grows
// while the snapshot is read, never decreases, and is 100 at the end.
TEST(LiveProgressTest, ASnapshotBackfillsShareGrowsWhileItRuns) {
  constexpr uint64_t kSeed = 20;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  StreamingJobOptions options = ScaledDefaultJob(100);
  options.backfill_kind = BackfillKind::kSnapshot;
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  LiveProgressOptions live_options;
  live_options.definition = JobDefinitionOf(options);
  live_options.backfill_kind = options.backfill_kind;
  live_options.initial_rows = options.initial_rows;
  LiveProgress live(nullptr, {}, live_options, clock);
  std::vector<double> percents;
  auto observer = [&](const JobProgress& progress) {
    percents.push_back(live.Observe(progress, *store, nullptr).percent);
  };
  absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
      *store, options, nullptr, observer, clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        DeterministicDriverOptions driver;
        driver.seed = kSeed;
        driver.barrier_interval = options.barrier_interval;
        driver.early_barrier_probability = 0.25;
        return RunDeterministic(graph, coordinator, driver, clock);
      });
  BACKFILL_ASSERT_OK(result.status());
  ASSERT_TRUE(result->consistent) << result->mismatch;
  ASSERT_FALSE(percents.empty());
  SCOPED_TRACE(absl::StrCat("percentages: ", absl::StrJoin(percents, ", ")));
  EXPECT_TRUE(std::is_sorted(percents.begin(), percents.end()));
  EXPECT_TRUE(std::any_of(percents.begin(), percents.end(),
                          [](double p) { return p > 0 && p < 100; }));
  EXPECT_EQ(percents.back(), 100);
}

// Issue 16 point 2: the default scenario (scaled down 25 times: 40,000
// rows, the same shape), run on the deterministic driver over RocksDB with
// the estimate the command shows: the percentage never decreases, stays
// below 100 until every snapshot row was read, is 100 at the end, and passes
// 25% before half of the snapshot's rows have been read.
TEST(LiveProgressTest, DefaultScenarioPassesAQuarterBeforeHalfTheSnapshot) {
  constexpr uint64_t kSeed = 16;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  StreamingJobOptions options = ScaledDefaultJob(25);
  ASSERT_EQ(options.initial_rows, 40'000u);
  options.recovery_backoff = absl::ZeroDuration();
  RocksDbStateStoreOptions store_options;
  store_options.path = NewTestDirectory();
  store_options.sync_on_checkpoint = false;
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStateStore> store,
                                RocksDbStateStore::Open(store_options));
  SimulatedClock clock;
  LiveProgressOptions live_options;
  live_options.definition = JobDefinitionOf(options);
  live_options.initial_rows = options.initial_rows;
  // Every checkpoint: simulated barriers are far apart in job time.
  live_options.min_read_interval_seconds = 0;
  std::ostringstream out;
  LiveProgress live(&out, {.mode = DisplayMode::kPlain}, live_options, clock);
  struct Point {
    uint64_t rows;  // the actors' snapshot rows when the line was shown
    double percent;
  };
  std::vector<Point> points;
  auto observer = [&](const JobProgress& progress) {
    // Before the sizes are taken, the table goes into table files, as most
    // of the command's million-row table is: their index blocks give each
    // vnode's size. (Scaled down, a vnode is a few kilobytes: a memtable's
    // estimate of it is coarse and varies from run to run, and so is a
    // slice of a flushed memtable's file.) Nothing else runs meanwhile.
    if (points.empty()) {
      BACKFILL_ASSERT_OK(store->Compact());
    }
    const SnapshotProgressEstimate estimate =
        live.Observe(progress, *store, store.get());
    points.push_back({progress.snapshot_rows, estimate.percent});
  };
  absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
      *store, options, nullptr, observer, clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        DeterministicDriverOptions driver;
        driver.seed = kSeed;
        driver.barrier_interval = options.barrier_interval;
        // Barriers at about every chunk the actors send: a 40,000-row
        // snapshot sees about as many barriers as the command's million-row
        // one does in real time.
        driver.early_barrier_probability = 0.25;
        return RunDeterministic(graph, coordinator, driver, clock);
      });
  live.Finish();
  BACKFILL_ASSERT_OK(result.status());
  ASSERT_TRUE(result->consistent) << result->mismatch;
  const uint64_t total = result->snapshot_rows;
  ASSERT_GE(total, options.initial_rows / 2);
  ASSERT_FALSE(points.empty());

  std::string trace;
  for (const Point& point : points) {
    absl::StrAppend(&trace, point.rows, " rows: ", point.percent, "%\n");
  }
  SCOPED_TRACE(absl::StrCat(total, " snapshot rows; observations:\n", trace));
  double previous = 0;
  std::optional<uint64_t> rows_at_quarter;
  for (const Point& point : points) {
    EXPECT_GE(point.percent, previous);
    // 100 only once every snapshot row was read.
    if (point.percent >= 100) {
      EXPECT_EQ(point.rows, total);
    }
    if (point.percent > 25 && !rows_at_quarter.has_value()) {
      rows_at_quarter = point.rows;
    }
    previous = point.percent;
  }
  EXPECT_EQ(points.back().percent, 100);
  ASSERT_TRUE(rows_at_quarter.has_value());
  EXPECT_LT(*rows_at_quarter, total / 2);
  // And the line the command prints says the same.
  EXPECT_THAT(out.str(),
              HasSubstr(" 100.0% of snapshot | vnodes 256/256 done"));
}

}  // namespace
}  // namespace backfill
