#include "executor/runtime/recovery_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace backfill {

RecoveryPolicy::RecoveryPolicy(const StreamingJobOptions& options,
                               absl::Time job_start)
    : max_recoveries_(options.max_recoveries),
      base_backoff_(options.recovery_backoff),
      max_duration_(options.max_duration),
      job_start_(job_start) {}

absl::Status RecoveryPolicy::BeginRecovery(const absl::Status& error) {
  // Corrupt bytes do not heal, and a job out of time has none left.
  if (error.code() == absl::StatusCode::kDataLoss ||
      error.code() == absl::StatusCode::kDeadlineExceeded) {
    return error;
  }
  if (recoveries_ >= max_recoveries_) {
    return absl::Status(error.code(),
                        absl::StrCat(error.message(), " (giving up after ",
                                     recoveries_, " recoveries)"));
  }
  ++recoveries_;
  ++consecutive_;
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> RecoveryPolicy::Backoff(
    const absl::Status& error, absl::Time now) const {
  absl::Duration backoff = base_backoff_;
  for (uint32_t i = 1; i < consecutive_ && backoff < kMaxBackoff; ++i) {
    backoff *= 2;
  }
  backoff = std::min(backoff, kMaxBackoff);
  if (now + backoff > job_start_ + max_duration_) {
    return absl::DeadlineExceededError(absl::StrCat(
        "no time left within the job's ", absl::FormatDuration(max_duration_),
        " to recover from: ", error.message()));
  }
  return backoff;
}

}  // namespace backfill
