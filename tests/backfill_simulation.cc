// The deterministic simulation of the shipped streaming job with crashes,
// restarts at other parallelisms, online rescales, actions, adaptive mode
// and storage faults
// (tests/README.md; tests/simulation/pipeline_simulation.h).
//
//   bazel run -c opt //tests:backfill_simulation -- --seeds=N
//       --first_seed=S [--store=memory|rocksdb] [--threads=T] [--trace]
//       [--sabotage=MODE] [--upstream_buffer_budget_bytes=B]
//       [--executor=arrangement|no_shuffle|snapshot]
//
// Runs seeds S..S+N-1 (each single-threaded and deterministic; --threads
// runs several seeds at once), prints each divergence with its seed, step,
// vnode, key, expected and actual rows and the reproduction command, and as
// its LAST line exactly
//   seeds: N, divergences: D, crashes: C, rescales: R, mutations: M
// Exit status 0 iff D == 0.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "tests/simulation/pipeline_simulation.h"
#include "third_party/absl_extras/mutex.h"

ABSL_FLAG(uint64_t, seeds, 100, "number of seeds to run");
ABSL_FLAG(uint64_t, first_seed, 1, "the first seed");
ABSL_FLAG(std::string, store, "memory", "state store: memory or rocksdb");
ABSL_FLAG(std::string, rocksdb_dir, "",
          "parent directory of the per-seed RocksDB databases (default: "
          "$TEST_TMPDIR or /tmp)");
ABSL_FLAG(int, threads, 1,
          "seeds run concurrently (each seed is "
          "single-threaded and deterministic)");
ABSL_FLAG(bool, trace, false,
          "log each seed's scenario, attempts and recoveries to stderr");
ABSL_FLAG(std::string, sabotage, "none",
          "a deliberate runtime bug, to see the oracle catch it: none, "
          "drop_change, duplicate_chunk, keep_view_on_crash, "
          "drop_all_but_last_mutation or forget_rate_limit_at_recovery");
ABSL_FLAG(int64_t, upstream_buffer_budget_bytes, -1,
          "every seed's upstream buffer budget of the backfill actors, bytes "
          "(0 = never buffer); -1 = each seed's own (a tiny budget in some "
          "seeds, else the default 16 MiB)");
ABSL_FLAG(int, max_notes, 20, "swallowed-fault notes printed at most");
ABSL_FLAG(std::string, executor, "arrangement",
          "the backfill operator: arrangement, no_shuffle or snapshot (no "
          "rescales for the last two)");

namespace backfill {
namespace simulation {
namespace {

int Main() {
  const uint64_t seeds = absl::GetFlag(FLAGS_seeds);
  const uint64_t first = absl::GetFlag(FLAGS_first_seed);
  SimulationOptions options;
  const std::string store = absl::GetFlag(FLAGS_store);
  if (store == "rocksdb") {
    options.store = SimulationOptions::StoreKind::kRocksDb;
    std::string root = absl::GetFlag(FLAGS_rocksdb_dir);
    if (root.empty()) {
      const char* tmp = std::getenv("TEST_TMPDIR");
      root = absl::StrCat(tmp != nullptr ? tmp : "/tmp",
                          "/backfill_simulation_", ::getpid());
    }
    std::filesystem::create_directories(root);
    options.rocksdb_root = root;
  } else if (store != "memory") {
    std::cerr << "--store must be memory or rocksdb, got " << store << "\n";
    return 2;
  }
  options.trace = absl::GetFlag(FLAGS_trace);
  const std::optional<SimulationOptions::Sabotage> sabotage =
      ParseSabotage(absl::GetFlag(FLAGS_sabotage));
  if (!sabotage.has_value()) {
    std::cerr << "unknown --sabotage " << absl::GetFlag(FLAGS_sabotage)
              << "\n";
    return 2;
  }
  options.sabotage = *sabotage;
  const int64_t budget = absl::GetFlag(FLAGS_upstream_buffer_budget_bytes);
  if (budget < -1) {
    std::cerr << "--upstream_buffer_budget_bytes must be -1 (per seed) or "
                 ">= 0, got "
              << budget << "\n";
    return 2;
  }
  if (budget >= 0) {
    options.upstream_buffer_budget_bytes = static_cast<uint64_t>(budget);
  }
  const std::string executor = absl::GetFlag(FLAGS_executor);
  if (executor == "no_shuffle") {
    options.backfill_kind = BackfillKind::kNoShuffle;
  } else if (executor == "snapshot") {
    options.backfill_kind = BackfillKind::kSnapshot;
  } else if (executor != "arrangement") {
    std::cerr << "--executor must be arrangement, no_shuffle or snapshot, got "
              << executor << "\n";
    return 2;
  }
  const int threads = std::max(1, absl::GetFlag(FLAGS_threads));

  Mutex mu;
  uint64_t divergences = 0, crashes = 0, rescales = 0, mutations = 0,
           faults = 0, swallowed = 0, barriers = 0, done = 0, checks = 0,
           whole = 0, online_rescales = 0, with_rescale_actions = 0,
           adaptive = 0, small_budget = 0, reschedules = 0;
  std::map<std::string, uint64_t> crash_kinds;
  int notes = 0;
  std::atomic<uint64_t> next{0};
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (uint64_t i = next++; i < seeds; i = next++) {
      const uint64_t seed = first + i;
      SeedOutcome outcome = RunSimulationSeed(seed, options);
      MutexLock lock(&mu);
      crashes += outcome.crashes;
      rescales += outcome.rescales;
      online_rescales += outcome.online_rescales;
      reschedules += outcome.reschedules;
      with_rescale_actions += outcome.rescale_actions > 0 ? 1 : 0;
      adaptive += outcome.adaptive ? 1 : 0;
      small_budget += outcome.small_buffer_budget ? 1 : 0;
      mutations += outcome.mutations;
      faults += outcome.faults_injected;
      barriers += outcome.barriers;
      checks += outcome.barrier_checks;
      whole += outcome.checkpoint_checks;
      for (const auto& [kind, count] : outcome.crash_kinds) {
        crash_kinds[kind] += count;
      }
      swallowed += outcome.swallowed_faults.size();
      ++done;
      for (const std::string& note : outcome.swallowed_faults) {
        if (notes++ < absl::GetFlag(FLAGS_max_notes)) {
          std::cout << "note: storage error swallowed: " << note << "\n";
        }
      }
      if (!outcome.setup_error.empty()) {
        ++divergences;
        std::cout << "SETUP FAILURE seed " << seed << ": "
                  << outcome.setup_error << "\n";
      } else if (outcome.divergence.has_value()) {
        ++divergences;
        std::cout << "DIVERGENCE seed " << seed << ": "
                  << outcome.divergence->ToString()
                  << "\n  reproduce: " << ReproductionCommand(seed, options)
                  << "\n";
      }
      if (done % 1000 == 0) {
        const double secs = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
        std::cerr << "progress: " << done << "/" << seeds << " seeds, "
                  << divergences << " divergences, " << secs << " s\n";
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!options.rocksdb_root.empty() &&
      absl::GetFlag(FLAGS_rocksdb_dir).empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(options.rocksdb_root, ignored);
  }
  std::cout << "crashes by kind:\n";
  for (const auto& [kind, count] : crash_kinds) {
    std::cout << "  " << count << "  " << kind << "\n";
  }
  std::cout << "oracle checks: committed states (CONTRACT §5, every vnode): "
            << whole << ", barriers checked against pause and rate limit: " << checks
            << "\n";
  std::cout << "mix: seeds with rescale actions: " << with_rescale_actions
            << ", online rescales begun: " << online_rescales
            << ", reschedules: " << reschedules
            << ", seeds in adaptive mode: " << adaptive
            << ", seeds with a small upstream buffer budget: " << small_budget
            << "\n";
  std::cout << "executor: " << executor << ", store: " << store
            << ", first seed: " << first
            << ", barriers: " << barriers << ", faults injected: " << faults
            << ", swallowed storage errors: " << swallowed
            << ", seconds: " << secs
            << ", seeds/s: " << (secs > 0 ? seeds / secs : 0) << "\n";
  std::cout << "seeds: " << seeds << ", divergences: " << divergences
            << ", crashes: " << crashes << ", rescales: " << rescales
            << ", mutations: " << mutations << std::endl;
  return divergences == 0 ? 0 : 1;
}

}  // namespace
}  // namespace simulation
}  // namespace backfill

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return backfill::simulation::Main();
}
