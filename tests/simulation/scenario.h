// Scenario: everything one simulation seed runs, drawn from the seed: the
// job (StreamingJobOptions: a small random table, the demo workload, the
// parallelism, chunk size, rate limit or adaptive mode, upstream buffer
// budget, barrier and checkpoint cadence, channel capacity, and a timeline
// of actions with several at one epoch, online rescales among them),
// and the faults: per process run, a crash plan for each attempt (at a
// scheduler step, while a barrier is in flight, after a barrier was
// collected and before its checkpoint, or a storage fault), whether the run
// ends in a kill, and the parallelism (and adaptive mode) the next run
// restarts with. testonly.
//
//   Scenario scenario = MakeScenario(seed);
//   RunStreamingJobWithDriver(store, scenario.job, ...);
#ifndef TESTS_SIMULATION_SCENARIO_H_
#define TESTS_SIMULATION_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "executor/runtime/deterministic_driver.h"
#include "executor/runtime/streaming_job_options.h"
#include "tests/simulation/fault_injecting_state_store.h"

namespace backfill {
namespace simulation {

// What happens to one attempt (one graph) of a run.
struct AttemptPlan {
  // The driver's crash: phase and step (step 0 = no crash).
  DeterministicDriverOptions::CrashPhase phase =
      DeterministicDriverOptions::CrashPhase::kAnyStep;
  uint64_t crash_at_step = 0;
  // A storage fault armed when the attempt starts: the `fault_nth` call of
  // `fault_op` from then on fails (0 = none). It may fire in this attempt,
  // a later one, a recovery's set-up or the final check.
  FaultOp fault_op = FaultOp::kSeal;
  uint64_t fault_nth = 0;
  // The crash kills the process (the run ends; the next run restarts on the
  // same store) instead of an in-process recovery.
  bool kill = false;
  // A reschedule (BarrierCoordinator::RequestReschedule) asked for when the
  // attempt starts: it ends at its first checkpoint barrier after the
  // initial one, and the run's next attempt goes on from that checkpoint.
  // Such an attempt has no crash and no fault of its own.
  bool reschedule = false;
};

// One process lifetime: RunStreamingJobWithDriver on the store.
struct RunPlan {
  // The --parallelism of this run (an offline rescale); none = the saved.
  std::optional<uint32_t> parallelism;
  // The overrides.adaptive_target of this run (zero: leave adaptive mode);
  // none = the saved mode.
  std::optional<absl::Duration> adaptive_target;
  // RocksDB store: close and reopen the store before this run.
  bool reopen = false;
  // Attempts in order; later attempts run without faults.
  std::vector<AttemptPlan> attempts;
};

struct Scenario {
  uint64_t seed = 0;
  // The job. Its reopen_store, on_recovery and sabotage are set by the
  // simulation.
  StreamingJobOptions job;
  // Seeds the deterministic driver of every attempt (with the attempt's
  // number).
  uint64_t driver_seed = 0;
  double early_barrier_probability = 0.02;
  std::vector<RunPlan> runs;

  std::string DebugString() const;
};

// REQUIRES: nothing; every seed gives a valid scenario
// (ValidateStreamingJobOptions accepts its job).
Scenario MakeScenario(uint64_t seed);

// Makes `scenario` run the backfill `kind` (StreamingJobOptions::
// backfill_kind), dropping what that kind does not allow: for kNoShuffle
// and kSnapshot every `rescale` action and every restart at another
// parallelism (their actors cannot be rescaled). kSnapshot also gets a log
// budget by seed (256 B, 4 KiB, 64 KiB or the default 64 MiB). Everything
// else of the seed stays.
void RestrictScenarioToKind(Scenario& scenario, BackfillKind kind);

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_SCENARIO_H_
