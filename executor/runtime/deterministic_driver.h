// RunDeterministic: the deterministic driver of a streaming job's graph:
// the same JobGraph and BarrierCoordinator as the threaded driver
// (threaded_driver.h), run on the calling thread only, on simulated time.
//
//   SimulatedClock clock;
//   ... BarrierCoordinator::Create(..., clock, ...) ...
//   ... BuildJobGraph(..., {&clock, registry, coordinator.get()}) ...
//   DeterministicDriverOptions driver;
//   driver.seed = 42;
//   BACKFILL_RETURN_IF_ERROR(
//       RunDeterministic(*graph, *coordinator, driver, clock));
//
// Each step it either lets the coordinator act (send the next barrier once
// its time came, finish a collected one) or polls one actor, chosen by a
// seeded generator among the runnable ones (woken since their last poll, or
// whose wake deadline passed). Time moves only when nothing can run: the
// clock jumps to the earliest of the next barrier's time and the actors'
// wake deadlines; with probability `early_barrier_probability` per step it
// jumps to the next barrier's time even while actors can run, so that
// barriers land at seeded points of the backfill. No thread ever blocks:
// the same seed gives the same run.
//
// The actor set may change mid-attempt (an online rescale): the actors the
// coordinator adds with a barrier become tasks at once; the ones it retires
// after a collected barrier are abandoned and dropped.
//
// An actor that ends before its stop barrier fails the attempt (as in the
// threaded driver); it is abandoned once the coordinator stopped
// checkpointing. Returns OK when the attempt completed; otherwise the first
// error: an actor's, a checkpoint's, DeadlineExceeded once the clock passes
// the coordinator's deadline with a barrier not collected, or Internal if
// no actor can ever run again (a stuck graph) or after `max_steps`. When it
// returns, the barrier channel is closed and every actor that could still
// run has been polled until it ended.
//
// Thread-safety: call from one thread; nothing else may use the graph, the
// coordinator or the clock meanwhile.
#ifndef EXECUTOR_RUNTIME_DETERMINISTIC_DRIVER_H_
#define EXECUTOR_RUNTIME_DETERMINISTIC_DRIVER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/job_graph.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct DeterministicDriverOptions {
  // Seeds every choice. Default 0.
  uint64_t seed = 0;
  // Simulated time between two barriers (> 0). Default 100 ms.
  absl::Duration barrier_interval = absl::Milliseconds(100);
  // Per step, the chance of jumping to the next barrier's time although
  // actors can run, in [0, 1]. Default 1/64.
  double early_barrier_probability = 1.0 / 64;
  // Scheduler steps before giving up (Internal). Default 50,000,000.
  uint64_t max_steps = 50'000'000;
  // Crash injection (for simulations): the attempt stops at the first
  // scheduler step >= `crash_at_step` (>= 1; 0 = never) at which
  // `crash_phase` holds, and returns Unavailable "injected crash at step N
  // (<phase>, seed S)". As after a real crash, whatever was not checkpointed
  // is lost once the caller drops the graph. Default 0.
  uint64_t crash_at_step = 0;
  enum class CrashPhase {
    // Exactly at step crash_at_step, wherever the attempt is.
    kAnyStep,
    // A barrier is in the graph and not yet collected: some actors may have
    // passed it (between an actor's barrier and the checkpoint's commit).
    kBarrierInFlight,
    // The view collected the barrier; its checkpoint has not run yet.
    kBarrierCollected,
  };
  // Default kAnyStep.
  CrashPhase crash_phase = CrashPhase::kAnyStep;
};

// REQUIRES: a freshly built graph and coordinator (no barrier made), both
// on `clock`.
absl::Status RunDeterministic(JobGraph& graph, BarrierCoordinator& coordinator,
                              const DeterministicDriverOptions& options,
                              SimulatedClock& clock);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_DETERMINISTIC_DRIVER_H_
