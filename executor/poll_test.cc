#include "executor/poll.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;

class CountingWaker final : public Waker {
 public:
  void Wake() override { count_.fetch_add(1); }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
};

TEST(PollContextTest, KeepsTheEarliestDeadline) {
  SimulatedClock clock;
  PollContext cx(std::make_shared<CountingWaker>(), clock);
  EXPECT_EQ(cx.wake_deadline(), absl::InfiniteFuture());
  cx.WakeNoLaterThan(absl::UnixEpoch() + absl::Seconds(5));
  cx.WakeNoLaterThan(absl::UnixEpoch() + absl::Seconds(9));
  EXPECT_EQ(cx.wake_deadline(), absl::UnixEpoch() + absl::Seconds(5));
  cx.WakeNoLaterThan(absl::UnixEpoch() + absl::Seconds(1));
  EXPECT_EQ(cx.wake_deadline(), absl::UnixEpoch() + absl::Seconds(1));
  cx.ResetWakeDeadline();
  EXPECT_EQ(cx.wake_deadline(), absl::InfiniteFuture());
  EXPECT_EQ(&cx.clock(), &clock);
  cx.waker()->Wake();
  EXPECT_EQ(static_cast<CountingWaker&>(*cx.waker()).count(), 1);
}

TEST(PollResultTest, Kinds) {
  EXPECT_TRUE(PollResult::Pending().is_pending());
  EXPECT_TRUE(PollResult::End().is_end());
  EXPECT_TRUE(PollResult::End().status().ok());
  PollResult error = PollResult::Error(absl::DataLossError("boom"));
  EXPECT_TRUE(error.is_error());
  EXPECT_EQ(error.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(error.DebugString(), HasSubstr("boom"));
  PollResult ready = PollResult::Ready(Message(Watermark{.value = int64_t{1}}));
  ASSERT_TRUE(ready.is_ready());
  EXPECT_TRUE(std::holds_alternative<Watermark>(ready.message()));
  EXPECT_THAT(ready.DebugString(), HasSubstr("Ready(Watermark"));
  EXPECT_EQ(PollResult::Pending().DebugString(), "Pending");
  EXPECT_EQ(PollResult::End().DebugString(), "End");
}

TEST(BlockingWakerTest, AWakeBeforeTheWaitIsNotLost) {
  BlockingWaker waker;
  waker.Reset();
  waker.Wake();
  EXPECT_TRUE(waker.WaitUntil(Clock::Real(), absl::InfiniteFuture()));
}

TEST(BlockingWakerTest, WokenFromAnotherThread) {
  auto waker = std::make_shared<BlockingWaker>();
  waker->Reset();
  std::thread other([waker] { waker->Wake(); });
  EXPECT_TRUE(waker->WaitUntil(Clock::Real(), absl::InfiniteFuture()));
  other.join();
}

TEST(BlockingWakerTest, DeadlineOnASimulatedClock) {
  SimulatedClock clock;
  BlockingWaker waker;
  waker.Reset();
  std::thread advancer([&clock] {
    clock.BlockUntilWaiters(1);
    clock.AdvanceTime(absl::Seconds(2));
  });
  EXPECT_FALSE(waker.WaitUntil(clock, absl::UnixEpoch() + absl::Seconds(1)));
  advancer.join();
  // An expired deadline returns at once.
  EXPECT_FALSE(waker.WaitUntil(clock, absl::UnixEpoch()));
}

TEST(BlockingWakerTest, ResetForgetsEarlierWakes) {
  SimulatedClock clock;
  BlockingWaker waker;
  waker.Wake();
  waker.Reset();
  EXPECT_FALSE(waker.WaitUntil(clock, absl::UnixEpoch()));
}

}  // namespace
}  // namespace backfill
