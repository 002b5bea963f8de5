#include "tests/simulation/scenario.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {
namespace simulation {
namespace {

using Phase = DeterministicDriverOptions::CrashPhase;

constexpr DataType kTypes[] = {
    DataType::kBoolean, DataType::kInt16,   DataType::kInt32,
    DataType::kInt64,   DataType::kFloat64, DataType::kVarchar,
    DataType::kBytea,   DataType::kDate,    DataType::kTime,
    DataType::kTimestamp};

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  // Uniform in [lo, hi].
  uint64_t Int(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T, size_t N>
  T Pick(const T (&values)[N]) {
    return values[Int(0, N - 1)];
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

TableCatalog MakeTable(Draw& draw) {
  TableCatalog table;
  table.table_id = 7;
  table.name = "t";
  const int num_columns = static_cast<int>(draw.Int(2, 5));
  for (int i = 0; i < num_columns; ++i) {
    ColumnDesc column;
    column.name = absl::StrCat("c", i);
    column.type = draw.Pick(kTypes);
    column.column_id = i + 1;
    column.nullable = draw.Chance(0.5);
    table.columns.push_back(column);
  }
  // Often one column keeps keys apart (an INT64 of the key, never NULL);
  // otherwise keys may collide (a pk of BOOLEAN, NULLs), which the source
  // turns into updates.
  if (draw.Chance(0.6)) {
    table.columns[0].type = DataType::kInt64;
    table.columns[0].nullable = false;
  }
  std::vector<int> order(num_columns);
  for (int i = 0; i < num_columns; ++i) order[i] = i;
  std::shuffle(order.begin() + 1, order.end(), draw.rng());
  const int pk_size = static_cast<int>(draw.Int(1, std::min(3, num_columns - 1)));
  static constexpr OrderType kOrders[] = {
      OrderType::Ascending(), OrderType::Descending(),
      OrderType::AscendingNullsFirst(), OrderType::DescendingNullsLast()};
  for (int i = 0; i < pk_size; ++i) {
    table.pk_indices.push_back(order[i]);
    table.pk_orders.push_back(draw.Pick(kOrders));
  }
  std::shuffle(table.pk_indices.begin(), table.pk_indices.end(), draw.rng());
  if (!draw.Chance(0.1)) {
    for (int index : table.pk_indices) {
      if (table.dist_key_indices.empty() || draw.Chance(0.5)) {
        table.dist_key_indices.push_back(index);
      }
    }
  }
  static constexpr int kVnodeCounts[] = {1, 2, 4, 8, 8, 16, 16, 32, 64, 256};
  table.vnode_count = draw.Pick(kVnodeCounts);
  table.value_encoding = draw.Chance(0.5) ? ValueEncoding::kPositional
                                          : ValueEncoding::kColumnAware;
  for (int i = 0; i < num_columns; ++i) table.value_indices.push_back(i);
  return table;
}

// Groups of actions at random epochs, several at one epoch in a random
// order; never pause and resume at one epoch; the job ends unpaused. About
// half the seeds also rescale online 1-3 times, each to a parallelism in
// [1, max_parallelism]: joining a group (so with other actions at one
// epoch, or while the job is paused), sometimes two rescales at one epoch,
// or in a group of its own after the others. The oracle needs nothing more
// for them (CONTRACT §5 is checked per vnode from the committed progress,
// whichever actor owns it).
std::vector<JobAction> MakeActions(Draw& draw, uint32_t max_parallelism) {
  std::vector<JobAction> actions;
  bool paused = false;
  uint64_t epoch = 0;
  const int groups = static_cast<int>(draw.Int(draw.Chance(0.8) ? 1 : 0, 4));
  int rescales = draw.Chance(0.5) ? static_cast<int>(draw.Int(1, 3)) : 0;
  auto rate = [&] {
    return draw.Chance(0.3) ? 0 : draw.Int(10, 600);
  };
  for (int g = 0; g < groups || paused || rescales > 0; ++g) {
    // The first group early, while the backfill still runs.
    epoch += g == 0 ? draw.Int(1, 2) : draw.Int(1, 6);
    std::vector<JobAction> group;
    auto add = [&](JobAction::Kind kind, uint64_t limit = 0) {
      JobAction action;
      action.at_epoch = epoch;
      action.kind = kind;
      action.rate_limit = limit;
      if (kind == JobAction::Kind::kRescale) {
        action.parallelism =
            static_cast<uint32_t>(draw.Int(1, max_parallelism));
      }
      group.push_back(action);
    };
    if (paused || (g < groups && draw.Chance(0.6))) {
      add(paused ? JobAction::Kind::kResume : JobAction::Kind::kPause);
      paused = !paused;
    }
    const bool more = g < groups;
    if (rescales > 0 && (!more || draw.Chance(0.5))) {
      const int here =
          std::min(rescales, draw.Chance(0.25) ? 2 : 1);
      for (int i = 0; i < here; ++i) add(JobAction::Kind::kRescale);
      rescales -= here;
    }
    if (more || group.empty()) {
      const int rates = static_cast<int>(draw.Int(group.empty() ? 1 : 0, 2));
      for (int r = 0; r < rates; ++r) {
        add(JobAction::Kind::kSetRateLimit, rate());
      }
      if (draw.Chance(0.05)) add(JobAction::Kind::kStopUpstream);
    }
    std::shuffle(group.begin(), group.end(), draw.rng());
    actions.insert(actions.end(), group.begin(), group.end());
  }
  return actions;
}

AttemptPlan MakeAttempt(Draw& draw, bool after_failure) {
  AttemptPlan plan;
  static constexpr Phase kPhases[] = {Phase::kAnyStep, Phase::kAnyStep,
                                      Phase::kBarrierInFlight,
                                      Phase::kBarrierCollected};
  static constexpr FaultOp kOps[] = {
      FaultOp::kInit,       FaultOp::kInsert,        FaultOp::kDelete,
      FaultOp::kSeal,       FaultOp::kGet,           FaultOp::kNewIterator,
      FaultOp::kIteratorMove, FaultOp::kCheckpoint,
      FaultOp::kCheckpointAfterCommit};
  if (draw.Chance(0.3)) {
    plan.fault_op = draw.Pick(kOps);
    plan.fault_nth = draw.Int(1, plan.fault_op == FaultOp::kCheckpoint ||
                                         plan.fault_op ==
                                             FaultOp::kCheckpointAfterCommit
                                     ? 8
                                     : 300);
    return plan;
  }
  plan.phase = draw.Pick(kPhases);
  // A crash during recovery: early in the attempt after a failure.
  // Otherwise log-uniform: as often in the first epochs (where the
  // timeline's pauses and rate limits are) as late in the backfill.
  static constexpr uint64_t kSpans[] = {30, 100, 300, 1000, 3000};
  plan.crash_at_step = draw.Int(1, after_failure && draw.Chance(0.3)
                                       ? 30
                                       : draw.Pick(kSpans));
  return plan;
}

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kAnyStep:
      return "step";
    case Phase::kBarrierInFlight:
      return "in-flight";
    case Phase::kBarrierCollected:
      return "collected";
  }
  return "?";
}

}  // namespace

Scenario MakeScenario(uint64_t seed) {
  Draw draw(seed * 0x9E3779B97F4A7C15ull + 1);
  Scenario scenario;
  scenario.seed = seed;
  StreamingJobOptions& job = scenario.job;
  job.upstream = MakeTable(draw);
  const uint32_t max_parallelism =
      static_cast<uint32_t>(std::min(6, job.upstream.vnode_count));
  const int num_columns = static_cast<int>(job.upstream.columns.size());
  if (draw.Chance(0.4)) {
    for (int i = num_columns - 1; i >= 0; --i) {
      if (job.output_columns.empty() || draw.Chance(0.5)) {
        job.output_columns.push_back(i);
      }
    }
  }
  job.initial_rows = draw.Int(0, 250);
  WorkloadOptions& workload = job.workload;
  workload.seed = draw.Int(0, 1 << 30);
  if (draw.Chance(0.85)) {
    workload.ops_per_second = static_cast<double>(draw.Int(10, 3000));
    workload.max_ops = draw.Int(1, 400);
  }
  workload.insert_weight = static_cast<double>(draw.Int(0, 4));
  workload.update_weight = static_cast<double>(draw.Int(0, 4));
  workload.delete_weight = static_cast<double>(draw.Int(0, 4));
  if (workload.insert_weight + workload.update_weight +
          workload.delete_weight ==
      0) {
    workload.insert_weight = 1;
  }
  workload.update_primary_key = draw.Chance(0.5);
  static constexpr double kNullFractions[] = {0, 0, 0.1, 0.4};
  workload.null_fraction = draw.Pick(kNullFractions);
  workload.key_space = job.initial_rows + draw.Int(1, 100);
  workload.max_chunk_rows = static_cast<uint32_t>(draw.Int(1, 32));

  job.parallelism = static_cast<uint32_t>(draw.Int(1, max_parallelism));
  job.chunk_size = static_cast<uint32_t>(draw.Int(1, 64));
  if (draw.Chance(0.4)) {
    job.rate_limit = RateLimit::Fixed(static_cast<uint32_t>(draw.Int(50, 3000)));
  }
  job.barrier_interval = absl::Milliseconds(draw.Int(20, 200));
  job.checkpoint_frequency = static_cast<uint32_t>(draw.Int(1, 3));
  // Adaptive mode (CONTRACT §11) in some seeds: a target from tight (the
  // controller at its floor) to loose. The floor at least 50 rows/s, so
  // that a backfill held at it still ends within max_duration.
  if (draw.Chance(0.3)) {
    job.adaptive_target_barrier_latency = absl::Milliseconds(draw.Int(1, 300));
    if (draw.Chance(0.5) || AdaptiveFloorRowsPerSecond(job) < 50) {
      job.adaptive_min_rows_per_second =
          static_cast<uint32_t>(draw.Int(50, 1000));
    }
  }
  // A tiny upstream buffer budget in some seeds, so that the backfill
  // freezes its snapshot position (CONTRACT §10) in most epochs with
  // changes; the default (16 MiB) otherwise.
  if (draw.Chance(0.3)) {
    job.upstream_buffer_budget_bytes = draw.Int(0, 4096);
  }
  job.actions = MakeActions(draw, max_parallelism);
  job.extra_checkpoints_after_finish = static_cast<uint32_t>(draw.Int(1, 3));
  // Simulated time: a correct job needs far less.
  job.max_duration = absl::Minutes(3);
  job.recovery_backoff = absl::ZeroDuration();
  job.channel_capacity = draw.Int(1, 8);

  scenario.driver_seed = draw.Int(0, uint64_t{1} << 40);
  static constexpr double kEarly[] = {0.005, 0.02, 0.1};
  scenario.early_barrier_probability = draw.Pick(kEarly);

  const int runs = static_cast<int>(draw.Int(1, 3));
  for (int r = 0; r < runs; ++r) {
    RunPlan run;
    if (r > 0 && draw.Chance(0.7)) {
      run.parallelism = static_cast<uint32_t>(draw.Int(1, max_parallelism));
    }
    run.reopen = r > 0 && draw.Chance(0.5);
    // A restart that switches adaptive mode on, changes its target or (a
    // zero target) switches it off: job state the next runs keep.
    if (r > 0 && draw.Chance(0.15)) {
      run.adaptive_target = draw.Chance(0.3)
                                ? absl::ZeroDuration()
                                : absl::Milliseconds(draw.Int(1, 300));
    }
    const bool last = r + 1 == runs;
    const int attempts = static_cast<int>(draw.Int(last ? 0 : 1, 3));
    for (int a = 0; a < attempts; ++a) {
      run.attempts.push_back(MakeAttempt(draw, /*after_failure=*/a > 0 || r > 0));
    }
    if (!last) {
      // The run's last planned attempt crashes the process.
      AttemptPlan& kill = run.attempts.back();
      while (kill.crash_at_step == 0) kill = MakeAttempt(draw, false);
      // Early enough that most kills land before the job ends.
      static constexpr uint64_t kKillSpans[] = {50, 200, 600};
      kill.crash_at_step = draw.Int(1, draw.Pick(kKillSpans));
      kill.kill = true;
    }
    scenario.runs.push_back(std::move(run));
  }
  // Reschedules, drawn apart so that the rest of every seed's scenario is
  // what it was before they existed: in some runs, one attempt that only
  // asks for a reschedule, before the run's kill.
  Draw reschedules(seed ^ 0x5eedc0ffee);
  for (RunPlan& run : scenario.runs) {
    if (!reschedules.Chance(0.3)) continue;
    const bool killed = !run.attempts.empty() && run.attempts.back().kill;
    const size_t before = run.attempts.size() - (killed ? 1 : 0);
    AttemptPlan reschedule;
    reschedule.reschedule = true;
    run.attempts.insert(run.attempts.begin() + static_cast<std::ptrdiff_t>(
                                                   reschedules.Int(0, before)),
                        reschedule);
  }
  // Channels bounded by rows (StreamingJobOptions::channel_rows), drawn apart
  // likewise: 0 leaves the drawn message capacity pressing on every chunk,
  // small bounds press on the chunks by their rows.
  Draw channels(seed ^ 0xc4a77e1);
  static constexpr size_t kChannelRows[] = {0, 0, 1, 16, 64, 4096};
  job.channel_rows = channels.Pick(kChannelRows);
  // The source's batching (WorkloadOptions::batch_interval), drawn apart
  // likewise: changes one by one, or gathered over up to 50 ms.
  Draw batching(seed ^ 0xba7c41);
  static constexpr int64_t kBatchIntervalMs[] = {0, 0, 1, 10, 50};
  job.workload.batch_interval =
      absl::Milliseconds(batching.Pick(kBatchIntervalMs));
  return scenario;
}

void RestrictScenarioToKind(Scenario& scenario, BackfillKind kind) {
  scenario.job.backfill_kind = kind;
  if (BackfillKindRescales(kind)) return;
  if (kind == BackfillKind::kSnapshot) {
    // Log budgets from one that holds the upstream at almost every change
    // to the default, by seed.
    const uint64_t log_budgets[] = {
        256, 4096, 65536, StreamingJobOptions().snapshot_log_budget_bytes};
    scenario.job.snapshot_log_budget_bytes = log_budgets[scenario.seed % 4];
  }
  std::vector<JobAction>& actions = scenario.job.actions;
  actions.erase(std::remove_if(actions.begin(), actions.end(),
                               [](const JobAction& action) {
                                 return action.kind ==
                                        JobAction::Kind::kRescale;
                               }),
                actions.end());
  for (RunPlan& run : scenario.runs) run.parallelism.reset();
}

std::string Scenario::DebugString() const {
  std::vector<std::string> actions;
  for (const JobAction& action : job.actions) {
    actions.push_back(JobActionDebugString(action));
  }
  std::string out = absl::StrCat(
      "seed ", seed, ": table ", job.upstream.DebugString(),
      "\n  initial rows ", job.initial_rows, ", ops/s ",
      job.workload.ops_per_second, " (max ", job.workload.max_ops,
      ", batched over ", absl::FormatDuration(job.workload.batch_interval),
      "), parallelism ", job.parallelism, ", chunk ", job.chunk_size, ", rate ",
      job.rate_limit.ToString(), ", adaptive target ",
      absl::FormatDuration(job.adaptive_target_barrier_latency), " (floor ",
      job.adaptive_min_rows_per_second, "), buffer budget ",
      job.upstream_buffer_budget_bytes,
      job.backfill_kind == BackfillKind::kSnapshot
          ? absl::StrCat(", log budget ", job.snapshot_log_budget_bytes)
          : std::string(),
      ", checkpoint every ", job.checkpoint_frequency, ", channel ",
      job.channel_capacity,
      job.channel_rows > 0 ? absl::StrCat(" (", job.channel_rows, " rows)")
                           : std::string(),
      "\n  actions: [", absl::StrJoin(actions, ", "), "]");
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunPlan& run = runs[r];
    absl::StrAppend(&out, "\n  run ", r, ": parallelism ",
                    run.parallelism.has_value()
                        ? absl::StrCat(*run.parallelism)
                        : std::string("saved"),
                    run.reopen ? ", reopen" : "",
                    run.adaptive_target.has_value()
                        ? absl::StrCat(", adaptive target ",
                                       absl::FormatDuration(*run.adaptive_target))
                        : std::string());
    for (const AttemptPlan& a : run.attempts) {
      if (a.reschedule) {
        absl::StrAppend(&out, "; reschedule");
      } else if (a.fault_nth > 0) {
        absl::StrAppend(&out, "; fault ", FaultOpName(a.fault_op), " #",
                        a.fault_nth);
      } else {
        absl::StrAppend(&out, "; crash ", PhaseName(a.phase), " @",
                        a.crash_at_step);
      }
      if (a.kill) absl::StrAppend(&out, " (kill)");
    }
  }
  return out;
}

}  // namespace simulation
}  // namespace backfill
