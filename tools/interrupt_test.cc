#include "tools/interrupt.h"

#include <signal.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

TEST(CheckpointStopperTest, StopsAtTheFirstCheckpointAfterTheRequest) {
  CheckpointStopper stopper;
  EXPECT_FALSE(stopper.ShouldStop(0, false));
  EXPECT_FALSE(stopper.ShouldStop(3, false));
  EXPECT_FALSE(
      stopper.ShouldStop(3, true));  // requested during checkpoint 3's epoch
  EXPECT_FALSE(stopper.ShouldStop(3, true));  // a non-checkpoint barrier
  EXPECT_TRUE(stopper.ShouldStop(4, true));   // the next checkpoint
  EXPECT_TRUE(stopper.ShouldStop(4, true));
}

TEST(InterruptTest, FirstSignalIsARequestSecondExitsAtOnce) {
  InterruptOptions options;
  options.first_message = "first\n";
  options.second_message = "second\n";
  options.exit_code = 42;
  EXPECT_EXIT(
      {
        if (!InstallInterruptHandler(options).ok()) _exit(1);
        if (InterruptRequested()) _exit(2);
        raise(SIGINT);
        if (!InterruptRequested()) _exit(3);
        raise(SIGTERM);  // the second: exits with 42
        _exit(4);
      },
      ::testing::ExitedWithCode(42), "first\nsecond\n");
}

TEST(InterruptTest, OneSignalDoesNotExit) {
  InterruptOptions options;
  options.first_message = "stopping\n";
  EXPECT_EXIT(
      {
        if (!InstallInterruptHandler(options).ok()) _exit(1);
        raise(SIGTERM);
        _exit(InterruptRequested() ? 7 : 8);
      },
      ::testing::ExitedWithCode(7), "stopping\n");
}

}  // namespace
}  // namespace backfill
