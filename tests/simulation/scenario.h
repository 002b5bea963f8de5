// Scenario: every knob of one simulation run, drawn from the seed: the table
// shape (types, asc/desc pk, NULLs in the pk, dist key != pk, 1..512 vnodes),
// initial rows, DML mix, barrier and checkpoint cadence, chunk size, rate
// limit, start-up mutation (pause, backfill paused on startup), the event mix
// of the scheduler, the dispatcher's pair splitting, parallelism and the
// crash budget. testonly.
//
//   std::mt19937_64 rng(seed);
//   Scenario scenario = MakeScenario(rng);
#ifndef TESTS_SIMULATION_SCENARIO_H_
#define TESTS_SIMULATION_SCENARIO_H_

#include <cstdint>
#include <random>
#include <string>

#include "absl/time/time.h"
#include "executor/testing/random_table.h"
#include "ratelimit/rate_limit.h"
#include "tests/simulation/hash_dispatcher.h"

namespace backfill {
namespace simulation {

struct Scenario {
  testing::RandomShape shape;
  // Rows inserted before the backfill starts, and the pk value space.
  int initial_rows = 0;
  uint64_t key_space = 20;
  // Whether updates may change the pk (and so the vnode).
  bool pk_updates = true;
  // Probability of each scheduler event per step; the rest are actor polls.
  double barrier_probability = 0.05;
  double dml_probability = 0.2;
  double flush_probability = 0.05;
  double pending_probability = 0.02;
  // One barrier in `checkpoint_frequency` is a checkpoint (random).
  int checkpoint_frequency = 1;
  // Barriers injected but not yet collected from every actor (1..3).
  int max_inflight_barriers = 1;
  // Barriers with random mutations and crashes before the drain.
  int chaos_epochs = 10;
  // Barriers after every actor finished.
  int steady_epochs = 4;
  // Probability that a barrier of the chaos phase carries a mutation.
  double mutation_probability = 0.15;
  uint32_t chunk_size = 256;
  RateLimit rate_limit = RateLimit::Disabled();
  absl::Duration barrier_interval = absl::Milliseconds(100);
  enum class Start {
    kPlain,           // no mutation
    kGlobalPause,     // AddMutation{pause}
    kBackfillPaused,  // AddMutation{backfill_fragments_to_pause}
    kAdd,             // AddMutation{}
  };
  Start start = Start::kPlain;
  HashDispatcher::PairSplit pair_split = HashDispatcher::PairSplit::kByActor;
  // Parallelism is drawn from 1..max_actors at creation and on rescales.
  int max_actors = 8;
  // Crashes in the run, and the chance that a recovery rescales.
  int max_crashes = 2;
  double rescale_probability = 0.7;
  // RocksDB mode: the chance that a crash also closes and reopens the store.
  double reopen_probability = 0.3;

  std::string DebugString() const;
};

Scenario MakeScenario(std::mt19937_64& rng);

// RandomShapeOptions::vnode_counts of the simulation (1..512).
const std::vector<int>& SimulationVnodeCounts();

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_SCENARIO_H_
