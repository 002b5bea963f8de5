#include "storage/shared/internal/retry_policy.h"

#include <algorithm>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace backfill::shared_internal {
namespace {

TEST(BackoffDelayTest, DoublesWithinEqualJitterUpToTheCap) {
  const absl::Duration initial = absl::Milliseconds(100);
  const absl::Duration max = absl::Milliseconds(1000);
  EXPECT_EQ(BackoffDelay(initial, max, 0, 0.0), absl::Milliseconds(50));
  EXPECT_EQ(BackoffDelay(initial, max, 1, 0.0), absl::Milliseconds(100));
  EXPECT_EQ(BackoffDelay(initial, max, 2, 0.5), absl::Milliseconds(300));
  EXPECT_EQ(BackoffDelay(initial, max, 3, 0.0), absl::Milliseconds(400));
  // 100 ms * 2^4 = 1.6 s is past the cap.
  EXPECT_EQ(BackoffDelay(initial, max, 4, 0.0), absl::Milliseconds(500));
  EXPECT_EQ(BackoffDelay(initial, max, 4, 1.0), absl::Milliseconds(1000));
  // No overflow however many retries.
  EXPECT_EQ(BackoffDelay(initial, max, 10000, 1.0), absl::Milliseconds(1000));
  // Out-of-range randomness is clamped.
  EXPECT_EQ(BackoffDelay(initial, max, 0, -3.0), absl::Milliseconds(50));
  EXPECT_EQ(BackoffDelay(initial, max, 0, 7.0), absl::Milliseconds(100));
}

TEST(BackoffDelayTest, EveryDelayIsWithinHalfCapAndCap) {
  const absl::Duration initial = absl::Milliseconds(50);
  const absl::Duration max = absl::Seconds(2);
  for (int retry = 0; retry < 20; ++retry) {
    absl::Duration cap = std::min(initial * (1 << std::min(retry, 16)), max);
    for (double u : {0.0, 0.25, 0.5, 0.75, 0.99}) {
      absl::Duration delay = BackoffDelay(initial, max, retry, u);
      EXPECT_GE(delay, cap / 2) << retry << " " << u;
      EXPECT_LE(delay, cap) << retry << " " << u;
    }
  }
}

TEST(RetryClassificationTest, TransientAndPermanent) {
  for (int status : {408, 429, 500, 502, 503, 504, 599}) {
    EXPECT_TRUE(IsTransientHttpStatus(status)) << status;
  }
  for (int status :
       {200, 204, 206, 301, 400, 401, 403, 404, 409, 412, 416, 501}) {
    EXPECT_FALSE(IsTransientHttpStatus(status)) << status;
  }
  EXPECT_TRUE(IsTransientS3ErrorCode("SlowDown"));
  EXPECT_TRUE(IsTransientS3ErrorCode("RequestTimeout"));
  EXPECT_TRUE(IsTransientS3ErrorCode("ConditionalRequestConflict"));
  EXPECT_FALSE(IsTransientS3ErrorCode("AccessDenied"));
  EXPECT_FALSE(IsTransientS3ErrorCode(""));
  EXPECT_TRUE(IsTransientTransportError(absl::UnavailableError("refused")));
  EXPECT_TRUE(IsTransientTransportError(absl::DeadlineExceededError("slow")));
  EXPECT_FALSE(
      IsTransientTransportError(absl::InvalidArgumentError("bad url")));
}

}  // namespace
}  // namespace backfill::shared_internal
