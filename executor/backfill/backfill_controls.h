// BackfillControls: what a backfill actor's barriers switch on and off, the
// same for every backfill executor: the global pause (Pause / Resume, or an
// initial Add's `pause`), the pause of the backfill's fragment until its
// StartFragmentBackfill (AddMutation::backfill_fragments_to_pause), and the
// rate limiter of its snapshot reads (Throttle, the actor's entry before its
// fragment's), whose limit is mirrored in the rate-limit gauge.
//
// clang-format off
//   BackfillControls controls({.actor_id = 3, .fragment_id = 1,
//                              .chunk_size = 256}, metrics);
//   controls.ApplyFirstBarrier(first_barrier);
//   if (!controls.paused()) { /* controls.limiter().TryAcquire(rows) ... */ }
//   if (controls.ApplyMutation(barrier)) { /* the rate limit changed */ }
// clang-format on
//
// Thread-safety: not thread-safe (one executor's state). The clock and the
// metrics' Registry must outlive it.
#ifndef EXECUTOR_BACKFILL_BACKFILL_CONTROLS_H_
#define EXECUTOR_BACKFILL_BACKFILL_CONTROLS_H_

#include <cstdint>

#include "executor/barrier.h"
#include "metrics/backfill_metrics.h"
#include "ratelimit/monitored_rate_limiter.h"
#include "ratelimit/rate_limit.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

class BackfillControls {
 public:
  struct Options {
    // Whose Throttle entries and StartFragmentBackfill apply.
    ActorId actor_id = 0;
    FragmentId fragment_id = 0;
    // The initial snapshot rate; default Disabled.
    RateLimit rate_limit = RateLimit::Disabled();
    // Rows per snapshot chunk (>= 1): the limiter's burst is
    // max(2, chunk_size).
    uint32_t chunk_size = 256;
    // The limiter's clock; default Clock::Real().
    Clock* clock = nullptr;

    // The fields of these names from a backfill executor's options struct
    // (each backfill kind's options carry all five).
    template <typename ExecutorOptions>
    static Options Of(const ExecutorOptions& options) {
      return {.actor_id = options.actor_id,
              .fragment_id = options.fragment_id,
              .rate_limit = options.rate_limit,
              .chunk_size = options.chunk_size,
              .clock = options.clock};
    }
  };

  // Sets `metrics.rate_limit_rows_per_second` to the initial limit and keeps
  // it current.
  BackfillControls(const Options& options, const BackfillMetrics& metrics);
  BackfillControls(const BackfillControls&) = delete;
  BackfillControls& operator=(const BackfillControls&) = delete;

  // The first barrier's Add mutation sets both pauses; without one nothing
  // is paused.
  void ApplyFirstBarrier(const Barrier& barrier);
  // Applies a later barrier's mutation (Pause, Resume, StartFragmentBackfill,
  // Throttle; others are ignored). Returns true iff the rate limit changed.
  bool ApplyMutation(const Barrier& barrier);

  // True while paused globally, paused for the fragment, or at rate 0.
  bool paused() const;
  MonitoredRateLimiter& limiter() { return limiter_; }
  const MonitoredRateLimiter& limiter() const { return limiter_; }

 private:
  const ActorId actor_id_;
  const FragmentId fragment_id_;
  MonitoredRateLimiter limiter_;
  bool global_pause_ = false;
  bool backfill_paused_ = false;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_BACKFILL_CONTROLS_H_
