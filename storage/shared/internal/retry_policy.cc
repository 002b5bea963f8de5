#include "storage/shared/internal/retry_policy.h"

#include <algorithm>

namespace backfill::shared_internal {

absl::Duration BackoffDelay(absl::Duration initial_backoff,
                            absl::Duration max_backoff, int retry,
                            double uniform01) {
  absl::Duration cap = initial_backoff;
  for (int i = 0; i < retry && cap < max_backoff; ++i) cap *= 2;
  cap = std::min(cap, max_backoff);
  uniform01 = std::clamp(uniform01, 0.0, 1.0);
  return cap / 2 + (cap / 2) * uniform01;
}

bool IsTransientHttpStatus(int status) {
  return status == 408 || status == 429 ||
         (status >= 500 && status <= 599 && status != 501);
}

bool IsTransientS3ErrorCode(absl::string_view code) {
  // ConditionalRequestConflict: AWS's 409 for a conditional write racing
  // another write to the same key; AWS says to retry.
  return code == "SlowDown" || code == "RequestTimeout" ||
         code == "InternalError" || code == "ServiceUnavailable" ||
         code == "ConditionalRequestConflict";
}

bool IsTransientTransportError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

}  // namespace backfill::shared_internal
