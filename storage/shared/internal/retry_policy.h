// When S3ObjectStore retries, and how long it waits: transient failures
// (no response, HTTP 5xx, 429, 408, S3's SlowDown) are retried with
// exponential back-off and "equal jitter" until a per-operation deadline;
// everything else (4xx) is permanent and surfaces at once.
#ifndef STORAGE_SHARED_INTERNAL_RETRY_POLICY_H_
#define STORAGE_SHARED_INTERNAL_RETRY_POLICY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace backfill::shared_internal {

// The wait before retry number `retry` (0 = the first retry): with
// cap = min(max_backoff, initial_backoff * 2^retry), a value in
// [cap / 2, cap] chosen by `uniform01` (in [0, 1], clamped). Equal jitter:
// waits still grow, and clients that failed together spread out.
// REQUIRES: 0 < initial_backoff <= max_backoff.
absl::Duration BackoffDelay(absl::Duration initial_backoff,
                            absl::Duration max_backoff, int retry,
                            double uniform01);

// Whether an HTTP status is worth retrying: 408, 429, 500-599 but 501
// (Not Implemented does not get better).
bool IsTransientHttpStatus(int status);

// Whether an S3 error code is worth retrying whatever the status it came
// with: "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable",
// "ConditionalRequestConflict" (AWS's 409 for racing conditional writes).
bool IsTransientS3ErrorCode(absl::string_view code);

// Whether a transport error (no response) is worth retrying: Unavailable
// and DeadlineExceeded.
bool IsTransientTransportError(const absl::Status& status);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_RETRY_POLICY_H_
