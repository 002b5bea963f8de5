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
  }
  return "?";
}

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
  rate_ = new_rate;
  last_change_ = at;
  skip_next_ = true;
  window_open_ = false;
  return rate_;
}

std::optional<uint32_t> AdaptiveRateController::Decrease(absl::Time at) {
  // The first overrun ends slow start: its last doubling overshot, so go
  // back to the rate before it (the last one that ran clean), as TCP's slow
  // start falls back to half the window.
  const double factor = slow_start_ ? 0.5 : options_.decrease_factor;
  // From the rate the backfill could use: a limit far above what it read
  // would otherwise take several decreases to bind at all.
  return CutFrom(EffectiveRate(), factor, Decision::kDecrease, at);
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
  if (*achieved >= options_.binding_fraction * rate_) return std::nullopt;
  return achieved;
}

std::optional<uint32_t> AdaptiveRateController::Increase(absl::Time at) {
  if (const std::optional<double> ceiling = CeilingReached()) {
    // The backfill reads all it can: the store has seen its full pace for a
    // window, and the load that pace puts on flushes and compactions shows
    // in the barrier latency only seconds later. Back off below it, as after
    // an overrun, and climb cautiously toward it.
    return CutFrom(*ceiling, options_.decrease_factor, Decision::kCeiling, at);
  }
  // A window the backfill did not use its rate in says nothing about that
  // rate: no step, no clean window toward a cautious one, no overrun rate
  // passed.
  if (const double usable = EffectiveRate(); usable < rate_) {
    return ApplicationLimited(usable, at);
  }
  last_decision_ = Decision::kIncrease;
  if (slow_start_) return Change(Clamp(2.0 * rate_), at);
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
  if (latency > target) {
    if (!calm_before) return Decrease(collected_at);
    // A lone spike: not judged at all (not even as a hold).
    ++spikes_ignored_;
    return std::nullopt;
  }

  if (!window_open_) {
    window_open_ = true;
    window_start_ = injected_at;
    window_barriers_ = 0;
    window_max_latency_ = absl::ZeroDuration();
  }
  ++window_barriers_;
  window_max_latency_ = std::max(window_max_latency_, latency);
  if (injected_at - window_start_ < options_.window ||
      window_barriers_ < options_.min_barriers_per_window) {
    return std::nullopt;
  }

  window_open_ = false;
  if (window_max_latency_ < target * options_.headroom_fraction) {
    return Increase(collected_at);
  }
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
  rate_ = clamped;
  window_open_ = false;
  skip_next_ = true;
  return rate_;
}

std::string AdaptiveRateController::DebugString() const {
  return absl::StrCat("rate=", rate_, " rows/s slow_start=",
                      slow_start_ ? "true" : "false",
                      " last=", DecisionName(last_decision_));
}

}  // namespace backfill
