#include "third_party/absl_extras/clock.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace {

TEST(RealClockTest, NowIsMonotoneEnough) {
  Clock& clock = Clock::Real();
  const absl::Time first = clock.Now();
  EXPECT_GE(clock.Now(), first);
  clock.SleepUntil(first - absl::Seconds(1));  // past deadline: returns at once
}

TEST(RealClockTest, AwaitReturnsWhenConditionHolds) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread setter([&] {
    MutexLock lock(&mu);
    ready = true;
    cv.SignalAll();
  });
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(Clock::Real().WaitUntil(
        mu, cv, [&] { return ready; }, absl::Now() + absl::Seconds(60)));
    mu.AssertHeld();
  }
  setter.join();
}

TEST(RealClockTest, AwaitTimesOutAtDeadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_FALSE(Clock::Real().WaitUntil(
      mu, cv, [] { return false; }, absl::Now() + absl::Milliseconds(1)));
  EXPECT_FALSE(Clock::Real().WaitUntil(
      mu, cv, [] { return false; }, absl::InfinitePast()));
  mu.AssertHeld();
}

TEST(RealClockTest, InfiniteAndFarDeadlinesDoNotOverflow) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread setter([&] {
    MutexLock lock(&mu);
    ready = true;
    cv.SignalAll();
  });
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(Clock::Real().WaitUntil(
        mu, cv, [&] { return ready; }, absl::InfiniteFuture()));
    EXPECT_TRUE(Clock::Real().WaitUntil(
        mu, cv, [&] { return ready; }, absl::Now() + absl::Hours(1e7)));
  }
  setter.join();
}

TEST(SimulatedClockTest, AdvanceMovesTime) {
  SimulatedClock clock(absl::FromUnixSeconds(100));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100));
  clock.AdvanceTime(absl::Milliseconds(1500));
  EXPECT_EQ(clock.Now(), absl::FromUnixMillis(101500));
  clock.SetTime(absl::FromUnixSeconds(50));  // never goes back
  EXPECT_EQ(clock.Now(), absl::FromUnixMillis(101500));
  clock.SetTime(absl::FromUnixSeconds(200));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(200));
}

// The clock keeps whole nanoseconds: SetTime rounds up, so a deadline
// between two of them is reached.
TEST(SimulatedClockTest, SetTimeRoundsUpToAWholeNanosecond) {
  const absl::Time start = absl::FromUnixSeconds(100);
  SimulatedClock clock(start);
  clock.SetTime(start + absl::Nanoseconds(7));
  EXPECT_EQ(clock.Now(), start + absl::Nanoseconds(7));
  const absl::Time deadline = start + absl::Nanoseconds(8.25);
  clock.SetTime(deadline);
  EXPECT_EQ(clock.Now(), start + absl::Nanoseconds(9));
  EXPECT_GE(clock.Now(), deadline);
}

TEST(SimulatedClockTest, SleeperWakesOnlyWhenDeadlineReached) {
  SimulatedClock clock;
  absl::Notification woke;
  std::thread sleeper([&] {
    clock.SleepUntil(clock.Now() + absl::Seconds(10));
    woke.Notify();
  });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Seconds(9));
  EXPECT_FALSE(woke.HasBeenNotified());
  EXPECT_EQ(clock.NumWaiters(), 1);
  clock.AdvanceTime(absl::Seconds(1));
  woke.WaitForNotification();
  sleeper.join();
  EXPECT_EQ(clock.NumWaiters(), 0);
}

TEST(SimulatedClockTest, AwaitWakesOnConditionBeforeDeadline) {
  SimulatedClock clock;
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool result = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    result = clock.WaitUntil(
        mu, cv, [&] { return ready; }, clock.Now() + absl::Hours(1));
    mu.AssertHeld();
  });
  clock.BlockUntilWaiters(1);
  {
    MutexLock lock(&mu);
    ready = true;
    cv.SignalAll();
  }
  waiter.join();
  EXPECT_TRUE(result);
  EXPECT_EQ(clock.NumWaiters(), 0);
}

TEST(SimulatedClockTest, AwaitTimesOutWhenClockPassesDeadline) {
  SimulatedClock clock;
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool result = true;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    result = clock.WaitUntil(
        mu, cv, [&] { return ready; }, clock.Now() + absl::Seconds(2));
  });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Seconds(3));
  waiter.join();
  EXPECT_FALSE(result);
}

TEST(SimulatedClockTest, AwaitReturnsAtOnceWhenDoneOrExpired) {
  SimulatedClock clock(absl::FromUnixSeconds(10));
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(clock.WaitUntil(
      mu, cv, [] { return true; }, absl::InfiniteFuture()));
  EXPECT_FALSE(clock.WaitUntil(
      mu, cv, [] { return false; }, absl::FromUnixSeconds(10)));
  EXPECT_EQ(clock.NumWaiters(), 0);
}

}  // namespace
}  // namespace backfill
