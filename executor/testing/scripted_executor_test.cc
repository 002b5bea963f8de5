#include "executor/testing/scripted_executor.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/time/time.h"
#include "executor/executor.h"
#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace testing {
namespace {

class CountingWaker final : public Waker {
 public:
  void Wake() override { count_.fetch_add(1); }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
};

TEST(ScriptedExecutorTest, ReplaysTheScript) {
  SimulatedClock clock;
  auto waker = std::make_shared<CountingWaker>();
  ScriptedExecutor upstream(ExecutorInfo{.identity = "upstream"});
  upstream.Push(TestBarrier(1));
  upstream.PushPending();
  upstream.Push(StreamChunkFromPretty(" I\n + 1"));
  EXPECT_EQ(upstream.num_remaining(), 3u);
  EXPECT_EQ(upstream.info().identity, "upstream");

  PollContext cx(waker, clock);
  PollResult first = upstream.PollNext(cx);
  ASSERT_TRUE(first.is_ready());
  EXPECT_THAT(first.message(), MessageIsBarrierAt(1));
  EXPECT_TRUE(upstream.PollNext(cx).is_pending());
  EXPECT_EQ(waker->count(), 1);  // The pending step wakes at once.
  PollResult chunk = upstream.PollNext(cx);
  ASSERT_TRUE(chunk.is_ready());
  EXPECT_THAT(chunk.message(),
              MessageIsChunk(ChunkEq(StreamChunkFromPretty(" I\n + 1"))));
  EXPECT_TRUE(upstream.PollNext(cx).is_end());
  EXPECT_TRUE(upstream.PollNext(cx).is_end());
  EXPECT_EQ(upstream.num_polls(), 5u);
}

TEST(ScriptedExecutorTest, PendingUntilATime) {
  SimulatedClock clock;
  ScriptedExecutor upstream(ExecutorInfo{});
  upstream.PushPendingUntil(absl::UnixEpoch() + absl::Seconds(3));
  upstream.Push(TestBarrier(1));
  PollContext cx(std::make_shared<CountingWaker>(), clock);
  EXPECT_TRUE(upstream.PollNext(cx).is_pending());
  EXPECT_EQ(cx.wake_deadline(), absl::UnixEpoch() + absl::Seconds(3));
  clock.AdvanceTime(absl::Seconds(3));
  EXPECT_TRUE(upstream.PollNext(cx).is_ready());
}

TEST(ScriptedExecutorTest, ErrorIsTerminal) {
  SimulatedClock clock;
  ScriptedExecutor upstream(ExecutorInfo{});
  upstream.PushError(absl::InternalError("boom"));
  upstream.Push(TestBarrier(1));
  PollContext cx(std::make_shared<CountingWaker>(), clock);
  PollResult result = upstream.PollNext(cx);
  ASSERT_TRUE(result.is_error());
  EXPECT_THAT(result.status(), StatusIs(absl::StatusCode::kInternal));
  EXPECT_TRUE(upstream.PollNext(cx).is_error());
  EXPECT_EQ(upstream.num_remaining(), 0u);
}

TEST(ScriptedExecutorTest, PendingModeWaitsForPushesAndClose) {
  SimulatedClock clock;
  auto waker = std::make_shared<CountingWaker>();
  ScriptedExecutor upstream(
      ExecutorInfo{},
      ScriptedExecutorOptions{
          .when_exhausted = ScriptedExecutorOptions::WhenExhausted::kPending});
  PollContext cx(waker, clock);
  EXPECT_TRUE(upstream.PollNext(cx).is_pending());
  EXPECT_EQ(waker->count(), 0);
  upstream.Push(TestBarrier(1));
  EXPECT_EQ(waker->count(), 1);
  EXPECT_TRUE(upstream.PollNext(cx).is_ready());
  EXPECT_TRUE(upstream.PollNext(cx).is_pending());
  upstream.Close();
  EXPECT_EQ(waker->count(), 2);
  EXPECT_TRUE(upstream.PollNext(cx).is_end());
}

TEST(ScriptedExecutorTest, PushFromAnotherThreadWakesABlockedReader) {
  ScriptedExecutor upstream(
      ExecutorInfo{},
      ScriptedExecutorOptions{
          .when_exhausted = ScriptedExecutorOptions::WhenExhausted::kPending});
  std::thread pusher([&upstream] {
    for (uint64_t epoch = 1; epoch <= 100; ++epoch) {
      upstream.Push(TestBarrier(epoch));
    }
    upstream.Close();
  });
  uint64_t expected = 1;
  while (true) {
    absl::StatusOr<std::optional<Message>> message =
        NextMessage(upstream, Clock::Real());
    ASSERT_TRUE(message.ok());
    if (!message->has_value()) break;
    EXPECT_THAT(**message, MessageIsBarrierAt(expected));
    ++expected;
  }
  pusher.join();
  EXPECT_EQ(expected, 101u);
}

}  // namespace
}  // namespace testing
}  // namespace backfill
