// RecoveryPolicy: whether a streaming job recovers from an error, and how
// long it waits first. No threads, no clock of its own: the caller passes
// the time and does the waiting, the logging and the store's reopen.
//
//   RecoveryPolicy policy(options, /*job_start=*/clock.Now());
//   absl::Status error = RunAttempt();
//   BACKFILL_RETURN_IF_ERROR(policy.BeginRecovery(error));   // or give up
//   log(error, policy.recoveries());
//   BACKFILL_ASSIGN_OR_RETURN(absl::Duration wait,
//                             policy.Backoff(error, clock.Now()));
//   clock.SleepUntil(clock.Now() + wait);
//
// The rules (StreamingJobOptions documents the knobs):
//  * DataLoss (corrupt bytes) and DeadlineExceeded are never retried.
//  * At most options.max_recoveries recoveries per run; the next error is
//    final, as "<message> (giving up after N recoveries)" with its code.
//  * The n-th consecutive recovery waits recovery_backoff x 2^(n-1), at most
//    5 s; an attempt that got a checkpoint through (AttemptProgressed) ends
//    a run of consecutive failures.
//  * A back-off that would end after job_start + max_duration is
//    DeadlineExceeded "no time left within the job's <max_duration> to
//    recover from: <message>".
//
// Thread-safety: one thread at a time.
#ifndef EXECUTOR_RUNTIME_RECOVERY_POLICY_H_
#define EXECUTOR_RUNTIME_RECOVERY_POLICY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/runtime/streaming_job_options.h"

namespace backfill {

class RecoveryPolicy {
 public:
  // The longest back-off.
  static constexpr absl::Duration kMaxBackoff = absl::Seconds(5);

  // Reads options.max_recoveries, recovery_backoff and max_duration (copied).
  RecoveryPolicy(const StreamingJobOptions& options, absl::Time job_start);

  // OK: recover from `error` (counted in recoveries()); otherwise the error
  // to give up with (see the rules above). REQUIRES: !error.ok().
  absl::Status BeginRecovery(const absl::Status& error);

  // The wait before the next attempt of the recovery begun last, or
  // DeadlineExceeded if it would end after the job's deadline.
  absl::StatusOr<absl::Duration> Backoff(const absl::Status& error,
                                         absl::Time now) const;

  // An attempt got a checkpoint through: the next failure is the first of a
  // new run (its back-off starts from recovery_backoff again).
  void AttemptProgressed() { consecutive_ = 0; }

  // Recoveries begun so far.
  uint32_t recoveries() const { return recoveries_; }

 private:
  const uint32_t max_recoveries_;
  const absl::Duration base_backoff_;
  const absl::Duration max_duration_;
  const absl::Time job_start_;
  uint32_t recoveries_ = 0;
  uint32_t consecutive_ = 0;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_RECOVERY_POLICY_H_
