// The deterministic simulation of one seed: the SHIPPED streaming job
// (executor/runtime: RunStreamingJobWithDriver, the JobGraph of the DML
// source, hash dispatcher, backfill actors, merge and materialize, the
// BarrierCoordinator, the recovery policy) driven by the deterministic
// driver (executor/runtime/deterministic_driver.h) on simulated time, over a
// store wrapped in FaultInjectingStateStore. Everything random comes from
// the seed (scenario.h): the table, the workload, the parallelism, the
// timeline of actions (several at one epoch), crashes at every phase
// (a scheduler step, a barrier in flight, a collected barrier before its
// checkpoint, early in a recovery), storage faults (inside actors, in
// checkpoints, ambiguous commits, in the recovery's set-up and the final
// check), kills of the process and restarts at another parallelism (an
// offline rescale; RocksDB: often reopening the store), online rescales,
// adaptive mode, tiny upstream buffer budgets. testonly.
//
//   SimulationOptions options;                  // memory store
//   SeedOutcome outcome = RunSimulationSeed(42, options);
//   if (outcome.divergence) std::cerr << outcome.divergence->ToString();
//
// THE ORACLE is invariant_oracle.h (CONTRACT §5 at every checkpoint, no
// snapshot read while paused, view == model at the end). Besides it: the job
// must finish (RunStreamingJobWithDriver OK, the runtime's own verdict
// consistent), and every recovery must come from an injected crash or fault
// (a run that recovers from its own bug does not pass).
//
// Online rescales are `rescale` actions of the timeline (scenario.h), so
// they meet crashes, kills, faults and pauses like any action; the §5 check
// needs nothing new for them. Adaptive mode and tiny upstream buffer budgets
// are drawn per seed too.
#ifndef TESTS_SIMULATION_PIPELINE_SIMULATION_H_
#define TESTS_SIMULATION_PIPELINE_SIMULATION_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/runtime/streaming_job_options.h"
#include "storage/table_catalog.h"
#include "tests/simulation/divergence.h"

namespace backfill {
namespace simulation {

struct SimulationOptions {
  enum class StoreKind { kMemory, kRocksDb };
  // Default: the in-memory store.
  StoreKind store = StoreKind::kMemory;
  // RocksDB mode: the parent directory of the per-seed databases (each
  // removed after its seed). Required in RocksDB mode.
  std::string rocksdb_root;
  // Log the scenario and every run, attempt and recovery to stderr.
  bool trace = false;
  // Deliberate bugs, to prove that the oracle catches them (a test expects
  // divergences). Default kNone.
  enum class Sabotage {
    kNone,
    kDropChange,       // the dispatcher loses some upstream changes
    kDuplicateChunk,   // backfill actors send some output chunks twice
    kKeepViewOnCrash,  // a recovery does not revert the view's writes
    kDropAllButLastMutation,     // of several actions at one epoch, only
                                 // the last is delivered
    kForgetRateLimitAtRecovery,  // a recovery rebuilds the actors with the
                                 // initial rate, not the job state's
  };
  Sabotage sabotage = Sabotage::kNone;
  // Every seed's StreamingJobOptions::upstream_buffer_budget_bytes; none =
  // the seed's own (a tiny budget in some seeds, else the default).
  std::optional<uint64_t> upstream_buffer_budget_bytes;
  // Scheduler steps per attempt before the driver gives up (a divergence).
  uint64_t max_steps = 2'000'000;
  // Every seed's upstream table instead of its random one (its id is the
  // seed's; the view keeps a seed-chosen subset of its columns, the first
  // always), e.g. an example scenario's. REQUIRES: ValidateTableCatalog
  // accepts it, vnode_count >= 6 (the seeds' largest parallelism), and
  // every column type is ReferenceTypeSupported. Default: none.
  std::optional<TableCatalog> table;
  // The backfill operator every seed runs (RestrictScenarioToKind, in
  // scenario.h, drops what it does not allow). Default kArrangement.
  BackfillKind backfill_kind = BackfillKind::kArrangement;
};

// "drop_change", ... ("none" for kNone); ParseSabotage is its inverse.
const char* SabotageName(SimulationOptions::Sabotage sabotage);
std::optional<SimulationOptions::Sabotage> ParseSabotage(
    const std::string& name);

struct SeedOutcome {
  uint64_t seed = 0;
  // The first violation, if any (the run stops there).
  std::optional<Divergence> divergence;
  // Infrastructure failure of the simulation itself (not of the code under
  // test), e.g. a RocksDB directory that cannot be created.
  std::string setup_error;
  // Injected crashes and kills that happened, storage faults that fired.
  int crashes = 0;
  // Rescales: restarts at another parallelism (offline) plus online
  // rescales begun (a new set of backfill actors built at a checkpoint
  // barrier, in any attempt, whether or not a crash came before that
  // checkpoint committed).
  int rescales = 0;
  int online_rescales = 0;
  // Attempts that ended at a checkpoint on a reschedule request (the next
  // attempt went on from it).
  int reschedules = 0;
  // Actions of the timeline that applied (epochs reached in the run that
  // finished), plus the parallelism and adaptive-mode overrides of
  // restarts.
  int mutations = 0;
  // The seed's mix: `rescale` actions in its timeline; it ran in adaptive
  // mode (from the start or after a restart's override); its upstream
  // buffer budget was below the default.
  int rescale_actions = 0;
  bool adaptive = false;
  bool small_buffer_budget = false;
  int faults_injected = 0;
  uint64_t barriers = 0;
  // Oracle checks: committed states checked (CONTRACT §5 over every vnode),
  // and barriers checked against the pause state or the rate limit.
  uint64_t checkpoint_checks = 0;
  uint64_t barrier_checks = 0;
  // kSnapshot: attempts that resumed from a checkpoint whose least advanced
  // actor was in the snapshot, replay or joined phase (index 0, 1, 2): the
  // crashes and kills that landed in each phase.
  std::array<uint64_t, 3> snapshot_resumes = {0, 0, 0};
  // Crashes by kind ("kill at any step", "fault: Seal", ...).
  std::map<std::string, int> crash_kinds;
  // Faults that fired but never surfaced as an error (CONTRACT §4 says
  // errors are never swallowed); not divergences (no row is wrong).
  std::vector<std::string> swallowed_faults;
};

SeedOutcome RunSimulationSeed(uint64_t seed, const SimulationOptions& options);

// "bazel run -c opt //tests:backfill_simulation -- --seeds=1 --first_seed=S
// --store=... --trace".
std::string ReproductionCommand(uint64_t seed,
                                const SimulationOptions& options);

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_PIPELINE_SIMULATION_H_
