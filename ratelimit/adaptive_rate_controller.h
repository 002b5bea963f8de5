// AdaptiveRateController: a backfill rate that follows a barrier-latency
// budget.
//
//   // clang-format off
//   AdaptiveRateController controller({.target_barrier_latency =
//   absl::Milliseconds(70)});
//   // At every collected barrier:
//   if (std::optional<uint32_t> rate = controller.OnBarrier(injected_at,
//   latency)) {
//     coordinator.Throttle(RateLimit::Fixed(*rate));   // the next barrier's
//     mutation
//   }
//   // clang-format on
//
// A pure state machine: no clock, no threads, no I/O. The caller feeds it one
// sample per collected barrier (when the barrier was injected, how long it
// took to be collected) and applies the rate it returns. Time comes only from
// the samples, so a simulated clock drives it exactly like a real one.
//
// The control law, on each judged barrier's latency L against the target T:
//   * L > T, on any one barrier: multiplicative decrease at once, rate x
//     decrease_factor (default 0.7), without waiting for the window to
//     close; slow start ends for good. The rate in force when it happened
//     is remembered as the overrun rate. The overrun that ends slow start
//     halves the rate instead (back to the last rate that ran clean before
//     the doubling that overshot), and in slow start no overrun is taken
//     for a spike (below).
//   * Once per observation window (default 1 s of barrier injections), on
//     the window's highest latency: below headroom_fraction x T (default
//     0.8), increase. In slow start (until the first window at or above the
//     headroom, or the ceiling below) the rate doubles; afterwards it grows by
//     additive_increase_fraction of the rate at the last decrease (default
//     10%): a constant step, as in AIMD. Otherwise hold: this band keeps a
//     steady load from making the rate oscillate.
//   * Except a spike: an over-target barrier after calm_barriers (default 3)
//     judged barriers in a row below headroom_fraction x T is taken as noise
//     the rate did not cause (a flush, a compaction): it is not judged at
//     all (no decrease; its window goes on without it). A second one before
//     the calm run builds up again lowers the rate. Lowering on every spike
//     would cut the rate to the floor on a machine with rate-independent
//     hiccups, without improving the tail those hiccups make.
//   * Near the overrun rate the climb slows: a step that would take the rate
//     past caution_fraction (default 0.9) of it needs cautious_windows
//     (default 4) increasing windows in a row. Each probe past the rate that
//     last overran costs a barrier or two over the target, so probing less
//     often near it is what keeps the barrier latency's tail (p99) under the
//     target; far from it the climb is as fast as before. A rate that passes
//     the overrun rate with a clean window forgets it (the load fell), and
//     the climb then accelerates (each step twice the last, at most the
//     rate itself) until the next decrease or hold.
//   * A rate the backfill does not reach says nothing: when the caller
//     reports the rows the backfill has read (OnBarrier's rows_read), the
//     rate counts as at most application_limited_multiple (default 2) x
//     the rate actually read since the last change. A rate above that does
//     not increase (the window holds), and a decrease starts from that, not
//     from a limit far above what was read (after RFC 7661's
//     application-limited senders); such a window is not counted toward a
//     cautious step either. A rate more than twice that comes down toward
//     it, by half at most per window (it would not bound the backfill's
//     bursts), and slow start ends; the overrun rate stays (a rate the
//     backfill cannot use is not a congestion signal). Between the usable
//     rate and twice it the rate holds.
//     Without it a backfill bound by its own CPU sees clean windows only,
//     doubles a limit it never reaches, and a later overrun's decreases take
//     many steps to bind.
//   * Slow start ends at the backfill's own ceiling: a clean window in which
//     it read less than binding_fraction (default 0.9) of the share of its
//     rate it read in the window that last doubled it (over enough rows that
//     whole chunks do not count: read_granularity_rows) found the most it
//     reads; in the first such window, with no share to go by, less than
//     1 / application_limited_multiple of its rate does. Against that
//     share, not the whole rate: a backfill paced by the smooth limiter
//     reads less than its rate anyway, nothing while it handles a barrier,
//     and that share does not fall when the rate doubles; past the ceiling
//     it halves. The rate backs off to decrease_factor x the
//     rate read, and that ceiling is remembered as the overrun rate (the
//     climb slows near it). Doubling on would only run the backfill flat
//     out, and a backfill flat out overloads the store seconds later
//     (flushes and compactions of what it wrote), long after the window
//     that could have seen it.
//   * A target the backfill cannot meet: when barriers over the target
//     come too often for the spike rule, their decreases follow one
//     another and, without more, walk the rate down to the floor, though
//     the barriers are no faster there (a store busy with its own flushes
//     and compactions). So a run of decreases (it lasts until the rate is
//     back where it started) that is about to take the rate below
//     probe_fraction (default 1/4) of where it started, while its
//     over-target barriers are not getting faster (each at least 0.8 x the
//     median of the run's earlier ones), probes first (so does one the
//     floor stops, once the run has at least halved the rate): it holds
//     the rate for probe_windows windows (default 2). If the probe's barriers
//     over the target are as slow as the run's (median at least 0.8 x), cutting
//     bought nothing: the target is unreachable at this load. The rate goes
//     back to decrease_factor x where the run started, slow start resumes,
//     and each window is judged against the background the probe measured
//     (its fraction of barriers over the target, and their median latency)
//     instead of the target: more than 0.3 of the window's barriers over
//     it beyond that fraction (plus one), or two or more with their median
//     above 1.5 x the background's, decreases; within 0.15 of the fraction
//     (plus one), and one or a median within 1.2 x the latency, increases;
//     otherwise hold (the background has lone slow barriers too). A window with
//     every barrier under the headroom ends this (the background is gone),
//     and so does unreachable_recheck (default 30 s), after which the
//     target rules again and a new run may probe again. If the probe's
//     barriers are faster, the cuts work: they go on, and the next probe
//     is a probe_fraction further down. A probe with no barrier over the
//     target holds, and the run goes on.
// The rate never leaves [min_rows_per_second, max_rows_per_second]; the floor
// keeps the backfill moving (choose it as about one chunk per few barriers),
// the ceiling is a user's fixed limit capping the controller.
//
// A decision is taken only on barriers injected after the previous change,
// so it never judges a rate by barriers that ran under the old one.
//
// Thread-compatible: one owner (the coordinator) calls it.
#ifndef RATELIMIT_ADAPTIVE_RATE_CONTROLLER_H_
#define RATELIMIT_ADAPTIVE_RATE_CONTROLLER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace backfill {

struct AdaptiveRateControllerOptions {
  // The barrier latency to stay under. Required: > 0.
  absl::Duration target_barrier_latency = absl::ZeroDuration();
  // The rate of the first window, rows/s (clamped to [min, max]). Default
  // 1024: low enough not to hurt a busy upstream, doubled quickly when idle.
  uint32_t initial_rows_per_second = 1024;
  // Floor, rows/s; >= 1. Default 16.
  uint32_t min_rows_per_second = 16;
  // Ceiling, rows/s; >= min_rows_per_second. Default: no ceiling.
  uint32_t max_rows_per_second = std::numeric_limits<uint32_t>::max();
  // One decision per window of barrier injections. > 0; default 1 s.
  absl::Duration window = absl::Seconds(1);
  // A window needs at least this many barriers to be judged. >= 1;
  // default 2.
  int min_barriers_per_window = 2;
  // Increase only below headroom_fraction x target. In (0, 1]; default 0.8.
  double headroom_fraction = 0.8;
  // Multiplicative decrease. In (0, 1); default 0.7.
  double decrease_factor = 0.7;
  // Additive step after slow start, as a fraction of the rate at the last
  // decrease. > 0; default 0.1.
  double additive_increase_fraction = 0.1;
  // The climb slows past this fraction of the overrun rate. In (0, 1];
  // default 0.9.
  double caution_fraction = 0.9;
  // Increasing windows in a row a cautious step needs. >= 1; default 4.
  int cautious_windows = 4;
  // An over-target barrier after at least this many judged barriers in a
  // row below headroom_fraction x target is taken as a spike the rate did
  // not cause (a flush, a compaction, a scheduling hiccup): it is left out
  // of the judgement (no decrease, and its window neither holds nor
  // increases for it). The next over-target barrier, before the run of calm
  // ones builds up again, lowers the rate. >= 0; default 3; 0: every barrier
  // over the target lowers the rate.
  int calm_barriers = 3;
  // See the control law: the rate counts as at most this multiple of the
  // rate read since the last change (when rows_read is reported, over at
  // least two barriers). >= 1; default 2.
  double application_limited_multiple = 2.0;
  // Futility: a run of decreases (until the rate is back where it started)
  // that would take the rate below this fraction of where it started, while
  // the over-target latencies that triggered them are not falling (each at
  // least 0.8 x their median so far), first holds the rate for a probe of
  // probe_windows windows. If the probe's over-target barriers are as slow
  // as the ones that triggered the run, the cuts bought nothing: the target
  // is unreachable at this load whatever the backfill does (see the control
  // law). In [0, 1); default 0.25; 0: never probe (cut down to the floor).
  double probe_fraction = 0.25;
  // The probe's length, in windows. >= 1; default 2.
  int probe_windows = 2;
  // How long an unreachable target is judged against the background the
  // probe measured before the controller judges against the target again
  // (and a new run of decreases may probe again). > 0; default 30 s.
  absl::Duration unreachable_recheck = absl::Seconds(30);
  // Whether to begin in slow start (doubling). A controller resumed from
  // saved job state after a recovery starts at the saved rate without it.
  bool slow_start = true;
  // In slow start, a clean window in which the backfill read less than this
  // fraction of the share of its rate it read at the rate before (the first
  // judged window: less than 1 / application_limited_multiple of its rate)
  // found the backfill's own ceiling (when rows_read is reported): slow
  // start ends there. In (0, 1]; default 0.9.
  double binding_fraction = 0.9;
  // The rows the backfill reads at once, job-wide (chunk size x actors):
  // the rate read counts only over a span in which one such chunk is at
  // most half the shortfall a rule looks for, so that reading whole chunks
  // is not taken for one: for the ceiling above (a 10% shortfall), once the
  // rate in force allowed 20x this many rows; for
  // application_limited_multiple (2: a 50% shortfall), 4x. A shortfall
  // under 10% (binding_fraction or application_limited_multiple near 1)
  // waits for 20x, as 10% does. >= 1; default 256.
  uint32_t read_granularity_rows = 256;
};

// InvalidArgument naming the first field out of range.
absl::Status ValidateAdaptiveRateControllerOptions(
    const AdaptiveRateControllerOptions& options);

class AdaptiveRateController {
 public:
  // kLower: lowered to what the backfill can use (application-limited; not
  // a congestion signal). kCeiling: slow start found the backfill's own
  // ceiling and backed off below it.
  // kProbe: a run of decreases paused to test whether they help.
  // kUnreachable: they did not; the rate went back up (see the control law).
  enum class Decision : uint8_t {
    kNone,
    kIncrease,
    kDecrease,
    kHold,
    kLower,
    kCeiling,
    kProbe,
    kUnreachable
  };

  // REQUIRES: ValidateAdaptiveRateControllerOptions(options).ok().
  explicit AdaptiveRateController(const AdaptiveRateControllerOptions& options);

  // Records one collected barrier: injected at `injected_at`, collected
  // `latency` later; `rows_read`, when given, is the backfill's rows read in
  // all the epochs this barrier and those before it closed (monotone across
  // calls; see application_limited_multiple). Returns the new rate when
  // this sample changed it; std::nullopt otherwise. Samples must come in
  // injection order (a barrier injected before the last change is ignored).
  std::optional<uint32_t> OnBarrier(
      absl::Time injected_at, absl::Duration latency,
      std::optional<uint64_t> rows_read = std::nullopt);

  // The rows read up to the next barrier say nothing about the rate (an
  // epoch the caller does not pass to OnBarrier, e.g. a paused one): the
  // achieved rate is measured again from the next barrier.
  void ForgetRowsRead() { rows_ref_.reset(); }

  // Changes the ceiling (a user's fixed rate limit while adaptive;
  // UINT32_MAX lifts it). The floor is the options' min_rows_per_second, or
  // the ceiling if that is lower (a cap below the floor wins), restored when
  // the ceiling rises again. Returns the new rate if the current one was
  // outside the new [floor, ceiling].
  std::optional<uint32_t> SetMaxRowsPerSecond(uint32_t max_rows_per_second);

  // Changes read_granularity_rows (at least 1), e.g. when a rescale changes
  // the number of actors reading whole chunks.
  void SetReadGranularityRows(uint32_t rows) {
    options_.read_granularity_rows = std::max<uint32_t>(1, rows);
  }
  uint32_t read_granularity_rows() const {
    return options_.read_granularity_rows;
  }

  // The rate in force, rows/s.
  uint32_t rows_per_second() const { return rate_; }
  // The rate read since the last change, rows/s, once known (rows_read
  // reported over at least two barriers since it).
  std::optional<double> achieved_rows_per_second() const;
  // The rate in force at the last overrun of the target; 0 when none is
  // remembered (none yet, or the rate has since passed it cleanly).
  uint32_t overrun_rows_per_second() const { return overrun_rate_; }
  bool in_slow_start() const { return slow_start_; }
  // Over-target barriers that did not lower the rate (see calm_barriers).
  uint64_t spikes_ignored() const { return spikes_ignored_; }
  // Whether the target is judged unreachable at this load: a probe found
  // that cutting the rate did not make the over-target barriers faster.
  // Until a window runs clean under the target again (or
  // unreachable_recheck passes), the rate is judged against the background
  // the probe measured instead (see the control law).
  bool target_unreachable() const { return unreachable_; }
  // Probes taken, and those that found the target unreachable.
  uint64_t probes() const { return probes_; }
  uint64_t unreachable_episodes() const { return unreachable_episodes_; }
  // The last window's decision (kNone before the first window closed).
  Decision last_decision() const { return last_decision_; }
  const AdaptiveRateControllerOptions& options() const { return options_; }

  // For logs: "rate=N rows/s slow_start=B last=DECISION".
  std::string DebugString() const;

 private:
  uint32_t Clamp(double rate) const;
  // The achieved rate, when known over a span long enough for a rule that
  // looks for a `shortfall` (a fraction of the rate, taken as at least 0.1)
  // to judge it: a read_granularity_rows chunk at most half of it.
  // std::nullopt otherwise.
  std::optional<double> JudgedRate(double shortfall) const;
  // The rate as far as the backfill can use it: min(rate_, multiple x
  // the judged rate) when there is one.
  double EffectiveRate() const;
  std::optional<uint32_t> Change(uint32_t new_rate, absl::Time at);
  std::optional<uint32_t> Decrease(absl::Time at);
  std::optional<uint32_t> Increase(absl::Time at);
  // A clean window in which the backfill did not use its rate (`usable`,
  // EffectiveRate(), is below it): holds, or lowers a rate more than twice
  // the usable one (see the control law).
  std::optional<uint32_t> ApplicationLimited(double usable, absl::Time at);
  // In slow start, a clean window whose rows read fell short of the rate
  // (see binding_fraction): the achieved rate, else std::nullopt.
  std::optional<double> CeilingReached() const;
  // Ends slow start and cuts the rate to `from` x `factor`, remembering
  // `from` as the overrun rate (a decrease, or a backing off below the
  // ceiling).
  std::optional<uint32_t> CutFrom(double from, double factor, Decision decision,
                                  absl::Time at);
  // The additive step after a decrease or a lowering to `rate`: its
  // additive_increase_fraction, at least 1.
  void SizeAdditiveStep(uint32_t rate);
  void SetRowsReference(absl::Time at, std::optional<uint64_t> rows);
  // A barrier over the target that is not a spike, collected at `at`
  // (`latency` after `injected_at`): a decrease, or a probe (futility).
  std::optional<uint32_t> OverTarget(absl::Time injected_at, absl::Time at,
                                     absl::Duration latency);
  // The probe's last barrier, collected at `at`: go on cutting, declare the
  // target unreachable, or (no barrier over the target) hold.
  std::optional<uint32_t> EndProbe(absl::Time at);
  // A window closed while the target is unreachable (see the control law).
  std::optional<uint32_t> JudgeAgainstBackground(absl::Time injected_at,
                                                 absl::Time at);
  void EndDecreaseRun();
  // A closed window judged against the target: increase below the
  // headroom, else hold.
  std::optional<uint32_t> JudgeAgainstTarget(absl::Time at);
  // Holds the rate: slow start, a cautious climb's count and an
  // accelerating climb end.
  std::optional<uint32_t> Hold();
  // The multiplicative decrease in force: 0.5 in slow start.
  double DecreaseFactor() const;

  // Barriers judged in a span, and the latencies of those over the target.
  struct Tally {
    int barriers = 0;
    std::vector<absl::Duration> over;
    void Clear() {
      barriers = 0;
      over.clear();
    }
  };

  AdaptiveRateControllerOptions options_;
  // options_.min_rows_per_second as given (the floor a lifted cap restores).
  const uint32_t floor_;
  uint32_t rate_;
  bool slow_start_;
  // In slow start, the share of its rate the backfill read in the last
  // window that doubled it (0 until one was judged): the ceiling rule's
  // reference. At least 1 / application_limited_multiple (a smaller one is
  // a ceiling), at most 1.
  double slow_start_share_ = 0;
  // The additive step after slow start, rows/s (>= 1).
  uint32_t additive_step_;
  Decision last_decision_ = Decision::kNone;
  // See overrun_rows_per_second().
  uint32_t overrun_rate_ = 0;
  // Increasing windows in a row, toward a cautious step.
  int clean_windows_ = 0;
  // Past a forgotten overrun rate: each step twice the last.
  bool accelerating_ = false;
  // Judged barriers in a row below headroom_fraction x target (see
  // calm_barriers); a rate change does not reset it.
  int calm_run_ = 0;
  // Over-target barriers taken as spikes (see spikes_ignored()).
  uint64_t spikes_ignored_ = 0;

  // The current run of decreases: the rate it started from (0: none), the
  // rate below which its next cut probes first, and the latencies of the
  // barriers that triggered its cuts.
  double run_start_rate_ = 0;
  double run_probe_below_ = 0;
  std::vector<absl::Duration> run_triggers_;
  // A probe holds the rate for the barriers injected before probe_until_.
  bool probing_ = false;
  absl::Time probe_until_ = absl::InfinitePast();
  Tally probe_;
  uint64_t probes_ = 0;
  // See target_unreachable(); the background the probe measured: the
  // fraction of its barriers over the target, and their median latency.
  bool unreachable_ = false;
  absl::Time unreachable_since_ = absl::InfinitePast();
  double background_over_fraction_ = 0;
  absl::Duration background_over_latency_ = absl::ZeroDuration();
  uint64_t unreachable_episodes_ = 0;

  // The current window: barriers injected at or after window_start_.
  absl::Time window_start_ = absl::InfinitePast();
  bool window_open_ = false;
  absl::Duration window_max_latency_ = absl::ZeroDuration();
  Tally window_tally_;
  // Barriers injected before this ran (partly) under an older rate.
  absl::Time last_change_ = absl::InfinitePast();
  // The first barrier after a change closes an epoch read at the old rate.
  bool skip_next_ = false;
  // The achieved rate's reference: the last barrier (and the rows read
  // through it) whose epochs ran under an older rate; then the latest
  // sample (the reference itself until one follows it) and the barriers
  // since the reference.
  absl::Time rows_ref_at_ = absl::InfinitePast();
  std::optional<uint64_t> rows_ref_;
  absl::Time rows_last_at_ = absl::InfinitePast();
  uint64_t rows_last_ = 0;
  int rows_barriers_ = 0;
};

}  // namespace backfill

#endif  // RATELIMIT_ADAPTIVE_RATE_CONTROLLER_H_
