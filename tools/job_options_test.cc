#include "tools/job_options.h"

#include "gtest/gtest.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

TEST(JobOptionsTest, DefaultScenarioConverts) {
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(DefaultScenario());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const StreamingJobOptions options = JobOptionsFromScenario(*spec);
  EXPECT_EQ(options.initial_rows, spec->initial_rows);
  EXPECT_EQ(options.parallelism, static_cast<uint32_t>(spec->parallelism));
  EXPECT_EQ(options.upstream.table_id, spec->table.table_id);
  EXPECT_EQ(options.view_table_id, spec->view.table_id);
  EXPECT_EQ(options.output_columns, spec->output_columns);
  EXPECT_NE(options.source_offset_table_id, options.view_table_id);
  EXPECT_NE(options.source_offset_table_id, options.progress_table_id);
  EXPECT_EQ(options.job_state_table_id, kJobStateTableId);
  EXPECT_TRUE(options.overrides.parallelism == std::nullopt);
  EXPECT_TRUE(options.overrides.rate_limit == std::nullopt);
  EXPECT_DOUBLE_EQ(options.workload.ops_per_second, spec->workload.ops_per_second);
}

TEST(JobOptionsTest, ActionsAndRateLimitConvert) {
  tools::Scenario scenario = DefaultScenario();
  scenario.mutable_backfill()->set_rate_limit(5000);
  scenario.add_actions()->set_at_epoch(3);
  scenario.mutable_actions(0)->set_pause(true);
  scenario.add_actions()->set_at_epoch(4);
  scenario.mutable_actions(1)->set_set_rate_limit(100);
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(scenario);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const StreamingJobOptions options = JobOptionsFromScenario(*spec);
  EXPECT_EQ(options.rate_limit, RateLimit::Fixed(5000));
  ASSERT_EQ(options.actions.size(), 2u);
  EXPECT_EQ(options.actions[0].kind, JobAction::Kind::kPause);
  EXPECT_EQ(options.actions[1].kind, JobAction::Kind::kSetRateLimit);
  EXPECT_EQ(options.actions[1].rate_limit, 100u);
}

// Several actions at one epoch all reach the runtime, in file order (the
// runtime applies them all at that barrier).
TEST(JobOptionsTest, ActionsAtOneEpochAllConvertInFileOrder) {
  tools::Scenario scenario = DefaultScenario();
  scenario.add_actions()->set_at_epoch(3);
  scenario.mutable_actions(0)->set_pause(true);
  scenario.add_actions()->set_at_epoch(20);
  scenario.mutable_actions(1)->set_resume(true);
  scenario.add_actions()->set_at_epoch(20);
  scenario.mutable_actions(2)->set_set_rate_limit(7000);
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(scenario);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const StreamingJobOptions options = JobOptionsFromScenario(*spec);
  ASSERT_EQ(options.actions.size(), 3u);
  EXPECT_EQ(options.actions[1].at_epoch, 20u);
  EXPECT_EQ(options.actions[1].kind, JobAction::Kind::kResume);
  EXPECT_EQ(options.actions[2].kind, JobAction::Kind::kSetRateLimit);
  JobState state;
  state.paused = true;
  state.epochs_since_creation = 20;
  state = ApplyJobActions(state, options.actions);
  EXPECT_FALSE(state.paused);
  EXPECT_EQ(state.rate_limit, RateLimit::Fixed(7000));
}

}  // namespace
}  // namespace backfill
