#include "executor/executor.h"

#include <thread>

#include "absl/time/time.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::ScriptedExecutorOptions;
using ::backfill::testing::StatusIs;
using ::backfill::testing::TestBarrier;

ExecutorInfo Info() {
  return ExecutorInfo{.schema = {DataType::kInt64}, .identity = "test"};
}

TEST(NextMessageTest, ReturnsMessagesThenEndOfStream) {
  SimulatedClock clock;
  ScriptedExecutor upstream(Info());
  upstream.Push(TestBarrier(1));
  upstream.PushPending();
  upstream.Push(testing::StreamChunkFromPretty(" I\n + 1"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> first,
                                NextMessage(upstream, clock));
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(std::holds_alternative<Barrier>(*first));
  // The pending step self-wakes, so NextMessage polls again without waiting.
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> second,
                                NextMessage(upstream, clock));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(std::holds_alternative<StreamChunk>(*second));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> end,
                                NextMessage(upstream, clock));
  EXPECT_FALSE(end.has_value());
  EXPECT_EQ(upstream.num_polls(), 4u);
}

TEST(NextMessageTest, ReturnsTheStreamError) {
  SimulatedClock clock;
  ScriptedExecutor upstream(Info());
  upstream.PushError(absl::DataLossError("corrupt"));
  EXPECT_THAT(NextMessage(upstream, clock),
              StatusIs(absl::StatusCode::kDataLoss));
  // Fused: the error repeats.
  EXPECT_THAT(NextMessage(upstream, clock),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(NextMessageTest, WaitsForTheWakeDeadline) {
  SimulatedClock clock;
  ScriptedExecutor upstream(Info());
  upstream.PushPendingUntil(absl::UnixEpoch() + absl::Seconds(10));
  upstream.Push(TestBarrier(1));
  std::thread advancer([&clock] {
    clock.BlockUntilWaiters(1);
    clock.AdvanceTime(absl::Seconds(10));
  });
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> message,
                                NextMessage(upstream, clock));
  advancer.join();
  ASSERT_TRUE(message.has_value());
  EXPECT_TRUE(std::holds_alternative<Barrier>(*message));
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Seconds(10));
}

TEST(NextMessageTest, WokenByAPushFromAnotherThread) {
  SimulatedClock clock;
  ScriptedExecutor upstream(
      Info(),
      ScriptedExecutorOptions{
          .when_exhausted = ScriptedExecutorOptions::WhenExhausted::kPending});
  std::thread pusher([&upstream] { upstream.Push(TestBarrier(5)); });
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> message,
                                NextMessage(upstream, clock));
  pusher.join();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(std::get<Barrier>(*message).epoch.curr, Epoch(5));
}

}  // namespace
}  // namespace backfill
