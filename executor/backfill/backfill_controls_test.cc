#include "executor/backfill/backfill_controls.h"

#include <cstdint>
#include <memory>

#include "executor/testing/message_literal.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::TestBarrier;

Barrier With(Mutation mutation) {
  return TestBarrier(3, BarrierKind::kCheckpoint,
                     std::make_shared<const Mutation>(std::move(mutation)));
}

BackfillControls::Options Ids() {
  BackfillControls::Options options;
  options.actor_id = 7;
  options.fragment_id = 2;
  return options;
}

TEST(BackfillControlsTest, FirstBarrierSetsBothPauses) {
  BackfillControls plain(Ids(), BackfillMetrics{});
  plain.ApplyFirstBarrier(TestBarrier(2, BarrierKind::kInitial));
  EXPECT_FALSE(plain.paused());

  BackfillControls global(Ids(), BackfillMetrics{});
  global.ApplyFirstBarrier(With(AddMutation{true, {}, {}}));
  EXPECT_TRUE(global.paused());
  EXPECT_FALSE(global.ApplyMutation(With(ResumeMutation{})));
  EXPECT_FALSE(global.paused());
  global.ApplyMutation(With(PauseMutation{}));
  EXPECT_TRUE(global.paused());

  BackfillControls ordered(Ids(), BackfillMetrics{});
  ordered.ApplyFirstBarrier(With(AddMutation{false, {2}, {}}));
  EXPECT_TRUE(ordered.paused());
  ordered.ApplyMutation(With(StartFragmentBackfillMutation{{3}}));
  EXPECT_TRUE(ordered.paused()) << "another fragment's start";
  ordered.ApplyMutation(With(StartFragmentBackfillMutation{{2}}));
  EXPECT_FALSE(ordered.paused());
}

TEST(BackfillControlsTest, ThrottlePrefersTheActorsEntryAndSetsTheGauge) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics metrics,
                                BackfillMetrics::Create(registry, 1, 7));
  BackfillControls::Options options = Ids();
  options.rate_limit = RateLimit::Fixed(100);
  BackfillControls controls(options, metrics);
  EXPECT_EQ(metrics.rate_limit_rows_per_second.value(), 100);

  ThrottleMutation other;  // neither this actor nor its fragment
  other.rate_limits[5] = 10;
  other.actor_rate_limits[8] = 10;
  EXPECT_FALSE(controls.ApplyMutation(With(other)));
  EXPECT_EQ(controls.limiter().limit(), RateLimit::Fixed(100));

  ThrottleMutation both;
  both.rate_limits[2] = 50;
  both.actor_rate_limits[7] = 30;
  EXPECT_TRUE(controls.ApplyMutation(With(both)));
  EXPECT_EQ(controls.limiter().limit(), RateLimit::Fixed(30));
  EXPECT_EQ(metrics.rate_limit_rows_per_second.value(), 30);
  EXPECT_FALSE(controls.ApplyMutation(With(both))) << "the same limit again";

  ThrottleMutation pause;
  pause.rate_limits[2] = 0;
  EXPECT_TRUE(controls.ApplyMutation(With(pause)));
  EXPECT_TRUE(controls.paused());
  EXPECT_EQ(metrics.rate_limit_rows_per_second.value(), 0);
}

TEST(BackfillControlsTest, OptionsOfAnExecutorsOptions) {
  struct ExecutorOptions {
    ActorId actor_id = 7;
    FragmentId fragment_id = 2;
    uint32_t chunk_size = 64;
    RateLimit rate_limit = RateLimit::Fixed(40);
    Clock* clock = nullptr;
    int unrelated = 5;
  };
  SimulatedClock clock;
  ExecutorOptions executor_options;
  executor_options.clock = &clock;
  const BackfillControls::Options options =
      BackfillControls::Options::Of(executor_options);
  EXPECT_EQ(options.actor_id, 7u);
  EXPECT_EQ(options.fragment_id, 2u);
  EXPECT_EQ(options.chunk_size, 64u);
  EXPECT_EQ(options.rate_limit, RateLimit::Fixed(40));
  EXPECT_EQ(options.clock, &clock);
}

}  // namespace
}  // namespace backfill
