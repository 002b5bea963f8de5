// A few hundred seeds of the simulation with each backfill whose vnode
// split is fixed (SimulationOptions::backfill_kind = kNoShuffle,
// kSnapshot): the same seeds' tables, workloads, actions (without
// rescales), crashes, kills and storage faults, restarts at the saved
// parallelism, and the kind's oracle at every checkpoint (no_shuffle: CONTRACT
// §5 per vnode; snapshot: tests/simulation/invariant_oracle.h, the table at
// the snapshot epoch up to the position, then with a prefix of the log
// applied, then the table itself once joined; a log budget by seed), pause
// and rate limit at every barrier, view == model at the end. For the
// snapshot kind crashes land in every phase. The long runs are
// `bazel run -c opt //tests:backfill_simulation -- --executor=KIND
// --seeds=10000`. Environment: BACKFILL_SIM_SEEDS / BACKFILL_SIM_FIRST_SEED
// override the count and the first seed (of each kind).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulation/pipeline_simulation.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

using simulation::ReproductionCommand;
using simulation::RunSimulationSeed;
using simulation::SeedOutcome;
using simulation::SimulationOptions;

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

std::string KindName(const ::testing::TestParamInfo<BackfillKind>& info) {
  return BackfillKindName(info.param);
}

// Per kind, the seeds in three parts (one per shard: a sanitizer build runs
// them side by side).
class BackfillSimulationKindTest
    : public ::testing::TestWithParam<std::tuple<BackfillKind, uint64_t>> {};

TEST_P(BackfillSimulationKindTest, MemoryStore) {
  const auto [kind, part] = GetParam();
  const uint64_t all = EnvU64("BACKFILL_SIM_SEEDS", 300);
  const uint64_t seeds = all / 3 + (part < all % 3 ? 1 : 0);
  const uint64_t first = EnvU64("BACKFILL_SIM_FIRST_SEED", 1) +
                         part * (all / 3) + std::min(part, all % 3);
  SimulationOptions options;
  options.backfill_kind = kind;
  int crashes = 0;
  uint64_t checkpoint_checks = 0;
  std::array<uint64_t, 3> resumes = {0, 0, 0};
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const SeedOutcome outcome = RunSimulationSeed(seed, options);
    ASSERT_EQ(outcome.setup_error, "");
    ASSERT_FALSE(outcome.divergence.has_value())
        << outcome.divergence->ToString()
        << "\n  reproduce: " << ReproductionCommand(seed, options);
    // Never rescaled: neither online nor at a restart.
    ASSERT_EQ(outcome.rescales, 0);
    ASSERT_EQ(outcome.rescale_actions, 0);
    crashes += outcome.crashes;
    checkpoint_checks += outcome.checkpoint_checks;
    for (int phase = 0; phase < 3; ++phase) {
      resumes[phase] += outcome.snapshot_resumes[phase];
    }
  }
  std::cout << BackfillKindName(kind) << " seeds " << first << " .. "
            << first + seeds - 1 << ": crashes: " << crashes
            << ", checkpoint checks: " << checkpoint_checks
            << ", resumed in the snapshot / replay / joined phase: "
            << resumes[0] << " / " << resumes[1] << " / " << resumes[2] << "\n";
  // The run must exercise recovery and check many committed states.
  EXPECT_GT(crashes, static_cast<int>(seeds) / 2);
  EXPECT_GT(checkpoint_checks, seeds);
  if (kind == BackfillKind::kSnapshot) {
    // Crashes (and kills) landed in the snapshot phase and after the join
    // in every part (the replay phase is short: ReplayPhaseCrashes below).
    EXPECT_GT(resumes[0], 0u) << "no resume in the snapshot phase";
    EXPECT_GT(resumes[2], 0u) << "no resume in the joined phase";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Parts, BackfillSimulationKindTest,
    ::testing::Combine(::testing::Values(BackfillKind::kNoShuffle,
                                         BackfillKind::kSnapshot),
                       ::testing::Values(0, 1, 2)),
    [](const ::testing::TestParamInfo<std::tuple<BackfillKind, uint64_t>>&
           info) {
      return absl::StrCat(BackfillKindName(std::get<0>(info.param)), "_part",
                          std::get<1>(info.param));
    });

// The replay is short (a few chunks after the snapshot), so a crash lands in
// it in only a few seeds of a hundred: seeds 1 .. 100 (part 0's, run again
// here) must include some, besides the two other phases.
TEST(BackfillSimulationSnapshotPhasesTest, ReplayPhaseCrashes) {
  SimulationOptions options;
  options.backfill_kind = BackfillKind::kSnapshot;
  std::array<uint64_t, 3> resumes = {0, 0, 0};
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const SeedOutcome outcome = RunSimulationSeed(seed, options);
    ASSERT_EQ(outcome.setup_error, "");
    ASSERT_FALSE(outcome.divergence.has_value())
        << outcome.divergence->ToString();
    for (int phase = 0; phase < 3; ++phase) {
      resumes[phase] += outcome.snapshot_resumes[phase];
    }
  }
  for (int phase = 0; phase < 3; ++phase) {
    EXPECT_GT(resumes[phase], 0u) << "phase " << phase;
  }
}

// The oracle is not vacuous for these kinds either: a duplicated output
// chunk is caught within 200 seeds.
class BackfillSimulationKindSabotageTest
    : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(BackfillSimulationKindSabotageTest, OracleCatchesADuplicatedChunk) {
  SimulationOptions options;
  options.backfill_kind = GetParam();
  options.sabotage = SimulationOptions::Sabotage::kDuplicateChunk;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const SeedOutcome outcome = RunSimulationSeed(seed, options);
    ASSERT_EQ(outcome.setup_error, "");
    if (outcome.divergence.has_value()) {
      std::cout << "duplicate_chunk caught at seed " << seed << ": "
                << outcome.divergence->what << "\n";
      return;
    }
  }
  ADD_FAILURE() << "duplicate_chunk not caught in 200 seeds";
}

INSTANTIATE_TEST_SUITE_P(Kinds, BackfillSimulationKindSabotageTest,
                         ::testing::Values(BackfillKind::kNoShuffle,
                                           BackfillKind::kSnapshot),
                         KindName);

// Over the nested_key example scenario's table (a LIST and a STRUCT in the
// pk and distribution key) the kind's checks hold too: the snapshot oracle
// decodes the positions of such keys.
class BackfillSimulationKindTableTest
    : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(BackfillSimulationKindTableTest, NestedKeyScenarioTable) {
  absl::StatusOr<tools::Scenario> proto =
      LoadScenarioFile("tools/scenarios/nested_key.textproto");
  ASSERT_TRUE(proto.ok()) << proto.status();
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(*proto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  SimulationOptions options;
  options.backfill_kind = GetParam();
  options.table = spec->job.upstream;
  int crashes = 0;
  const uint64_t seeds = EnvU64("BACKFILL_SIM_NESTED_KEY_SEEDS", 20);
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const SeedOutcome outcome = RunSimulationSeed(seed, options);
    ASSERT_EQ(outcome.setup_error, "");
    ASSERT_FALSE(outcome.divergence.has_value())
        << outcome.divergence->ToString()
        << "\n  reproduce: " << ReproductionCommand(seed, options);
    crashes += outcome.crashes;
  }
  EXPECT_GT(crashes, static_cast<int>(seeds) / 4);
}

INSTANTIATE_TEST_SUITE_P(Kinds, BackfillSimulationKindTableTest,
                         ::testing::Values(BackfillKind::kNoShuffle,
                                           BackfillKind::kSnapshot),
                         KindName);

}  // namespace
}  // namespace backfill
