// JobState: the mutations in force of a streaming job (paused or not, the
// job-wide rate limit, the parallelism, whether the upstream was stopped) and
// the number of barriers since the view's creation; JobAction, one entry of
// the job's timeline; and how the actions at one barrier compose.
//
//   JobState state = ...;                                  // saved, or initial
//   BACKFILL_RETURN_IF_ERROR(ValidateJobActions(actions)); // once, up front
//   ++state.epochs_since_creation;                         // a new barrier
//   JobState next = ApplyJobActions(state, actions);       // its actions
//   if (next.EffectiveRateLimit() != state.EffectiveRateLimit()) ...Throttle
//
// The coordinator owns the job state: it persists it with every checkpoint
// (executor/runtime/job_state_table.h) and rebuilds actors from it on every
// recovery and restart, so a recovery never changes the job's rate, pause
// state or parallelism, and an action that already applied never fires again.
//
// Composition (all actions at one barrier apply, in the order given, to one
// JobState; the barrier then carries one mutation for the net change):
//  * pause / resume set `paused`; set_rate_limit sets `rate_limit`;
//    stop_upstream sets `upstream_stopped`. The fields are independent.
//  * A backfill actor reads at EffectiveRateLimit(): Pause while paused, else
//    its share of the job-wide rate limit. So a rate limit set while paused
//    (or at the same barrier as a pause) is kept and takes effect on resume;
//    resume + set_rate_limit at one barrier resumes at the new rate.
//  * Two set_rate_limit actions at one barrier: the later one wins.
//  * rescale sets `parallelism` (two at one barrier: the later one wins). The
//    actors change at the first checkpoint barrier from then on (an online
//    rescale, executor/runtime/barrier_coordinator.h), which commits the new
//    parallelism with the old actors' last progress.
//  * pause and resume at one barrier contradict each other: ValidateJobActions
//    rejects them (InvalidArgument naming both).
//  * Adaptive mode (CONTRACT §11; `adaptive_target` > 0): the coordinator's
//    controller sets `adaptive_rows_per_second` from the barrier latencies,
//    and the actors read at that rate. `rate_limit` stays the user's limit and
//    caps the controller: set_rate_limit R while adaptive lowers (or raises)
//    the ceiling to R, set_rate_limit 0 lifts it; it never leaves adaptive
//    mode. A pause still wins (EffectiveRateLimit is Pause while paused).
//    The mode is chosen for a new job (StreamingJobOptions) or for a run
//    (JobStateOverrides), not by actions.
//
// Thread-safety: plain values and pure functions.
#ifndef EXECUTOR_RUNTIME_JOB_STATE_H_
#define EXECUTOR_RUNTIME_JOB_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ratelimit/rate_limit.h"

namespace backfill {

// A timeline entry: applies at the `at_epoch`-th barrier after the view's
// creation (the creation barrier itself is number 0; the first barrier of a
// recovery or restart is not counted either: it only re-establishes the
// saved state).
struct JobAction {
  enum class Kind { kPause, kResume, kSetRateLimit, kStopUpstream, kRescale };
  // >= 1.
  uint64_t at_epoch = 1;
  Kind kind = Kind::kPause;
  // kSetRateLimit only: job-wide snapshot rows/s; 0 = no limit.
  uint64_t rate_limit = 0;
  // kRescale only: the new number of backfill actors, in [1, vnode count].
  uint32_t parallelism = 0;
};

// "pause at epoch 3", "set_rate_limit 1000 at epoch 20", ...
std::string JobActionDebugString(const JobAction& action);

// The job-wide rate limit of a kSetRateLimit action (or of a scenario's
// rows/s): 0 -> Disabled, n -> Fixed(min(n, 2^32 - 1)).
RateLimit JobRateLimit(uint64_t rows_per_second);

struct JobState {
  // The backfill reads no snapshot rows while paused (upstream changes still
  // flow, are marked and replicated).
  bool paused = false;
  // Job-wide snapshot rows/s, split among the actors by their vnode shares.
  // Disabled or Fixed (pausing is `paused`).
  RateLimit rate_limit = RateLimit::Disabled();
  // Backfill actors, >= 1.
  uint32_t parallelism = 1;
  // The upstream source generates no more changes (it still forwards
  // barriers).
  bool upstream_stopped = false;
  // Barriers since the view's creation whose actions have been applied.
  uint64_t epochs_since_creation = 0;
  // Adaptive mode: > 0 is the barrier-latency target (CONTRACT §11) the
  // coordinator's controller keeps the backfill under; zero: not adaptive
  // (negative is invalid). Persisted in microseconds.
  absl::Duration adaptive_target = absl::ZeroDuration();
  // While adaptive: the controller's job-wide rate in force, rows/s; 0 until
  // a controller started (it then begins with a slow start), and whenever
  // not adaptive.
  uint32_t adaptive_rows_per_second = 0;

  bool adaptive() const { return adaptive_target > absl::ZeroDuration(); }

  // The limit every backfill actor's share is taken from: Pause while
  // paused; while adaptive (with a controller rate), Fixed(the controller's
  // rate, capped by a Fixed rate_limit); else rate_limit.
  RateLimit EffectiveRateLimit() const;

  // "{paused: false, rate_limit: fixed(30 rows/s), parallelism: 2,
  // upstream_stopped: false, epochs_since_creation: 17}", and while adaptive
  // ", adaptive_target: 70ms, adaptive_rows_per_second: 4096" before the "}".
  std::string DebugString() const;

  friend bool operator==(const JobState&, const JobState&) = default;
};

// OK iff no two actions at one epoch contradict each other, every at_epoch
// is >= 1 and every rescale's parallelism is >= 1 (its upper bound, the
// vnode count, is the job's: ValidateStreamingJobOptions); otherwise InvalidArgument naming the actions by index,
// e.g. "actions[0] (pause at epoch 20) and actions[2] (resume at epoch 20)
// contradict each other: ...".
absl::Status ValidateJobActions(const std::vector<JobAction>& actions);

// `state` after every action of `actions` whose at_epoch equals
// state.epochs_since_creation, in the order given (see the file comment).
// Other actions are ignored. REQUIRES: ValidateJobActions(actions).ok().
JobState ApplyJobActions(JobState state, const std::vector<JobAction>& actions);

// Explicit settings for this run of a job (the command's --parallelism and
// --rate_limit): they apply on top of the saved state at the run's first
// barrier, as if actions of that barrier, and are persisted with the next
// checkpoint like any other change. Unset fields keep the saved state.
struct JobStateOverrides {
  std::optional<uint32_t> parallelism;
  std::optional<RateLimit> rate_limit;
  // > 0: adaptive mode with this target (a new target keeps the
  // controller's saved rate; entering the mode starts a slow start); zero:
  // leave adaptive mode. Negative is invalid.
  std::optional<absl::Duration> adaptive_target;
};

// `state` with the set fields of `overrides` applied.
JobState ApplyJobStateOverrides(JobState state,
                                const JobStateOverrides& overrides);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_JOB_STATE_H_
