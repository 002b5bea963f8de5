#include "tests/simulation/scenario.h"

#include "absl/strings/str_cat.h"

namespace backfill {
namespace simulation {
namespace {

bool Chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
double UniformReal(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

RateLimit RandomRateLimit(std::mt19937_64& rng) {
  if (Chance(rng, 0.5)) return RateLimit::Disabled();
  if (Chance(rng, 0.1)) return RateLimit::Pause();
  static const uint32_t kRates[] = {1, 2, 30, 200, 1000, 100000};
  return RateLimit::Fixed(kRates[Uniform(rng, 0, 5)]);
}

}  // namespace

const std::vector<int>& SimulationVnodeCounts() {
  static const std::vector<int>* const kCounts =
      new std::vector<int>{1, 2, 3, 4, 7, 8, 16, 32, 64, 100, 256, 512};
  return *kCounts;
}

Scenario MakeScenario(std::mt19937_64& rng) {
  Scenario s;
  testing::RandomShapeOptions shape_options;
  shape_options.vnode_counts = SimulationVnodeCounts();
  shape_options.allow_pruning = false;  // S3 keeps the pk
  s.shape = testing::MakeRandomShape(rng, 7, shape_options);
  s.initial_rows = Chance(rng, 0.1)    ? 0
                   : Chance(rng, 0.25) ? Uniform(rng, 200, 800)
                                       : Uniform(rng, 1, 200);
  s.key_space = 3 * static_cast<uint64_t>(s.initial_rows) + 20;
  s.pk_updates = Chance(rng, 0.7);
  s.barrier_probability = UniformReal(rng, 0.01, 0.15);
  s.dml_probability = UniformReal(rng, 0.02, 0.4);
  s.flush_probability = UniformReal(rng, 0.0, 0.2);
  s.pending_probability = UniformReal(rng, 0.0, 0.1);
  s.checkpoint_frequency = Uniform(rng, 1, 5);
  s.max_inflight_barriers = Uniform(rng, 1, 3);
  s.chaos_epochs = Uniform(rng, 3, 40);
  s.steady_epochs = Uniform(rng, 2, 6);
  s.mutation_probability = UniformReal(rng, 0.0, 0.3);
  static const uint32_t kChunkSizes[] = {1, 2, 3, 7, 16, 64, 256, 300};
  s.chunk_size = kChunkSizes[Uniform(rng, 0, 7)];
  s.rate_limit = RandomRateLimit(rng);
  s.barrier_interval = absl::Milliseconds(Uniform(rng, 10, 1000));
  switch (Uniform(rng, 0, 9)) {
    case 0:
      s.start = Scenario::Start::kGlobalPause;
      break;
    case 1:
    case 2:
      s.start = Scenario::Start::kBackfillPaused;
      break;
    case 3:
      s.start = Scenario::Start::kAdd;
      break;
    default:
      s.start = Scenario::Start::kPlain;
      break;
  }
  s.pair_split = Chance(rng, 0.5) ? HashDispatcher::PairSplit::kByActor
                                  : HashDispatcher::PairSplit::kByVnode;
  s.max_actors = Uniform(rng, 1, 8);
  s.max_crashes = Chance(rng, 0.1) ? 0 : Uniform(rng, 1, 8);
  s.rescale_probability = UniformReal(rng, 0.3, 1.0);
  s.reopen_probability = UniformReal(rng, 0.0, 0.6);
  return s;
}

std::string Scenario::DebugString() const {
  static const char* const kStarts[] = {"plain", "global pause",
                                        "backfill paused", "add"};
  return absl::StrCat(
      "table ", shape.catalog.DebugString(), ", initial rows ", initial_rows,
      ", key space ", key_space, ", pk updates ", pk_updates, ", p(barrier) ",
      barrier_probability, ", p(dml) ", dml_probability, ", p(flush) ",
      flush_probability, ", p(pending) ", pending_probability,
      ", checkpoint 1/", checkpoint_frequency, ", in-flight ",
      max_inflight_barriers, ", chaos epochs ", chaos_epochs,
      ", steady epochs ", steady_epochs, ", p(mutation) ", mutation_probability,
      ", chunk ", chunk_size, ", rate ", rate_limit.ToString(), ", interval ",
      absl::FormatDuration(barrier_interval), ", start ",
      kStarts[static_cast<int>(start)], ", split pairs by ",
      pair_split == HashDispatcher::PairSplit::kByActor ? "actor" : "vnode",
      ", max actors ", max_actors, ", max crashes ", max_crashes);
}

}  // namespace simulation
}  // namespace backfill
