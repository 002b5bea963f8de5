#include "executor/runtime/job_state.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace backfill {

std::string JobActionDebugString(const JobAction& action) {
  const std::string at = absl::StrCat(" at epoch ", action.at_epoch);
  switch (action.kind) {
    case JobAction::Kind::kPause:
      return absl::StrCat("pause", at);
    case JobAction::Kind::kResume:
      return absl::StrCat("resume", at);
    case JobAction::Kind::kSetRateLimit:
      return absl::StrCat("set_rate_limit ", action.rate_limit, at);
    case JobAction::Kind::kStopUpstream:
      return absl::StrCat("stop_upstream", at);
    case JobAction::Kind::kRescale:
      return absl::StrCat("rescale ", action.parallelism, at);
  }
  return absl::StrCat("unknown action", at);
}

RateLimit JobRateLimit(uint64_t rows_per_second) {
  if (rows_per_second == 0) return RateLimit::Disabled();
  return RateLimit::Fixed(
      static_cast<uint32_t>(std::min<uint64_t>(rows_per_second, UINT32_MAX)));
}

RateLimit JobState::EffectiveRateLimit() const {
  if (paused) return RateLimit::Pause();
  if (!adaptive() || adaptive_rows_per_second == 0) return rate_limit;
  if (rate_limit.is_fixed()) {
    return RateLimit::Fixed(
        std::min(adaptive_rows_per_second, rate_limit.rows_per_second()));
  }
  return RateLimit::Fixed(adaptive_rows_per_second);
}

std::string JobState::DebugString() const {
  std::string adaptive_text;
  if (adaptive()) {
    adaptive_text = absl::StrCat(
        ", adaptive_target: ", absl::FormatDuration(adaptive_target),
        ", adaptive_rows_per_second: ", adaptive_rows_per_second);
  }
  return absl::StrCat(
      "{paused: ", paused ? "true" : "false",
      ", rate_limit: ", rate_limit.ToString(), ", parallelism: ", parallelism,
      ", upstream_stopped: ", upstream_stopped ? "true" : "false",
      ", epochs_since_creation: ", epochs_since_creation, adaptive_text, "}");
}

absl::Status ValidateJobActions(const std::vector<JobAction>& actions) {
  // epoch -> index of the first pause / resume there.
  std::map<uint64_t, size_t> pauses, resumes;
  for (size_t i = 0; i < actions.size(); ++i) {
    const JobAction& action = actions[i];
    if (action.at_epoch < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "actions[", i, "] (", JobActionDebugString(action),
          "): at_epoch must be >= 1 (epochs count from the view's creation)"));
    }
    if (action.kind == JobAction::Kind::kRescale && action.parallelism < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("actions[", i, "] (", JobActionDebugString(action),
                       "): the parallelism must be >= 1"));
    }
    std::map<uint64_t, size_t>* same = nullptr;
    std::map<uint64_t, size_t>* opposite = nullptr;
    if (action.kind == JobAction::Kind::kPause) {
      same = &pauses;
      opposite = &resumes;
    } else if (action.kind == JobAction::Kind::kResume) {
      same = &resumes;
      opposite = &pauses;
    } else {
      continue;
    }
    if (auto it = opposite->find(action.at_epoch); it != opposite->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "actions[", it->second, "] (",
          JobActionDebugString(actions[it->second]), ") and actions[", i, "] (",
          JobActionDebugString(action),
          ") contradict each other: a barrier cannot both pause and resume "
          "the backfill; move one of them to another epoch"));
    }
    same->emplace(action.at_epoch, i);
  }
  return absl::OkStatus();
}

JobState ApplyJobActions(JobState state,
                         const std::vector<JobAction>& actions) {
  for (const JobAction& action : actions) {
    if (action.at_epoch != state.epochs_since_creation) continue;
    switch (action.kind) {
      case JobAction::Kind::kPause:
        state.paused = true;
        break;
      case JobAction::Kind::kResume:
        state.paused = false;
        break;
      case JobAction::Kind::kSetRateLimit:
        state.rate_limit = JobRateLimit(action.rate_limit);
        break;
      case JobAction::Kind::kStopUpstream:
        state.upstream_stopped = true;
        break;
      case JobAction::Kind::kRescale:
        state.parallelism = action.parallelism;
        break;
    }
  }
  return state;
}

JobState ApplyJobStateOverrides(JobState state,
                                const JobStateOverrides& overrides) {
  if (overrides.parallelism.has_value()) {
    state.parallelism = *overrides.parallelism;
  }
  if (overrides.rate_limit.has_value())
    state.rate_limit = *overrides.rate_limit;
  if (overrides.adaptive_target.has_value()) {
    const bool was_adaptive = state.adaptive();
    state.adaptive_target =
        std::max(*overrides.adaptive_target, absl::ZeroDuration());
    // Entering the mode starts the controller afresh; leaving it drops its
    // rate; a new target keeps the rate it reached.
    if (!was_adaptive || !state.adaptive()) state.adaptive_rows_per_second = 0;
  }
  return state;
}

}  // namespace backfill
