#include "executor/runtime/job_state.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

JobAction Pause(uint64_t epoch) { return {epoch, JobAction::Kind::kPause, 0}; }
JobAction Resume(uint64_t epoch) {
  return {epoch, JobAction::Kind::kResume, 0};
}
JobAction SetRate(uint64_t epoch, uint64_t rate) {
  return {epoch, JobAction::Kind::kSetRateLimit, rate};
}
JobAction StopUpstream(uint64_t epoch) {
  return {epoch, JobAction::Kind::kStopUpstream, 0};
}

// Runs the timeline barrier by barrier from `state`, as the coordinator does.
JobState RunTo(JobState state, const std::vector<JobAction>& actions,
               uint64_t epochs) {
  while (state.epochs_since_creation < epochs) {
    ++state.epochs_since_creation;
    state = ApplyJobActions(state, actions);
  }
  return state;
}

TEST(JobStateTest, ResumeAndRateLimitAtOneBarrierBothApply) {
  // The scenario: pause at 3; resume and set a rate limit at 20.
  const std::vector<JobAction> actions = {Pause(3), Resume(20),
                                          SetRate(20, 5000)};
  BACKFILL_ASSERT_OK(ValidateJobActions(actions));
  JobState state;
  state.parallelism = 2;
  state.rate_limit = RateLimit::Fixed(100);
  JobState at19 = RunTo(state, actions, 19);
  EXPECT_TRUE(at19.paused);
  EXPECT_EQ(at19.EffectiveRateLimit(), RateLimit::Pause());
  JobState at20 = RunTo(at19, actions, 20);
  EXPECT_FALSE(at20.paused);
  EXPECT_EQ(at20.rate_limit, RateLimit::Fixed(5000));
  EXPECT_EQ(at20.EffectiveRateLimit(), RateLimit::Fixed(5000));
  EXPECT_EQ(at20.parallelism, 2u);
}

TEST(JobStateTest, OrderWithinABarrierDoesNotMatterForPauseAndRate) {
  for (const std::vector<JobAction>& actions :
       {std::vector<JobAction>{SetRate(4, 10), Pause(4)},
        std::vector<JobAction>{Pause(4), SetRate(4, 10)}}) {
    JobState state = RunTo(JobState{}, actions, 4);
    EXPECT_TRUE(state.paused);
    EXPECT_EQ(state.rate_limit, RateLimit::Fixed(10));  // kept for the resume
    EXPECT_EQ(state.EffectiveRateLimit(), RateLimit::Pause());
  }
}

TEST(JobStateTest, RateSetWhilePausedTakesEffectOnResume) {
  const std::vector<JobAction> actions = {Pause(2), SetRate(5, 700), Resume(9)};
  JobState state = RunTo(JobState{}, actions, 8);
  EXPECT_EQ(state.EffectiveRateLimit(), RateLimit::Pause());
  state = RunTo(state, actions, 9);
  EXPECT_EQ(state.EffectiveRateLimit(), RateLimit::Fixed(700));
}

TEST(JobStateTest, LaterRateLimitAtOneBarrierWins) {
  JobState state = RunTo(JobState{}, {SetRate(3, 10), SetRate(3, 0)}, 3);
  EXPECT_EQ(state.rate_limit, RateLimit::Disabled());
  state = RunTo(JobState{}, {SetRate(3, 0), SetRate(3, 10)}, 3);
  EXPECT_EQ(state.rate_limit, RateLimit::Fixed(10));
}

TEST(JobStateTest, ActionsApplyOnlyAtTheirEpochAndNeverAgain) {
  const std::vector<JobAction> actions = {SetRate(2, 50), StopUpstream(3)};
  JobState state = RunTo(JobState{}, actions, 1);
  EXPECT_EQ(state.rate_limit, RateLimit::Disabled());
  EXPECT_FALSE(state.upstream_stopped);
  state = RunTo(state, actions, 3);
  EXPECT_EQ(state.rate_limit, RateLimit::Fixed(50));
  EXPECT_TRUE(state.upstream_stopped);
  // A later change (as after a restart with --rate_limit) is not undone by
  // the epoch-2 action: it only fires at epoch 2.
  state.rate_limit = RateLimit::Fixed(9);
  state = RunTo(state, actions, 40);
  EXPECT_EQ(state.rate_limit, RateLimit::Fixed(9));
}

TEST(JobStateTest, PauseAndResumeAtOneEpochAreRejectedNamingBoth) {
  EXPECT_THAT(
      ValidateJobActions({SetRate(20, 5), Pause(20), Pause(3), Resume(20)}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("actions[1] (pause at epoch 20)"),
                     HasSubstr("actions[3] (resume at epoch 20)"),
                     HasSubstr("contradict"))));
  EXPECT_THAT(ValidateJobActions({Resume(7), Pause(7)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("actions[0] (resume at epoch 7)"),
                             HasSubstr("actions[1] (pause at epoch 7)"))));
  EXPECT_THAT(
      ValidateJobActions({Pause(7), Pause(7), Resume(8), SetRate(7, 1)}),
      IsOk());
  EXPECT_THAT(
      ValidateJobActions({Pause(0)}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("actions[0]")));
}

TEST(JobStateTest, OverridesReplaceOnlyTheirFields) {
  JobState saved;
  saved.paused = true;
  saved.rate_limit = RateLimit::Fixed(30);
  saved.parallelism = 3;
  saved.epochs_since_creation = 12;
  JobState same = ApplyJobStateOverrides(saved, {});
  EXPECT_EQ(same, saved);
  JobStateOverrides overrides;
  overrides.parallelism = 1;
  overrides.rate_limit = RateLimit::Disabled();
  JobState changed = ApplyJobStateOverrides(saved, overrides);
  EXPECT_EQ(changed.parallelism, 1u);
  EXPECT_EQ(changed.rate_limit, RateLimit::Disabled());
  EXPECT_TRUE(changed.paused);
  EXPECT_EQ(changed.epochs_since_creation, 12u);
}

TEST(JobStateTest, JobRateLimitSaturates) {
  EXPECT_EQ(JobRateLimit(0), RateLimit::Disabled());
  EXPECT_EQ(JobRateLimit(5), RateLimit::Fixed(5));
  EXPECT_EQ(JobRateLimit(uint64_t{1} << 40), RateLimit::Fixed(UINT32_MAX));
}

TEST(JobStateTest, RescaleSetsTheParallelismTheLaterOneWins) {
  const std::vector<JobAction> actions = {
      {4, JobAction::Kind::kRescale, 0, 3},
      {4, JobAction::Kind::kRescale, 0, 5},
      {4, JobAction::Kind::kPause, 0},
      {9, JobAction::Kind::kRescale, 0, 1}};
  BACKFILL_ASSERT_OK(ValidateJobActions(actions));
  JobState state;
  state.parallelism = 2;
  state.epochs_since_creation = 4;
  state = ApplyJobActions(state, actions);
  EXPECT_EQ(state.parallelism, 5u);
  EXPECT_TRUE(state.paused);
  state.epochs_since_creation = 9;
  EXPECT_EQ(ApplyJobActions(state, actions).parallelism, 1u);
  EXPECT_EQ(JobActionDebugString(actions[0]), "rescale 3 at epoch 4");
}

TEST(JobStateTest, ARescaleToZeroActorsIsInvalid) {
  EXPECT_THAT(ValidateJobActions({{2, JobAction::Kind::kRescale, 0, 0}}),
              ::backfill::testing::StatusIs(
                  absl::StatusCode::kInvalidArgument,
                  ::testing::HasSubstr("actions[0] (rescale 0 at epoch 2)")));
}

// Adaptive mode: the controller's rate rules, a Fixed rate_limit caps it,
// set_rate_limit changes only the cap, and a pause still wins.
TEST(JobStateTest, AdaptiveRateIsCappedBySetRateLimitAndPausedByPause) {
  JobState state;
  state.adaptive_target = absl::Milliseconds(70);
  EXPECT_TRUE(state.adaptive());
  // No controller rate yet: the plain limit.
  EXPECT_EQ(state.EffectiveRateLimit(), RateLimit::Disabled());
  state.adaptive_rows_per_second = 4096;
  EXPECT_EQ(state.EffectiveRateLimit(), RateLimit::Fixed(4096));
  const std::vector<JobAction> actions = {SetRate(2, 1000), Pause(3),
                                          Resume(4), SetRate(5, 0)};
  JobState at2 = RunTo(state, actions, 2);
  EXPECT_TRUE(at2.adaptive());
  EXPECT_EQ(at2.rate_limit, RateLimit::Fixed(1000));
  EXPECT_EQ(at2.EffectiveRateLimit(), RateLimit::Fixed(1000));
  EXPECT_EQ(RunTo(at2, actions, 3).EffectiveRateLimit(), RateLimit::Pause());
  EXPECT_EQ(RunTo(at2, actions, 4).EffectiveRateLimit(), RateLimit::Fixed(1000));
  JobState at5 = RunTo(at2, actions, 5);
  EXPECT_EQ(at5.EffectiveRateLimit(), RateLimit::Fixed(4096));
  EXPECT_EQ(at5.DebugString(),
            "{paused: false, rate_limit: disabled, parallelism: 1, "
            "upstream_stopped: false, epochs_since_creation: 5, "
            "adaptive_target: 70ms, adaptive_rows_per_second: 4096}");
}

TEST(JobStateTest, AdaptiveOverridesEnterChangeAndLeaveTheMode) {
  JobState state;
  state.rate_limit = RateLimit::Fixed(500);
  JobStateOverrides enter;
  enter.adaptive_target = absl::Milliseconds(50);
  enter.rate_limit = RateLimit::Disabled();
  JobState adaptive = ApplyJobStateOverrides(state, enter);
  EXPECT_TRUE(adaptive.adaptive());
  EXPECT_EQ(adaptive.adaptive_rows_per_second, 0u);  // a fresh slow start
  EXPECT_EQ(adaptive.rate_limit, RateLimit::Disabled());
  adaptive.adaptive_rows_per_second = 3000;
  // A new target keeps the rate reached.
  JobStateOverrides retarget;
  retarget.adaptive_target = absl::Milliseconds(80);
  JobState retargeted = ApplyJobStateOverrides(adaptive, retarget);
  EXPECT_EQ(retargeted.adaptive_target, absl::Milliseconds(80));
  EXPECT_EQ(retargeted.adaptive_rows_per_second, 3000u);
  // Zero leaves the mode.
  JobStateOverrides leave;
  leave.adaptive_target = absl::ZeroDuration();
  leave.rate_limit = RateLimit::Fixed(200);
  JobState fixed = ApplyJobStateOverrides(retargeted, leave);
  EXPECT_FALSE(fixed.adaptive());
  EXPECT_EQ(fixed.adaptive_rows_per_second, 0u);
  EXPECT_EQ(fixed.EffectiveRateLimit(), RateLimit::Fixed(200));
  // Unset: the saved mode stays.
  EXPECT_EQ(ApplyJobStateOverrides(retargeted, {}), retargeted);
}

}  // namespace
}  // namespace backfill
