#include "ratelimit/adaptive_rate_controller.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace backfill {
namespace {

const char* DecisionName(AdaptiveRateController::Decision decision) {
  switch (decision) {
    case AdaptiveRateController::Decision::kNone:
      return "none";
    case AdaptiveRateController::Decision::kIncrease:
      return "increase";
    case AdaptiveRateController::Decision::kDecrease:
      return "decrease";
    case AdaptiveRateController::Decision::kHold:
      return "hold";
    case AdaptiveRateController::Decision::kLower:
      return "lower";
    case AdaptiveRateController::Decision::kCeiling:
      return "ceiling";
    case AdaptiveRateController::Decision::kProbe:
      return "probe";
    case AdaptiveRateController::Decision::kUnreachable:
      return "unreachable";
  }
  return "?";
}

// The median of a non-empty set of latencies (the upper one of an even set).
absl::Duration Median(std::vector<absl::Duration> latencies) {
  const auto middle = latencies.begin() + latencies.size() / 2;
  std::nth_element(latencies.begin(), middle, latencies.end());
  return *middle;
}

// Over-target latencies at least this fraction of an earlier set's median
// are "not falling": the cuts between them did not make them faster.
constexpr double kNotFalling = 0.8;
// A run of decreases probes at the floor once the floor is at most this
// fraction of the rate the run started from.
constexpr double kFloorProbeFraction = 0.5;
// The triggers of a run of decreases kept for that median: the latest.
constexpr size_t kRunTriggers = 16;

}  // namespace

absl::Status ValidateAdaptiveRateControllerOptions(
    const AdaptiveRateControllerOptions& options) {
  if (options.target_barrier_latency <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: target_barrier_latency must be > 0, got ",
                     absl::FormatDuration(options.target_barrier_latency)));
  }
  if (options.min_rows_per_second < 1) {
    return absl::InvalidArgumentError(
        "adaptive rate: min_rows_per_second must be >= 1, got 0");
  }
  if (options.max_rows_per_second < options.min_rows_per_second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "adaptive rate: max_rows_per_second (", options.max_rows_per_second,
        ") must be >= min_rows_per_second (", options.min_rows_per_second,
        ")"));
  }
  if (options.window <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: window must be > 0, got ",
                     absl::FormatDuration(options.window)));
  }
  if (options.min_barriers_per_window < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: min_barriers_per_window must be >= 1, "
                     "got ",
                     options.min_barriers_per_window));
  }
  if (!(options.headroom_fraction > 0 && options.headroom_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: headroom_fraction must be in (0, 1], "
                     "got ",
                     options.headroom_fraction));
  }
  if (!(options.decrease_factor > 0 && options.decrease_factor < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: decrease_factor must be in (0, 1), got ",
                     options.decrease_factor));
  }
  if (!(options.additive_increase_fraction > 0 &&
        std::isfinite(options.additive_increase_fraction))) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: additive_increase_fraction must be > 0, "
                     "got ",
                     options.additive_increase_fraction));
  }
  if (!(options.caution_fraction > 0 && options.caution_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: caution_fraction must be in (0, 1], "
                     "got ",
                     options.caution_fraction));
  }
  if (options.calm_barriers < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: calm_barriers must be >= 0, got ",
                     options.calm_barriers));
  }
  if (!(options.application_limited_multiple >= 1 &&
        std::isfinite(options.application_limited_multiple))) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: application_limited_multiple must be "
                     ">= 1, got ",
                     options.application_limited_multiple));
  }
  if (!(options.binding_fraction > 0 && options.binding_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: binding_fraction must be in (0, 1], "
                     "got ",
                     options.binding_fraction));
  }
  if (options.read_granularity_rows < 1) {
    return absl::InvalidArgumentError(
        "adaptive rate: read_granularity_rows must be >= 1, got 0");
  }
  if (!(options.probe_fraction >= 0 && options.probe_fraction < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: probe_fraction must be in [0, 1), got ",
                     options.probe_fraction));
  }
  if (options.probe_windows < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: probe_windows must be >= 1, got ",
                     options.probe_windows));
  }
  if (options.unreachable_recheck <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: unreachable_recheck must be > 0, got ",
                     absl::FormatDuration(options.unreachable_recheck)));
  }
  if (options.cautious_windows < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("adaptive rate: cautious_windows must be >= 1, got ",
                     options.cautious_windows));
  }
  return absl::OkStatus();
}

AdaptiveRateController::AdaptiveRateController(
    const AdaptiveRateControllerOptions& options)
    : options_(options),
      floor_(options.min_rows_per_second),
      rate_(Clamp(options.initial_rows_per_second)),
      slow_start_(options.slow_start),
      additive_step_(std::max<uint32_t>(
          1, Clamp(rate_ * options.additive_increase_fraction))) {}

uint32_t AdaptiveRateController::Clamp(double rate) const {
  if (!(rate > options_.min_rows_per_second)) {
    return options_.min_rows_per_second;
  }
  if (rate >= options_.max_rows_per_second) return options_.max_rows_per_second;
  return static_cast<uint32_t>(rate);
}

std::optional<double> AdaptiveRateController::achieved_rows_per_second() const {
  if (!rows_ref_.has_value() || rows_barriers_ < 2 ||
      rows_last_at_ <= rows_ref_at_) {
    return std::nullopt;
  }
  return static_cast<double>(rows_last_ - *rows_ref_) /
         absl::ToDoubleSeconds(rows_last_at_ - rows_ref_at_);
}

std::optional<double> AdaptiveRateController::JudgedRate(
    double shortfall) const {
  const std::optional<double> achieved = achieved_rows_per_second();
  if (!achieved.has_value()) return std::nullopt;
  // Reading whole chunks, a backfill at its rate can be a chunk short at
  // any barrier: judge only a span in which a chunk is at most half the
  // shortfall the rule looks for. A rule that looks for less than 10% (an
  // option at 1) is judged as one that looks for 10%: 20 chunks' worth.
  constexpr double kLeastShortfall = 0.1;
  const double expected =
      rate_ * absl::ToDoubleSeconds(rows_last_at_ - rows_ref_at_);
  if (expected * std::max(shortfall, kLeastShortfall) <
      2.0 * options_.read_granularity_rows) {
    return std::nullopt;
  }
  return achieved;
}

double AdaptiveRateController::EffectiveRate() const {
  const std::optional<double> achieved =
      JudgedRate(1.0 - 1.0 / options_.application_limited_multiple);
  if (!achieved.has_value()) return rate_;
  return std::min<double>(rate_,
                          options_.application_limited_multiple * *achieved);
}

void AdaptiveRateController::SetRowsReference(absl::Time at,
                                              std::optional<uint64_t> rows) {
  rows_ref_at_ = rows_last_at_ = at;
  rows_ref_ = rows;
  rows_last_ = rows.value_or(0);
  rows_barriers_ = 0;
}

std::optional<uint32_t> AdaptiveRateController::Change(uint32_t new_rate,
                                                       absl::Time at) {
  if (new_rate == rate_) return std::nullopt;
  // Back where the run of decreases started: it is over.
  if (run_start_rate_ != 0 && new_rate >= run_start_rate_) EndDecreaseRun();
  rate_ = new_rate;
  last_change_ = at;
  skip_next_ = true;
  window_open_ = false;
  return rate_;
}

double AdaptiveRateController::DecreaseFactor() const {
  // The first overrun ends slow start: its last doubling overshot, so go
  // back to the rate before it (the last one that ran clean), as TCP's slow
  // start falls back to half the window.
  return slow_start_ ? 0.5 : options_.decrease_factor;
}

std::optional<uint32_t> AdaptiveRateController::Decrease(absl::Time at) {
  // From the rate the backfill could use: a limit far above what it read
  // would otherwise take several decreases to bind at all.
  return CutFrom(EffectiveRate(), DecreaseFactor(), Decision::kDecrease, at);
}

std::optional<uint32_t> AdaptiveRateController::OverTarget(
    absl::Time injected_at, absl::Time at, absl::Duration latency) {
  const double from = EffectiveRate();
  if (run_start_rate_ == 0) {
    run_start_rate_ = from;
    run_probe_below_ = from * options_.probe_fraction;
    run_triggers_.clear();
  }
  // Not falling: as slow as the run's earlier triggers, cut after cut.
  const bool not_falling =
      !run_triggers_.empty() && latency >= kNotFalling * Median(run_triggers_);
  run_triggers_.push_back(latency);
  if (run_triggers_.size() > kRunTriggers) {
    run_triggers_.erase(run_triggers_.begin());
  }
  // The floor ends the cuts before a run that started low reaches the probe
  // point: probe at the floor too, once the run has at least halved the
  // rate (a run that started at the floor has nothing to compare).
  const uint32_t cut = Clamp(from * DecreaseFactor());
  const bool at_floor = cut == options_.min_rows_per_second &&
                        cut <= kFloorProbeFraction * run_start_rate_;
  if (options_.probe_fraction > 0 && not_falling &&
      (cut < run_probe_below_ || at_floor)) {
    // Many cuts, and the barriers over the target as slow as before them:
    // hold the rate a while and see whether what is left of the overload is
    // the backfill's (its barriers get faster at this lower rate) or not.
    last_decision_ = Decision::kProbe;
    slow_start_ = false;
    probing_ = true;
    probe_until_ = injected_at + options_.window * options_.probe_windows;
    probe_.Clear();
    // The window after the probe starts after it.
    window_open_ = false;
    return std::nullopt;
  }
  return Decrease(at);
}

std::optional<uint32_t> AdaptiveRateController::EndProbe(absl::Time at) {
  probing_ = false;
  ++probes_;
  calm_run_ = 0;
  if (probe_.over.empty()) {
    // Nothing over the target while the rate held: the next window is
    // judged as usual. The run goes on until the rate is back where it
    // started: a later overrun in it probes again.
    last_decision_ = Decision::kHold;
    return std::nullopt;
  }
  const absl::Duration probed = Median(probe_.over);
  if (probed < kNotFalling * Median(run_triggers_)) {
    // Faster at the lower rate: the cuts work; go on (probing again a
    // probe_fraction further down if they stop working).
    run_probe_below_ *= options_.probe_fraction;
    return Decrease(at);
  }
  // As slow at a fraction of the rate: the target cannot be met at this
  // load, and the cuts only starve the backfill. Go back up to one cut
  // below where the run started, and judge against what the probe saw.
  unreachable_ = true;
  unreachable_since_ = at;
  ++unreachable_episodes_;
  background_over_fraction_ =
      static_cast<double>(probe_.over.size()) / std::max(1, probe_.barriers);
  background_over_latency_ = probed;
  const uint32_t restored =
      std::max(rate_, Clamp(run_start_rate_ * options_.decrease_factor));
  // And climb from there as from the start, doubling while the windows are
  // no worse than the background: the run may have started low.
  last_decision_ = Decision::kUnreachable;
  slow_start_ = true;
  slow_start_share_ = 0;
  overrun_rate_ = 0;
  clean_windows_ = 0;
  accelerating_ = false;
  SizeAdditiveStep(restored);
  EndDecreaseRun();
  return Change(restored, at);
}

void AdaptiveRateController::EndDecreaseRun() {
  run_start_rate_ = 0;
  run_probe_below_ = 0;
  run_triggers_.clear();
}

std::optional<uint32_t> AdaptiveRateController::JudgeAgainstBackground(
    absl::Time injected_at, absl::Time at) {
  if (window_max_latency_ <
          options_.target_barrier_latency * options_.headroom_fraction ||
      injected_at - unreachable_since_ >= options_.unreachable_recheck) {
    // The background is gone (a clean window), or it is time to test again
    // whether it is still there: judge against the target.
    unreachable_ = false;
    return JudgeAgainstTarget(at);
  }
  const double barriers = window_tally_.barriers;
  const double over = window_tally_.over.size();
  const absl::Duration over_latency = window_tally_.over.empty()
                                          ? absl::ZeroDuration()
                                          : Median(window_tally_.over);
  // Worse than the background, clearly more often (a probe of a couple of
  // dozen barriers measures a fraction only roughly) or slower (judged on
  // two barriers at least: the background has lone slow ones too): the
  // backfill now adds to it.
  const double background = background_over_fraction_ * barriers;
  if (over > background + 0.3 * barriers + 1 ||
      (over >= 2 && over_latency > 1.5 * background_over_latency_)) {
    return CutFrom(EffectiveRate(), options_.decrease_factor,
                   Decision::kDecrease, at);
  }
  // No worse than the background: the rate may grow.
  if (over <= background + 0.15 * barriers + 1 &&
      (over <= 1 || over_latency <= 1.2 * background_over_latency_)) {
    return Increase(at);
  }
  return Hold();
}

std::optional<uint32_t> AdaptiveRateController::CutFrom(double from,
                                                        double factor,
                                                        Decision decision,
                                                        absl::Time at) {
  last_decision_ = decision;
  slow_start_ = false;
  clean_windows_ = 0;
  accelerating_ = false;
  overrun_rate_ = Clamp(from);
  const uint32_t cut = Clamp(from * factor);
  SizeAdditiveStep(cut);
  return Change(cut, at);
}

std::optional<double> AdaptiveRateController::CeilingReached() const {
  if (!slow_start_) return std::nullopt;
  const std::optional<double> achieved =
      JudgedRate(1.0 - options_.binding_fraction);
  if (!achieved.has_value()) return std::nullopt;
  // Against the share of its rate the backfill read at the rate before: one
  // paced by the limiter reads less than its rate anyway (nothing while it
  // handles a barrier, and the smooth limiter banks one chunk at most), and
  // doubling its rate does not change that share; past its ceiling the
  // share falls with the doubling. The first judged window has no share to
  // go by: less than 1 / application_limited_multiple of the rate (a rate
  // the backfill does not use) is its ceiling, more is measured.
  const double least_share = slow_start_share_ > 0
                                 ? options_.binding_fraction * slow_start_share_
                                 : 1.0 / options_.application_limited_multiple;
  if (*achieved >= least_share * rate_) return std::nullopt;
  return achieved;
}

std::optional<uint32_t> AdaptiveRateController::Increase(absl::Time at) {
  if (const std::optional<double> ceiling = CeilingReached()) {
    // The backfill reads all it can: the store has seen its full pace for a
    // window, and the load that pace puts on flushes and compactions shows
    // in the barrier latency only seconds later. Back off below it, as after
    // an overrun, and climb cautiously toward it.
    EndDecreaseRun();
    return CutFrom(*ceiling, options_.decrease_factor, Decision::kCeiling, at);
  }
  // A window the backfill did not use its rate in says nothing about that
  // rate: no step, no clean window toward a cautious one, no overrun rate
  // passed.
  if (const double usable = EffectiveRate(); usable < rate_) {
    return ApplicationLimited(usable, at);
  }
  last_decision_ = Decision::kIncrease;
  if (slow_start_) {
    if (const std::optional<double> achieved =
            JudgedRate(1.0 - options_.binding_fraction)) {
      slow_start_share_ = std::min(1.0, *achieved / rate_);
    }
    return Change(Clamp(2.0 * rate_), at);
  }
  ++clean_windows_;
  if (overrun_rate_ != 0 && rate_ > overrun_rate_) {
    // Passed cleanly: the load that overran is gone. Climb back at a
    // growing pace (each step twice the last) until the next overrun or
    // hold: the rate the lighter load allows may be far above.
    overrun_rate_ = 0;
    accelerating_ = true;
  }
  if (accelerating_) {
    additive_step_ = static_cast<uint32_t>(std::min<uint64_t>(
        2ull * additive_step_, std::max<uint32_t>(1, rate_)));
  }
  const double increased = static_cast<double>(rate_) + additive_step_;
  if (overrun_rate_ != 0 &&
      increased > options_.caution_fraction * overrun_rate_) {
    const uint32_t knee = Clamp(options_.caution_fraction * overrun_rate_);
    if (rate_ < knee) {
      // Climb freely up to the cautious point, no further.
      clean_windows_ = 0;
      return Change(knee, at);
    }
    if (clean_windows_ < options_.cautious_windows) return std::nullopt;
  }
  clean_windows_ = 0;
  return Change(Clamp(increased), at);
}

void AdaptiveRateController::SizeAdditiveStep(uint32_t rate) {
  additive_step_ = std::max<uint32_t>(
      1, static_cast<uint32_t>(rate * options_.additive_increase_fraction));
}

std::optional<uint32_t> AdaptiveRateController::ApplicationLimited(
    double usable, absl::Time at) {
  // Raising a rate the backfill does not use would only make a later
  // decrease start from a limit that does not bind: hold.
  last_decision_ = Decision::kHold;
  accelerating_ = false;
  if (2.0 * usable >= rate_) return std::nullopt;
  // More than twice what the backfill can use does not bound its bursts
  // either (the moment the upstream leaves the CPU idle, the backfill takes
  // it all): lower it, by half at most per window, so that one window of
  // slow reads (a stall, a compaction) does not cut a limit the backfill
  // needs again right after. Not a congestion signal: the overrun rate
  // stays. Slow start ends: its doubling from the lowered rate would land
  // back at twice the usable rate, and the rate would swing between the two
  // as the rate read wobbles. The additive step is a fraction of the lowered
  // rate (as of a decreased one).
  last_decision_ = Decision::kLower;
  EndDecreaseRun();
  slow_start_ = false;
  clean_windows_ = 0;
  const uint32_t lowered = Clamp(std::max(usable, rate_ / 2.0));
  SizeAdditiveStep(lowered);
  return Change(lowered, at);
}

std::optional<uint32_t> AdaptiveRateController::OnBarrier(
    absl::Time injected_at, absl::Duration latency,
    std::optional<uint64_t> rows_read) {
  // Barriers injected before the last change was applied ran under the old
  // rate; so did the first one after it (it carries the change and closes an
  // epoch read at the old rate). The last of them is where the rows read
  // under the new rate start.
  if (injected_at < last_change_) {
    SetRowsReference(injected_at, rows_read);
    return std::nullopt;
  }
  if (skip_next_) {
    skip_next_ = false;
    SetRowsReference(injected_at, rows_read);
    return std::nullopt;
  }
  if (!rows_read.has_value() || !rows_ref_.has_value() ||
      *rows_read < rows_last_) {
    // No count, or one that went back (a new count): start again from it.
    SetRowsReference(injected_at, rows_read);
  } else {
    rows_last_at_ = injected_at;
    rows_last_ = *rows_read;
    ++rows_barriers_;
  }
  const absl::Time collected_at = injected_at + latency;
  const absl::Duration target = options_.target_barrier_latency;
  if (probing_) {
    ++probe_.barriers;
    if (latency > target) probe_.over.push_back(latency);
    if (injected_at < probe_until_) return std::nullopt;
    return EndProbe(collected_at);
  }
  // In slow start an overrun is the doubling's, not a spike: every doubling
  // raises the load, and waiting for a second over-target barrier there
  // cost a barrier or two over the target at twice the last clean rate.
  const bool calm_before = !slow_start_ && options_.calm_barriers > 0 &&
                           calm_run_ >= options_.calm_barriers;
  if (latency < target * options_.headroom_fraction) {
    ++calm_run_;
  } else {
    calm_run_ = 0;
  }
  // An unreachable target: every barrier goes into the window, which is
  // judged against the background.
  if (latency > target && !unreachable_) {
    if (!calm_before) return OverTarget(injected_at, collected_at, latency);
    // A lone spike: not judged at all (not even as a hold).
    ++spikes_ignored_;
    return std::nullopt;
  }

  if (!window_open_) {
    window_open_ = true;
    window_start_ = injected_at;
    window_max_latency_ = absl::ZeroDuration();
    window_tally_.Clear();
  }
  window_max_latency_ = std::max(window_max_latency_, latency);
  ++window_tally_.barriers;
  if (latency > target) window_tally_.over.push_back(latency);
  if (injected_at - window_start_ < options_.window ||
      window_tally_.barriers < options_.min_barriers_per_window) {
    return std::nullopt;
  }

  window_open_ = false;
  if (unreachable_) return JudgeAgainstBackground(injected_at, collected_at);
  return JudgeAgainstTarget(collected_at);
}

std::optional<uint32_t> AdaptiveRateController::JudgeAgainstTarget(
    absl::Time at) {
  if (window_max_latency_ <
      options_.target_barrier_latency * options_.headroom_fraction) {
    return Increase(at);
  }
  return Hold();
}

std::optional<uint32_t> AdaptiveRateController::Hold() {
  last_decision_ = Decision::kHold;
  slow_start_ = false;
  clean_windows_ = 0;
  accelerating_ = false;
  return std::nullopt;
}

std::optional<uint32_t> AdaptiveRateController::SetMaxRowsPerSecond(
    uint32_t max_rows_per_second) {
  options_.max_rows_per_second = std::max<uint32_t>(1, max_rows_per_second);
  options_.min_rows_per_second =
      std::min(floor_, options_.max_rows_per_second);
  const uint32_t clamped = Clamp(rate_);
  if (clamped == rate_) return std::nullopt;
  // A new cap: a probe under the old one says nothing.
  probing_ = false;
  EndDecreaseRun();
  rate_ = clamped;
  window_open_ = false;
  skip_next_ = true;
  return rate_;
}

std::string AdaptiveRateController::DebugString() const {
  return absl::StrCat("rate=", rate_,
                      " rows/s slow_start=", slow_start_ ? "true" : "false",
                      " last=", DecisionName(last_decision_),
                      unreachable_ ? " target_unreachable" : "");
}

}  // namespace backfill
