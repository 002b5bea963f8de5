#include "ratelimit/wake_signal.h"

#include <thread>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace {

TEST(WakeSignalTest, LevelTriggeredUntilReset) {
  WakeSignal signal;
  EXPECT_FALSE(signal.notified());
  signal.Notify();
  EXPECT_TRUE(signal.notified());
  signal.Notify();
  EXPECT_TRUE(signal.notified());
  signal.Reset();
  EXPECT_FALSE(signal.notified());
}

TEST(WakeSignalTest, NotifyWithoutListenersIsFine) {
  WakeSignal signal;
  signal.Notify();
  EXPECT_TRUE(signal.notified());
}

// A waiter blocked on its own (mutex, cv) through the clock wakes when the
// signal fires, with no time passing.
TEST(WakeSignalTest, WakesAListeningWaiter) {
  SimulatedClock clock;
  WakeSignal signal;
  Mutex mutex;
  CondVar cv;
  bool result = false;
  std::thread waiter([&] {
    WakeSignal::Listener listener(signal, mutex, cv);
    MutexLock lock(&mutex);
    result = clock.WaitUntil(
        mutex, cv, [&] { return signal.notified(); }, absl::InfiniteFuture());
  });
  clock.BlockUntilWaiters(1);
  signal.Notify();
  waiter.join();
  EXPECT_TRUE(result);
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
}

// Several listeners on one signal, some sharing a (mutex, cv) pair.
TEST(WakeSignalTest, WakesEveryListener) {
  SimulatedClock clock;
  WakeSignal signal;
  Mutex shared_mutex;
  CondVar shared_cv;
  Mutex own_mutex;
  CondVar own_cv;
  auto wait = [&](Mutex& mutex, CondVar& cv) {
    WakeSignal::Listener listener(signal, mutex, cv);
    MutexLock lock(&mutex);
    EXPECT_TRUE(clock.WaitUntil(
        mutex, cv, [&] { return signal.notified(); }, absl::InfiniteFuture()));
  };
  std::thread first([&] { wait(shared_mutex, shared_cv); });
  std::thread second([&] { wait(shared_mutex, shared_cv); });
  std::thread third([&] { wait(own_mutex, own_cv); });
  clock.BlockUntilWaiters(3);
  signal.Notify();
  first.join();
  second.join();
  third.join();
}

}  // namespace
}  // namespace backfill
