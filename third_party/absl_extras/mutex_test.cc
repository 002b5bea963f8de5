#include "third_party/absl_extras/mutex.h"

#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

// A guarded counter: with --config=clang, the analysis checks these accesses.
class Counter {
 public:
  void Increment() {
    MutexLock lock(&mu_);
    ++count_;
    cv_.SignalAll();
  }
  int Get() {
    MutexLock lock(&mu_);
    return count_;
  }
  // Blocks until the count reaches `target`.
  void AwaitAtLeast(int target) {
    MutexLock lock(&mu_);
    while (count_ < target) cv_.Wait(&mu_);
    mu_.AssertHeld();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, MutexLockExcludesOtherThreads) {
  Counter counter;
  constexpr int kThreads = 4;
  constexpr int kIncrements = 10000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < kIncrements; ++j) counter.Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.Get(), kThreads * kIncrements);
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu;
  absl::Notification locked;
  absl::Notification release;
  std::thread holder([&] {
    MutexLock lock(&mu);
    locked.Notify();
    release.WaitForNotification();
  });
  locked.WaitForNotification();
  EXPECT_FALSE(mu.TryLock());
  release.Notify();
  holder.join();
  ASSERT_TRUE(mu.TryLock());
  mu.AssertHeld();
  mu.Unlock();
}

TEST(MutexTest, LockAndUnlockByHand) {
  Mutex mu;
  mu.Lock();
  mu.AssertHeld();
  mu.Unlock();
  MutexLock lock(&mu);
  mu.AssertHeld();
}

TEST(MutexDeathTest, AssertHeldFailsWhenNotHeld) {
  Mutex mu;
  EXPECT_DEBUG_DEATH(mu.AssertHeld(), "not held by this thread");
}

TEST(MutexDeathTest, AssertHeldFailsWhenHeldByAnotherThread) {
  EXPECT_DEBUG_DEATH(
      {
        Mutex mu;
        absl::Notification locked;
        absl::Notification release;
        std::thread holder([&] {
          MutexLock lock(&mu);
          locked.Notify();
          release.WaitForNotification();
        });
        locked.WaitForNotification();
        // The main thread does not hold it: fails here (in debug builds).
        mu.AssertHeld();
        release.Notify();
        holder.join();
      },
      "not held by this thread");
}

TEST(CondVarTest, WaitWakesOnSignalAllAndHoldsTheLockAgain) {
  Counter counter;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] { counter.AwaitAtLeast(2); });
  }
  counter.Increment();
  counter.Increment();
  for (std::thread& waiter : waiters) waiter.join();
  EXPECT_EQ(counter.Get(), 2);
}

TEST(CondVarTest, SignalWakesAWaiter) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.Signal();
  waiter.join();
}

// While a thread waits, the lock is free: another thread takes it (and
// AssertHeld sees that thread as the holder); the waiter holds it again
// after the wait.
TEST(CondVarTest, WaitReleasesTheLock) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  absl::Notification waiting;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    waiting.Notify();
    while (!ready) cv.Wait(&mu);
    mu.AssertHeld();
  });
  waiting.WaitForNotification();
  {
    MutexLock lock(&mu);  // only possible once the waiter waits
    mu.AssertHeld();
    ready = true;
    cv.SignalAll();
  }
  waiter.join();
}

TEST(CondVarTest, WaitWithTimeoutExpires) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  // Spurious wake-ups are allowed: loop until the timeout is reported.
  while (!cv.WaitWithTimeout(&mu, absl::Milliseconds(1))) {
  }
  mu.AssertHeld();
  EXPECT_TRUE(cv.WaitWithTimeout(&mu, absl::ZeroDuration()));
  EXPECT_TRUE(cv.WaitWithTimeout(&mu, -absl::Seconds(1)));
  mu.AssertHeld();
}

TEST(CondVarTest, LongAndInfiniteTimeoutsAreWokenBySignal) {
  for (const absl::Duration timeout :
       {absl::Hours(1e7), absl::InfiniteDuration()}) {
    SCOPED_TRACE(absl::FormatDuration(timeout));
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
      while (!ready) EXPECT_FALSE(cv.WaitWithTimeout(&mu, timeout));
    }
    setter.join();
  }
}

}  // namespace
}  // namespace backfill
