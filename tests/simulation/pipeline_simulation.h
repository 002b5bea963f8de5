// The deterministic simulation of the whole backfill pipeline for one seed:
// upstream materialize -> hash dispatcher -> 1..8 backfill actors -> view,
// driven by a barrier coordinator on one thread with a simulated clock, with
// crashes at every phase (random polls, start-up, finish barrier, steady
// state, storage faults inside barrier processing and checkpoints) and
// rescales on recovery. Everything random comes from the seed. testonly.
//
//   SimulationOptions options;                  // memory store
//   SeedOutcome outcome = RunSimulationSeed(42, options);
//   if (outcome.divergence) std::cerr << outcome.divergence->ToString();
//
// THE ORACLE: after every barrier of every backfill actor, CONTRACT §5's
// invariant for that actor's vnodes against the model of the upstream as of
// barrier.epoch.prev; at every checkpoint after every actor finished, view ==
// table; no duplicate insert, no delete of a row the view lacks, no output
// row outside the actor's vnodes; an injected storage fault must surface as
// that actor's error; the job must finish and its progress tracker be done.
//
// A crash drops every executor and table instance (their uncommitted data is
// discarded), restores the models to the checkpoint the store committed, and
// restarts the upstream and a new set of actors (often another parallelism
// and vnode assignment); each actor loads its vnodes' persisted progress from
// an Initial barrier at {committed + 1, committed}.
#ifndef TESTS_SIMULATION_PIPELINE_SIMULATION_H_
#define TESTS_SIMULATION_PIPELINE_SIMULATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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
  // Log every event to stderr (for reproducing one seed).
  bool trace = false;
  // Deliberate bugs in the simulated pipeline, to prove that the oracle
  // catches them (a test expects divergences). Default kNone.
  enum class Sabotage {
    kNone,
    kDropChange,       // the dispatcher loses some upstream changes
    kDuplicateChunk,   // the view applies some output chunks twice
    kKeepViewOnCrash,  // recovery does not revert the view to the checkpoint
  };
  Sabotage sabotage = Sabotage::kNone;
  // Safety limits: a run that needs more is reported as a liveness
  // divergence. Defaults are far above what a correct run needs.
  uint64_t max_steps = 3'000'000;
  uint64_t max_epochs = 20'000;
  // ArrangementBackfillOptions::upstream_buffer_budget_bytes of every actor
  // (CONTRACT §10); absent: the executor's default. Not drawn from the seed,
  // so a seed's scenario is the same with and without it.
  std::optional<size_t> upstream_buffer_budget_bytes;
};

struct SeedOutcome {
  uint64_t seed = 0;
  // The first violation, if any (the run stops there).
  std::optional<Divergence> divergence;
  // Infrastructure failure of the simulation itself (not of the code under
  // test), e.g. a RocksDB directory that cannot be created.
  std::string setup_error;
  int crashes = 0;
  int rescales = 0;
  int faults_injected = 0;
  uint64_t steps = 0;
  uint64_t barriers = 0;
  // CONTRACT §5 checks of one actor at one barrier, and view == table checks at
  // checkpoints after every actor finished.
  uint64_t invariant_checks = 0;
  uint64_t whole_view_checks = 0;
  // Crashes by kind ("random step", "fault: Seal of the progress table", ...).
  std::map<std::string, int> crash_kinds;
  // Faults that fired inside an actor's poll, after which the actor emitted
  // a barrier without returning the error (CONTRACT §4: never swallowed).
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
