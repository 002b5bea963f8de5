#include "executor/backfill/commit_waiter.h"

#include <atomic>
#include <memory>

#include "executor/poll.h"
#include "gtest/gtest.h"
#include "storage/epoch.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

class CountingWaker final : public Waker {
 public:
  void Wake() override { count_.fetch_add(1); }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
};

class CommitWaiterTest : public ::testing::Test {
 protected:
  std::unique_ptr<StateStore> store_ = NewMemoryStateStore();
  SimulatedClock clock_;
  std::shared_ptr<CountingWaker> waker_ = std::make_shared<CountingWaker>();
  PollContext cx_{waker_, clock_};
};

TEST_F(CommitWaiterTest, ReadyAtOnceRegistersNothing) {
  CommitWaiter waiter(*store_);
  EXPECT_TRUE(waiter.Ready([] { return true; }, cx_));
  EXPECT_FALSE(waiter.listening());
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_EQ(waker_->count(), 0);
}

TEST_F(CommitWaiterTest, NotReadyWakesAtTheNextCommit) {
  CommitWaiter waiter(*store_);
  bool ready = false;
  EXPECT_FALSE(waiter.Ready([&] { return ready; }, cx_));
  EXPECT_TRUE(waiter.listening());
  EXPECT_EQ(waker_->count(), 0);
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_EQ(waker_->count(), 1);
  ready = true;
  EXPECT_TRUE(waiter.Ready([&] { return ready; }, cx_));
}

// A commit between the first check and the registration: the re-check sees
// it, so the caller does not wait for a wake-up that never comes.
TEST_F(CommitWaiterTest, ReChecksAfterRegistering) {
  CommitWaiter waiter(*store_);
  int checks = 0;
  EXPECT_TRUE(waiter.Ready([&] { return ++checks > 1; }, cx_));
  EXPECT_EQ(checks, 2);
}

TEST_F(CommitWaiterTest, OneListenerWakesTheLatestWaker) {
  CommitWaiter waiter(*store_);
  EXPECT_FALSE(waiter.Ready([] { return false; }, cx_));
  auto second = std::make_shared<CountingWaker>();
  PollContext second_cx(second, clock_);
  EXPECT_FALSE(waiter.Ready([] { return false; }, second_cx));
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
  EXPECT_EQ(waker_->count(), 0);
  EXPECT_EQ(second->count(), 1);
}

TEST_F(CommitWaiterTest, StopAndDestructionStopTheWakeUps) {
  {
    CommitWaiter waiter(*store_);
    EXPECT_FALSE(waiter.Ready([] { return false; }, cx_));
    waiter.Stop();
    EXPECT_FALSE(waiter.listening());
    waiter.Stop();  // Idempotent.
    BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
    EXPECT_EQ(waker_->count(), 0);
    EXPECT_FALSE(waiter.Ready([] { return false; }, cx_));
    EXPECT_TRUE(waiter.listening());
  }
  BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(2)));
  EXPECT_EQ(waker_->count(), 0);
}

}  // namespace
}  // namespace backfill
