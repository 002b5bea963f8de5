#include "tests/simulation/pipeline_simulation.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/deterministic_driver.h"
#include "executor/runtime/streaming_job.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "tests/simulation/fault_injecting_state_store.h"
#include "tests/simulation/invariant_oracle.h"
#include "tests/simulation/scenario.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace simulation {
namespace {

using Sabotage = SimulationOptions::Sabotage;

// How a kill reaches the harness: an error the runtime never retries.
constexpr absl::string_view kKill = "simulated kill -9";

void PlantSabotage(Sabotage sabotage, StreamingJobOptions& job,
                   FaultPlan& plan) {
  RuntimeSabotageForTest& planted = job.sabotage_for_test;
  switch (sabotage) {
    case Sabotage::kNone:
      break;
    case Sabotage::kDropChange:
      planted.drop_every_nth_change_chunk = 5;
      break;
    case Sabotage::kDuplicateChunk:
      planted.duplicate_every_nth_output_chunk = 5;
      break;
    case Sabotage::kKeepViewOnCrash:
      plan.KeepUncommittedWritesOf(job.view_table_id);
      break;
    case Sabotage::kDropAllButLastMutation:
      break;  // Each run's options lose actions: LastActionOfEachEpoch.
    case Sabotage::kForgetRateLimitAtRecovery:
      planted.forget_rate_limit_at_recovery = true;
      break;
  }
}

// kDropAllButLastMutation (the defect of issue 14, point 1): of several
// actions at one epoch, only the last one in the timeline; the oracle still
// expects them all.
std::vector<JobAction> LastActionOfEachEpoch(
    const std::vector<JobAction>& actions) {
  std::vector<JobAction> kept;
  for (size_t i = 0; i < actions.size(); ++i) {
    bool last = true;
    for (size_t j = i + 1; j < actions.size(); ++j) {
      last &= actions[j].at_epoch != actions[i].at_epoch;
    }
    if (last) kept.push_back(actions[i]);
  }
  return kept;
}

// The seed's scenario, over options.table when it is set.
Scenario ScenarioFor(uint64_t seed, const SimulationOptions& options) {
  Scenario scenario = MakeScenario(seed);
  if (!options.table.has_value()) return scenario;
  StreamingJobOptions& job = scenario.job;
  const TableId table_id = job.upstream.table_id;
  job.upstream = *options.table;
  job.upstream.table_id = table_id;
  job.output_columns.clear();
  for (size_t i = 0; i < job.upstream.columns.size(); ++i) {
    if (i == 0 || ((seed >> (i % 8)) & 1) == 1) {
      job.output_columns.push_back(static_cast<int>(i));
    }
  }
  return scenario;
}

class Simulation {
 public:
  Simulation(uint64_t seed, const SimulationOptions& options)
      : options_(options),
        scenario_(ScenarioFor(seed, options)),
        plan_(std::make_shared<FaultPlan>()),
        oracle_(scenario_.job) {
    outcome_.seed = seed;
    RestrictScenarioToKind(scenario_, options.backfill_kind);
    PlantSabotage(options.sabotage, scenario_.job, *plan_);
    if (options.upstream_buffer_budget_bytes.has_value()) {
      scenario_.job.upstream_buffer_budget_bytes =
          *options.upstream_buffer_budget_bytes;
    }
    for (const JobAction& action : scenario_.job.actions) {
      if (action.kind == JobAction::Kind::kRescale) ++outcome_.rescale_actions;
    }
    outcome_.adaptive =
        scenario_.job.adaptive_target_barrier_latency > absl::ZeroDuration();
    for (const RunPlan& run : scenario_.runs) {
      if (run.adaptive_target.has_value() &&
          *run.adaptive_target > absl::ZeroDuration()) {
        outcome_.adaptive = true;
      }
    }
    outcome_.small_buffer_budget = scenario_.job.upstream_buffer_budget_bytes <
                                   kDefaultUpstreamBufferBudgetBytes;
    if (options.store == SimulationOptions::StoreKind::kRocksDb) {
      path_ = absl::StrCat(options.rocksdb_root, "/seed_", seed);
    }
  }

  SeedOutcome Run() {
    if (options_.trace) std::cerr << scenario_.DebugString() << "\n";
    if (absl::Status status = OpenStore(); !status.ok()) {
      outcome_.setup_error = std::string(status.message());
      return Finish();
    }
    StreamingJobOptions& job = scenario_.job;
    job.max_recoveries = 64;
    job.on_recovery = [this](const absl::Status& error, uint32_t) {
      if (options_.trace) std::cerr << "  recovery: " << error << "\n";
      if (absl::StrContains(error.message(), "injected fault")) {
        ++surfaced_faults_;
      }
      if (!absl::StrContains(error.message(), "injected")) {
        oracle_.Report({.step = Where(),
                        .what = "recovered from an error nobody injected",
                        .detail = error.ToString()});
      }
    };
    if (!path_.empty()) {
      job.reopen_store = [this]() -> absl::StatusOr<StateStore*> {
        if (absl::Status status = ReopenStore(); !status.ok()) return status;
        return store_.get();
      };
    }
    for (run_ = 0; run_ < scenario_.runs.size(); ++run_) {
      const RunPlan& run = scenario_.runs[run_];
      if (run_ > 0 && run.reopen && !path_.empty()) {
        if (absl::Status status = ReopenStore(); !status.ok()) {
          outcome_.setup_error = std::string(status.message());
          return Finish();
        }
      }
      StreamingJobOptions run_job = job;
      if (options_.sabotage == Sabotage::kDropAllButLastMutation) {
        run_job.actions = LastActionOfEachEpoch(run_job.actions);
      }
      if (run.parallelism.has_value()) {
        run_job.overrides.parallelism = *run.parallelism;
        ++outcome_.mutations;
        if (*run.parallelism != parallelism_) ++outcome_.rescales;
      }
      if (run.adaptive_target.has_value()) {
        run_job.overrides.adaptive_target = *run.adaptive_target;
        ++outcome_.mutations;
      }
      attempt_ = 0;
      absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
          *store_, run_job, nullptr,
          [this](const JobProgress& progress) {
            ++outcome_.barriers;
            oracle_.OnBarrier(progress);
          },
          clock_,
          [this](JobGraph& graph, BarrierCoordinator& coordinator) {
            return RunAttempt(graph, coordinator);
          });
      if (oracle_.divergence().has_value()) break;
      if (result.ok()) {
        parallelism_ = result->parallelism;
        if (options_.trace) {
          std::cerr << "  run " << run_ << " finished: " << result->upstream_rows
                    << " rows, " << result->recoveries << " recoveries\n";
        }
        if (!result->consistent) {
          oracle_.Report({.step = Where(),
                          .what = "the runtime's verdict: inconsistent",
                          .detail = result->mismatch});
          break;
        }
        oracle_.OnJobFinished(*inner_);
        for (const JobAction& action : job.actions) {
          if (action.at_epoch <= result->job_state.epochs_since_creation) {
            ++outcome_.mutations;
          }
        }
        break;
      }
      if (absl::StrContains(result.status().message(), kKill)) continue;
      oracle_.Report({.step = Where(),
                      .what = "the job failed",
                      .detail = result.status().ToString()});
      break;
    }
    return Finish();
  }

 private:
  absl::Status RunAttempt(JobGraph& graph, BarrierCoordinator& coordinator) {
    const RunPlan& run = scenario_.runs[run_];
    const AttemptPlan plan =
        attempt_ < run.attempts.size() ? run.attempts[attempt_] : AttemptPlan{};
    ++attempt_;
    parallelism_ = coordinator.state().parallelism;
    oracle_.BeginAttempt();
    if (plan.fault_nth > 0) plan_->Arm(plan.fault_op, plan.fault_nth);
    if (plan.reschedule) coordinator.RequestReschedule("simulated reschedule");
    DeterministicDriverOptions driver;
    driver.seed = scenario_.driver_seed + 1000 * run_ + attempt_;
    driver.barrier_interval = scenario_.job.barrier_interval;
    driver.early_barrier_probability = scenario_.early_barrier_probability;
    driver.max_steps = options_.max_steps;
    driver.crash_at_step = plan.crash_at_step;
    driver.crash_phase = plan.phase;
    if (options_.trace) {
      std::cerr << "  run " << run_ << " attempt " << attempt_
                << ": parallelism " << parallelism_ << ", committed epoch "
                << store_->CommittedEpoch(scenario_.job.upstream.table_id).value()
                << "\n";
    }
    const absl::Status status =
        RunDeterministic(graph, coordinator, driver, clock_);
    if (status.ok() && coordinator.rescheduled()) {
      ++outcome_.reschedules;
      if (options_.trace) {
        std::cerr << "  attempt " << attempt_ << ": rescheduled at "
                  << coordinator.epoch().DebugString() << "\n";
      }
    }
    // Every set of backfill actors after the first was built by an online
    // rescale of this attempt.
    const int online = static_cast<int>(graph.backfill_sets.size()) - 1;
    outcome_.online_rescales += online;
    outcome_.rescales += online;
    if (options_.trace && online > 0) {
      std::cerr << "  attempt " << attempt_ << ": " << online
                << " online rescale(s), now parallelism "
                << graph.backfill_sets.back()->actor_ids.size() << "\n";
    }
    if (absl::StrContains(status.message(), "injected crash")) {
      ++outcome_.crashes;
      // "crash at barrier in flight", from "... (barrier in flight, seed S)".
      const absl::string_view message = status.message();
      const size_t open = message.find('(') + 1;
      ++outcome_.crash_kinds[absl::StrCat(
          plan.kill ? "kill" : "crash", " at ",
          message.substr(open, message.find(", seed") - open))];
      if (plan.kill) {
        return absl::DataLossError(absl::StrCat(kKill, ": ", status.message()));
      }
    }
    return status;
  }

  absl::Status OpenStore() {
    if (path_.empty()) {
      inner_ = NewMemoryStateStore();
    } else {
      RocksDbStateStoreOptions rocks;
      rocks.path = path_;
      rocks.sync_on_checkpoint = false;
      rocks.max_background_jobs = 1;
      rocks.write_buffer_bytes = 1 << 20;
      rocks.block_cache_bytes = 1 << 20;
      absl::StatusOr<std::unique_ptr<RocksDbStateStore>> opened =
          RocksDbStateStore::Open(rocks);
      if (!opened.ok()) return opened.status();
      inner_ = std::move(*opened);
    }
    StateStore* inner = inner_.get();
    inner_->AddCommitListener(
        [this, inner](Epoch) { oracle_.OnCheckpoint(*inner); });
    store_ = std::make_unique<FaultInjectingStateStore>(*inner_, plan_);
    return absl::OkStatus();
  }

  absl::Status ReopenStore() {
    store_.reset();
    inner_.reset();
    return OpenStore();
  }

  std::string Where() const {
    return absl::StrCat("run ", run_, " attempt ", attempt_);
  }

  SeedOutcome Finish() {
    store_.reset();
    inner_.reset();
    if (!path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
    outcome_.divergence = oracle_.divergence();
    if (outcome_.divergence.has_value()) {
      outcome_.divergence->detail += "\n  scenario: " + scenario_.DebugString();
    }
    outcome_.faults_injected = static_cast<int>(plan_->num_fired());
    outcome_.crashes += outcome_.faults_injected;
    if (outcome_.faults_injected > 0) {
      outcome_.crash_kinds["storage fault"] += outcome_.faults_injected;
    }
    if (static_cast<uint64_t>(surfaced_faults_) < plan_->num_fired()) {
      outcome_.swallowed_faults.push_back(absl::StrCat(
          "seed ", outcome_.seed, ": ", plan_->num_fired() - surfaced_faults_,
          " of ", plan_->num_fired(),
          " injected faults never surfaced as an error; last: ",
          plan_->last_message()));
    }
    outcome_.checkpoint_checks = oracle_.checkpoint_checks();
    outcome_.barrier_checks = oracle_.barrier_checks();
    outcome_.snapshot_resumes = oracle_.snapshot_resumes();
    return std::move(outcome_);
  }

  const SimulationOptions& options_;
  Scenario scenario_;
  std::shared_ptr<FaultPlan> plan_;
  InvariantOracle oracle_;
  SimulatedClock clock_;
  std::string path_;
  std::unique_ptr<StateStore> inner_;
  std::unique_ptr<FaultInjectingStateStore> store_;
  size_t run_ = 0;
  size_t attempt_ = 0;
  uint32_t parallelism_ = 0;
  int surfaced_faults_ = 0;
  SeedOutcome outcome_;
};

}  // namespace

const char* SabotageName(Sabotage sabotage) {
  switch (sabotage) {
    case Sabotage::kNone:
      return "none";
    case Sabotage::kDropChange:
      return "drop_change";
    case Sabotage::kDuplicateChunk:
      return "duplicate_chunk";
    case Sabotage::kKeepViewOnCrash:
      return "keep_view_on_crash";
    case Sabotage::kDropAllButLastMutation:
      return "drop_all_but_last_mutation";
    case Sabotage::kForgetRateLimitAtRecovery:
      return "forget_rate_limit_at_recovery";
  }
  return "?";
}

std::optional<Sabotage> ParseSabotage(const std::string& name) {
  for (Sabotage sabotage :
       {Sabotage::kNone, Sabotage::kDropChange, Sabotage::kDuplicateChunk,
        Sabotage::kKeepViewOnCrash, Sabotage::kDropAllButLastMutation,
        Sabotage::kForgetRateLimitAtRecovery}) {
    if (name == SabotageName(sabotage)) return sabotage;
  }
  return std::nullopt;
}

SeedOutcome RunSimulationSeed(uint64_t seed, const SimulationOptions& options) {
  return Simulation(seed, options).Run();
}

std::string ReproductionCommand(uint64_t seed,
                                const SimulationOptions& options) {
  std::string command = absl::StrCat(
      "bazel run -c opt //tests:backfill_simulation -- --seeds=1 --first_seed=",
      seed, " --store=",
      options.store == SimulationOptions::StoreKind::kRocksDb ? "rocksdb"
                                                              : "memory",
      " --trace");
  if (options.sabotage != Sabotage::kNone) {
    absl::StrAppend(&command, " --sabotage=", SabotageName(options.sabotage));
  }
  if (options.upstream_buffer_budget_bytes.has_value()) {
    absl::StrAppend(&command, " --upstream_buffer_budget_bytes=",
                    *options.upstream_buffer_budget_bytes);
  }
  if (options.backfill_kind != BackfillKind::kArrangement) {
    absl::StrAppend(&command, " --executor=",
                    BackfillKindName(options.backfill_kind));
  }
  if (options.table.has_value()) {
    absl::StrAppend(&command, "  # and SimulationOptions::table = ",
                    options.table->name, " (no flag: rerun the test)");
  }
  return command;
}

}  // namespace simulation
}  // namespace backfill
