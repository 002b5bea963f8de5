#include "third_party/absl_extras/clock.h"

#include <thread>

#include <condition_variable>
#include <mutex>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(RealClockTest, NowIsMonotoneEnough) {
  Clock& clock = Clock::Real();
  const absl::Time first = clock.Now();
  EXPECT_GE(clock.Now(), first);
  clock.SleepUntil(first - absl::Seconds(1));  // past deadline: returns at once
}

TEST(RealClockTest, AwaitReturnsWhenConditionHolds) {
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  std::thread setter([&] {
    std::lock_guard<std::mutex> guard(mu);
    ready = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(Clock::Real().WaitUntil(lock, cv, [&] { return ready; },
                                      absl::Now() + absl::Seconds(60)));
  lock.unlock();
  setter.join();
}

TEST(RealClockTest, InfiniteAndFarDeadlinesDoNotOverflow) {
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  std::thread setter([&] {
    std::lock_guard<std::mutex> guard(mu);
    ready = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(Clock::Real().WaitUntil(lock, cv, [&] { return ready; },
                                        absl::InfiniteFuture()));
    EXPECT_TRUE(Clock::Real().WaitUntil(lock, cv, [&] { return ready; },
                                        absl::Now() + absl::Hours(1e7)));
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
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  bool result = false;
  std::thread waiter([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitUntil(lock, cv, [&] { return ready; },
                             clock.Now() + absl::Hours(1));
  });
  clock.BlockUntilWaiters(1);
  {
    std::lock_guard<std::mutex> guard(mu);
    ready = true;
    cv.notify_all();
  }
  waiter.join();
  EXPECT_TRUE(result);
}

TEST(SimulatedClockTest, AwaitTimesOutWhenClockPassesDeadline) {
  SimulatedClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  bool result = true;
  std::thread waiter([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitUntil(lock, cv, [&] { return ready; },
                             clock.Now() + absl::Seconds(2));
  });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Seconds(3));
  waiter.join();
  EXPECT_FALSE(result);
}

}  // namespace
}  // namespace backfill
