#include "executor/runtime/recovery_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1000);

StreamingJobOptions Options() {
  StreamingJobOptions options;
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(100);
  options.max_duration = absl::Minutes(10);
  return options;
}

TEST(RecoveryPolicyTest, RetriesTransientErrorsUpToMaxRecoveries) {
  RecoveryPolicy policy(Options(), kStart);
  const absl::Status error = absl::UnavailableError("sync failed");
  for (uint32_t i = 1; i <= 3; ++i) {
    BACKFILL_EXPECT_OK(policy.BeginRecovery(error));
    EXPECT_EQ(policy.recoveries(), i);
  }
  EXPECT_THAT(policy.BeginRecovery(error),
              StatusIs(absl::StatusCode::kUnavailable,
                       "sync failed (giving up after 3 recoveries)"));
  EXPECT_EQ(policy.recoveries(), 3u);
}

TEST(RecoveryPolicyTest, NeverRetriesDataLossOrDeadlineExceeded) {
  RecoveryPolicy policy(Options(), kStart);
  EXPECT_THAT(policy.BeginRecovery(absl::DataLossError("bad block in 7.sst")),
              StatusIs(absl::StatusCode::kDataLoss, "bad block in 7.sst"));
  EXPECT_THAT(policy.BeginRecovery(absl::DeadlineExceededError("late")),
              StatusIs(absl::StatusCode::kDeadlineExceeded, "late"));
  EXPECT_EQ(policy.recoveries(), 0u);
  // Everything else is retried, internal errors and cancellations included.
  BACKFILL_EXPECT_OK(policy.BeginRecovery(absl::InternalError("x")));
  BACKFILL_EXPECT_OK(policy.BeginRecovery(absl::CancelledError("x")));
}

TEST(RecoveryPolicyTest, ZeroMaxRecoveriesGivesUpAtOnce) {
  StreamingJobOptions options = Options();
  options.max_recoveries = 0;
  RecoveryPolicy policy(options, kStart);
  EXPECT_THAT(policy.BeginRecovery(absl::InternalError("boom")),
              StatusIs(absl::StatusCode::kInternal,
                       "boom (giving up after 0 recoveries)"));
}

TEST(RecoveryPolicyTest, BackoffDoublesPerConsecutiveFailureUpToFiveSeconds) {
  StreamingJobOptions options = Options();
  options.max_recoveries = 10;
  options.recovery_backoff = absl::Seconds(1);
  RecoveryPolicy policy(options, kStart);
  const absl::Status error = absl::UnavailableError("x");
  const absl::Duration expected[] = {absl::Seconds(1), absl::Seconds(2),
                                     absl::Seconds(4), absl::Seconds(5),
                                     absl::Seconds(5)};
  for (absl::Duration want : expected) {
    BACKFILL_ASSERT_OK(policy.BeginRecovery(error));
    EXPECT_THAT(policy.Backoff(error, kStart), IsOkAndHolds(want));
  }
}

TEST(RecoveryPolicyTest, ProgressRestartsTheBackoff) {
  RecoveryPolicy policy(Options(), kStart);
  const absl::Status error = absl::UnavailableError("x");
  BACKFILL_ASSERT_OK(policy.BeginRecovery(error));
  BACKFILL_ASSERT_OK(policy.BeginRecovery(error));
  EXPECT_THAT(policy.Backoff(error, kStart),
              IsOkAndHolds(absl::Milliseconds(200)));
  policy.AttemptProgressed();
  BACKFILL_ASSERT_OK(policy.BeginRecovery(error));
  EXPECT_THAT(policy.Backoff(error, kStart),
              IsOkAndHolds(absl::Milliseconds(100)));
  // Progress does not give recoveries back.
  EXPECT_EQ(policy.recoveries(), 3u);
}

TEST(RecoveryPolicyTest, BackoffPastTheDeadlineIsDeadlineExceeded) {
  StreamingJobOptions options = Options();
  options.max_duration = absl::Seconds(1);
  RecoveryPolicy policy(options, kStart);
  const absl::Status error = absl::UnavailableError("disk gone");
  BACKFILL_ASSERT_OK(policy.BeginRecovery(error));
  // 100 ms fits before the deadline at start + 1 s ...
  EXPECT_THAT(policy.Backoff(error, kStart + absl::Milliseconds(900)),
              IsOkAndHolds(absl::Milliseconds(100)));
  // ... but not from 950 ms on.
  EXPECT_THAT(policy.Backoff(error, kStart + absl::Milliseconds(950)),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       HasSubstr("no time left within the job's 1s to "
                                 "recover from: disk gone")));
}

}  // namespace
}  // namespace backfill
