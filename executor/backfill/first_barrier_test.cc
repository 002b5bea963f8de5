#include "executor/backfill/first_barrier.h"

#include <memory>
#include <utility>

#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::StatusIs;
using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;
using ::testing::HasSubstr;
using ::testing::Optional;

class NoopWaker final : public Waker {
 public:
  void Wake() override {}
};

class PollFirstBarrierTest : public ::testing::Test {
 protected:
  PollFirstBarrierTest() {
    BackfillControls::Options options;
    options.fragment_id = 2;
    controls_ = std::make_unique<BackfillControls>(options, BackfillMetrics{});
  }

  absl::StatusOr<std::optional<EpochPair>> Poll() {
    return PollFirstBarrier(input_, cx_, *controls_, output_);
  }

  SimulatedClock clock_;
  PollContext cx_{std::make_shared<NoopWaker>(), clock_};
  ScriptedExecutor input_{ExecutorInfo{}};
  std::unique_ptr<BackfillControls> controls_;
  BackfillOutput output_{Histogram{}};
};

TEST_F(PollFirstBarrierTest, AppliesAndQueuesTheBarrier) {
  input_.PushPending();
  input_.Push(TestBarrier(
      5, BarrierKind::kInitial,
      std::make_shared<const Mutation>(AddMutation{false, {2}, {}})));
  EXPECT_THAT(Poll(), IsOkAndHolds(std::nullopt));
  EXPECT_TRUE(output_.empty());

  EXPECT_THAT(Poll(), IsOkAndHolds(Optional(TestBarrier(5).epoch)));
  EXPECT_TRUE(controls_->paused()) << "the Add paused the fragment";
  ASSERT_FALSE(output_.empty());
  const Message message = output_.Pop(clock_.Now());
  ASSERT_TRUE(std::holds_alternative<Barrier>(message));
  EXPECT_EQ(std::get<Barrier>(message).epoch, TestBarrier(5).epoch);
  EXPECT_TRUE(output_.empty());
}

TEST_F(PollFirstBarrierTest, RefusesAnotherFirstMessage) {
  input_.Push(StreamChunkFromPretty(" I\n + 1"));
  EXPECT_THAT(Poll(), StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("must be a barrier")));
  EXPECT_TRUE(output_.empty());
}

TEST_F(PollFirstBarrierTest, RefusesTheEndAndPassesErrorsOn) {
  EXPECT_THAT(Poll(), StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("ended before the first barrier")));
  ScriptedExecutor failing{ExecutorInfo{}};
  failing.PushError(absl::DataLossError("broken"));
  EXPECT_THAT(PollFirstBarrier(failing, cx_, *controls_, output_),
              StatusIs(absl::StatusCode::kDataLoss, "broken"));
  EXPECT_TRUE(output_.empty());
}

}  // namespace
}  // namespace backfill
