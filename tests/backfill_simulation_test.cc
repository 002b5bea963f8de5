// A few hundred seeds of the simulation of the shipped streaming job
// (memory store) and some on RocksDB under TEST_TMPDIR. The long run
// is `bazel run -c opt //tests:backfill_simulation -- --seeds=100000`.
// Each sabotage mode must be caught in a minimum number of seeds 1..40.
// Environment:
// BACKFILL_SIM_SEEDS / BACKFILL_SIM_ROCKSDB_SEEDS / BACKFILL_SIM_FIRST_SEED
// override the counts and the first seed.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulation/pipeline_simulation.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

using simulation::ReproductionCommand;
using simulation::RunSimulationSeed;
using simulation::SabotageName;
using simulation::SeedOutcome;
using simulation::SimulationOptions;

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

// What a run of seeds exercised.
struct Totals {
  int crashes = 0;
  int rescales = 0;
  int online_rescales = 0;
  int adaptive_seeds = 0;
  int small_budget_seeds = 0;
};

void ExpectNoDivergence(uint64_t seed, const SimulationOptions& options,
                        Totals* totals) {
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const SeedOutcome outcome = RunSimulationSeed(seed, options);
  ASSERT_EQ(outcome.setup_error, "");
  ASSERT_FALSE(outcome.divergence.has_value())
      << outcome.divergence->ToString()
      << "\n  reproduce: " << ReproductionCommand(seed, options);
  totals->crashes += outcome.crashes;
  totals->rescales += outcome.rescales;
  totals->online_rescales += outcome.online_rescales;
  totals->adaptive_seeds += outcome.adaptive ? 1 : 0;
  totals->small_budget_seeds += outcome.small_buffer_budget ? 1 : 0;
}

SimulationOptions RocksDbOptions(const std::string& name) {
  SimulationOptions options;
  options.store = SimulationOptions::StoreKind::kRocksDb;
  const char* tmp = std::getenv("TEST_TMPDIR");
  options.rocksdb_root = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  std::filesystem::create_directories(options.rocksdb_root);
  return options;
}

TEST(BackfillSimulationTest, MemoryStore) {
  const uint64_t first = EnvU64("BACKFILL_SIM_FIRST_SEED", 1);
  const uint64_t seeds = EnvU64("BACKFILL_SIM_SEEDS", 300);
  Totals totals;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    ExpectNoDivergence(seed, SimulationOptions(), &totals);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The run must actually exercise recovery, restarts, online rescales,
  // adaptive mode and the upstream buffer's freeze path.
  const int tenth = static_cast<int>(seeds) / 10;
  EXPECT_GT(totals.crashes, static_cast<int>(seeds) / 2);
  EXPECT_GT(totals.rescales, tenth);
  EXPECT_GT(totals.online_rescales, tenth);
  EXPECT_GT(totals.adaptive_seeds, tenth);
  EXPECT_GT(totals.small_budget_seeds, tenth);
}

TEST(BackfillSimulationTest, RocksDbStore) {
  const uint64_t first = EnvU64("BACKFILL_SIM_FIRST_SEED", 1) + 1'000'000;
  const uint64_t seeds = EnvU64("BACKFILL_SIM_ROCKSDB_SEEDS", 100);
  const SimulationOptions options = RocksDbOptions("sim_rocksdb");
  Totals totals;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    ExpectNoDivergence(seed, options, &totals);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(totals.crashes, 0);
}

// The simulation over an example scenario's table, with each seed's
// crashes, restarts, actions and storage faults, on both stores (every 8th
// seed on RocksDB too); over it too the oracle catches a lost upstream change.
void ExpectScenarioTableConsistent(const std::string& name, uint64_t seeds) {
  absl::StatusOr<tools::Scenario> proto =
      LoadScenarioFile(absl::StrCat("tools/scenarios/", name, ".textproto"));
  ASSERT_TRUE(proto.ok()) << proto.status();
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(*proto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  SimulationOptions memory;
  memory.table = spec->job.upstream;
  SimulationOptions rocksdb = RocksDbOptions(absl::StrCat("sim_", name));
  rocksdb.table = spec->job.upstream;
  Totals totals;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    ExpectNoDivergence(seed, memory, &totals);
    if (::testing::Test::HasFatalFailure()) return;
    if (seed % 8 == 0) {
      ExpectNoDivergence(seed + 2'000'000, rocksdb, &totals);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(totals.crashes, static_cast<int>(seeds) / 4);
  memory.sabotage = SimulationOptions::Sabotage::kDropChange;
  bool caught = false;
  for (uint64_t seed = 1; seed <= 200 && !caught; ++seed) {
    caught = RunSimulationSeed(seed, memory).divergence.has_value();
  }
  EXPECT_TRUE(caught) << "a lost change over the " << name << " table";
}

// Issue 21: the new_types example scenario's table (a pk of a TIMESTAMPTZ
// and an INTERVAL held in varied forms; JSONB, LISTs with NULLs, -0.0 and
// NaN, a STRUCT, a MAP, SERIAL values). BACKFILL_SIM_NEW_TYPES_SEEDS
// overrides the count.
TEST(BackfillSimulationTest, NewTypesScenarioTable) {
  ExpectScenarioTableConsistent("new_types",
                                EnvU64("BACKFILL_SIM_NEW_TYPES_SEEDS", 40));
}

// Issue 21: the nested_key example scenario's table (a pk and distribution
// key of a LIST<FLOAT64> whose elements are NULL, NaN or -0.0 at times,
// empty or prefixing others, and a STRUCT with NULL fields and a nested
// LIST). BACKFILL_SIM_NESTED_KEY_SEEDS overrides the count.
TEST(BackfillSimulationTest, NestedKeyScenarioTable) {
  ExpectScenarioTableConsistent("nested_key",
                                EnvU64("BACKFILL_SIM_NESTED_KEY_SEEDS", 40));
}

// The oracle is not vacuous: each deliberate runtime bug is caught in at
// least `min_caught` of seeds 1..40 (each seed is deterministic; the
// minimums sit at or a little below the counts measured with
// `bazel run -c opt //tests:backfill_simulation -- --sabotage=MODE
// --seeds=40 --first_seed=1`).
void ExpectSabotageCaught(SimulationOptions::Sabotage sabotage,
                          int min_caught) {
  SimulationOptions options;
  options.sabotage = sabotage;
  int caught = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const SeedOutcome outcome = RunSimulationSeed(seed, options);
    ASSERT_EQ(outcome.setup_error, "") << "seed " << seed;
    if (outcome.divergence.has_value()) {
      ++caught;
      std::cout << SabotageName(sabotage) << " caught at seed " << seed
                << ": " << outcome.divergence->what << "\n";
    }
  }
  EXPECT_GE(caught, min_caught)
      << SabotageName(sabotage) << " caught in " << caught << " of 40 seeds";
}

// Measured: 23 of 40 (25 before the early release).
TEST(BackfillSimulationTest, OracleCatchesALostChange) {
  ExpectSabotageCaught(SimulationOptions::Sabotage::kDropChange, 21);
}

// Measured: 31 of 40.
TEST(BackfillSimulationTest, OracleCatchesADuplicatedChunk) {
  ExpectSabotageCaught(SimulationOptions::Sabotage::kDuplicateChunk, 30);
}

// Measured: 17 of 40.
TEST(BackfillSimulationTest, OracleCatchesAViewNotRevertedOnCrash) {
  ExpectSabotageCaught(SimulationOptions::Sabotage::kKeepViewOnCrash, 14);
}

// Measured: 6 of 40.
TEST(BackfillSimulationTest, OracleCatchesActionsLostAtOneEpoch) {
  ExpectSabotageCaught(SimulationOptions::Sabotage::kDropAllButLastMutation,
                       5);
}

// Measured: 1 of 40 (seed 13; in seeds 1..200 also 157). Before the early
// release of upstream changes (CONTRACT §4.2) changed the interleavings it
// was seeds 13 and 31.
TEST(BackfillSimulationTest, OracleCatchesARateLimitForgottenAtRecovery) {
  ExpectSabotageCaught(SimulationOptions::Sabotage::kForgetRateLimitAtRecovery,
                       1);
}

}  // namespace
}  // namespace backfill
