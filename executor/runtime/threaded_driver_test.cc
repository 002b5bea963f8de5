#include "executor/runtime/threaded_driver.h"

#include <memory>

#include "executor/runtime/one_attempt_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StreamingJobOptions SmallJob() {
  StreamingJobOptions options;
  TableCatalog& catalog = options.upstream;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"customer", DataType::kVarchar, 2, true},
                     {"qty", DataType::kInt32, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 16;
  catalog.value_indices = {0, 1, 2};
  options.initial_rows = 600;
  options.workload.seed = 5;
  options.workload.ops_per_second = 3000;
  options.workload.update_primary_key = true;
  options.workload.key_space = 1200;
  options.parallelism = 3;
  options.chunk_size = 32;
  options.rate_limit = RateLimit::Fixed(3000);
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.extra_checkpoints_after_finish = 2;
  options.max_duration = absl::Seconds(60);
  options.actions = {{2, JobAction::Kind::kPause, 0},
                     {5, JobAction::Kind::kResume, 0}};
  return options;
}

OneAttempt RunJob(const StreamingJobOptions& options, bool conflict) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  Clock& clock = Clock::Real();
  return RunOneAttemptForTest(
      *store, options, clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        return RunThreaded(graph, coordinator, options.barrier_interval, clock);
      },
      [&](StateStore& s) {
        return conflict ? PlantConflictingViewRow(s, options)
                        : absl::OkStatus();
      });
}

TEST(ThreadedDriverTest, RunsTheGraphToAConsistentView) {
  const OneAttempt run = RunJob(SmallJob(), /*conflict=*/false);
  BACKFILL_ASSERT_OK(run.status);
  ASSERT_TRUE(run.verdict.has_value());
  EXPECT_TRUE(run.verdict->consistent) << run.verdict->mismatch;
  EXPECT_GE(run.result.snapshot_rows, 600u);
  EXPECT_GT(run.result.checkpoints, 2u);
  ASSERT_TRUE(run.saved.has_value());
  EXPECT_FALSE(run.saved->state.paused);
  EXPECT_EQ(run.saved->state.epochs_since_creation, run.result.epochs - 1);
}

TEST(ThreadedDriverTest, AnActorsErrorIsTheAttemptsErrorAndEveryThreadEnds) {
  // The view actor fails on a key it already holds; every other actor is
  // then blocked or ends; RunThreaded returns the view's error (not an
  // "input ended" of an actor downstream of a failure) after joining all.
  const OneAttempt run = RunJob(SmallJob(), /*conflict=*/true);
  EXPECT_FALSE(run.status.ok());
  EXPECT_THAT(run.status.message(), HasSubstr("Materialize(view, actor 2)"));
  EXPECT_THAT(run.status.message(), Not(HasSubstr("input ended")));
}

}  // namespace
}  // namespace backfill
