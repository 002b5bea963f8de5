#include "tests/simulation/pipeline_simulation.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/barrier.h"
#include "executor/message.h"
#include "executor/testing/random_table.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "tests/simulation/backfill_actor.h"
#include "tests/simulation/fault_injecting_state_store.h"
#include "tests/simulation/hash_dispatcher.h"
#include "tests/simulation/invariant_oracle.h"
#include "tests/simulation/scenario.h"
#include "tests/simulation/sim_table.h"
#include "tests/simulation/upstream_materialize.h"
#include "tests/simulation/view_model.h"
#include "tests/simulation/vnode_assignment.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace simulation {
namespace {

constexpr FragmentId kFragment = 10;
constexpr TableId kProgressTable = 1000;

bool Chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

RateLimit RandomRateLimit(std::mt19937_64& rng) {
  if (Chance(rng, 0.4)) return RateLimit::Disabled();
  if (Chance(rng, 0.15)) return RateLimit::Pause();
  static const uint32_t kRates[] = {1, 2, 30, 200, 1000, 100000};
  return RateLimit::Fixed(kRates[Uniform(rng, 0, 5)]);
}

// What makes the simulation crash next.
enum class TriggerKind {
  kNone,
  kAtStep,             // at a random scheduler step (between messages)
  kAfterFirstBarrier,  // an actor emitted its first barrier (before init)
  kAtFinishBarrier,    // an actor emitted its finish barrier
  kInSteadyState,      // some steps after every actor finished
  kFault,              // a storage fault (inside barrier processing, ...)
};

struct Trigger {
  TriggerKind kind = TriggerKind::kNone;
  uint64_t step = 0;
  int actor = 0;  // -1: any
};

struct Snapshot {
  std::shared_ptr<const RowModel> model;
  std::shared_ptr<const ViewModel::Vnodes> view;
};

struct InflightBarrier {
  Barrier barrier;
  // The upstream as of barrier.epoch.prev.
  std::shared_ptr<const RowModel> model_at_prev;
  size_t collected = 0;
  // Every actor had finished when it emitted the barrier.
  bool all_finished = true;
  // Checkpoints: the union of each actor's view part when it emitted it.
  ViewModel::Vnodes view;
};

class Simulation {
 public:
  Simulation(uint64_t seed, const SimulationOptions& options)
      : seed_(seed), options_(options), rng_(seed) {
    scenario_ = MakeScenario(rng_);
    crashes_left_ = scenario_.max_crashes;
  }

  SeedOutcome Run();

 private:
  enum class Phase { kChaos, kDrain };

  bool Failed() const { return outcome_.divergence.has_value(); }
  std::string Where() const {
    return absl::StrCat("seed ", seed_, ", step ", step_, ", epoch ", epoch_,
                        ", generation ", generation_, ": ", event_);
  }
  void Fail(Divergence divergence) {
    if (Failed()) return;
    divergence.step = Where();
    outcome_.divergence = std::move(divergence);
  }
  void Fail(std::string what, std::string detail) {
    Divergence d;
    d.what = std::move(what);
    d.detail = std::move(detail);
    Fail(std::move(d));
  }
  void Trace(absl::string_view message) {
    if (options_.trace) {
      std::cerr << "[step " << step_ << " epoch " << epoch_ << "] " << message
                << "\n";
    }
  }
  void RequestCrash(std::string kind, std::string reason) {
    if (pending_crash_.has_value()) return;
    ++outcome_.crash_kinds[kind];
    pending_crash_ = std::move(reason);
  }
  // "fault: Seal of the progress table" from an injected fault's message.
  static std::string FaultKind(absl::string_view where,
                               absl::string_view message) {
    std::string target = "the upstream table";
    if (absl::StrContains(message, "replicated table")) {
      target = "the replicated table";
    } else if (absl::StrContains(message,
                                 absl::StrCat("table ", kProgressTable))) {
      target = "the progress table";
    } else if (absl::StrContains(message, ": Checkpoint")) {
      target = "the store";
    }
    const size_t colon = message.find(": ");
    absl::string_view op = message.substr(colon + 2);
    op = op.substr(0, op.find(" of "));
    return absl::StrCat("fault in ", where, ": ", op, " of ", target);
  }
  // An error from a component: an injected fault makes the simulation crash,
  // anything else is a divergence.
  void HandleError(absl::string_view what, const absl::Status& status) {
    if (plan_->TakeFired()) {
      RequestCrash(FaultKind(what, plan_->last_message()),
                   absl::StrCat(what, ": ", status.ToString()));
    } else {
      Fail(absl::StrCat("unexpected error in ", what), status.ToString());
    }
  }

  absl::Status OpenStore();
  void CloseStore();
  void Start();
  void CreateActors();
  void Step();
  void InjectBarrier(Barrier barrier);
  void InjectNextBarrier();
  bool CanInject() const {
    return !finishing_ && !pending_crash_.has_value() &&
           inflight_.size() <
               static_cast<size_t>(scenario_.max_inflight_barriers);
  }
  std::optional<Mutation> ChaosMutation();
  void ApplyJobState(const Barrier& barrier);
  void DoDml();
  const Row& RandomRow();
  void PollSomeActor();
  void PollActor(int index);
  void OnActorBarrier(int index, const Barrier& barrier);
  void CompleteBarriers();
  void DoCrash();
  void ChooseTrigger();
  bool AllFinished() const;

  const uint64_t seed_;
  const SimulationOptions options_;
  std::mt19937_64 rng_;
  Scenario scenario_;
  SeedOutcome outcome_;

  std::unique_ptr<SimTable> table_;
  std::string store_path_;
  std::unique_ptr<StateStore> inner_;
  std::shared_ptr<FaultPlan> plan_ = std::make_shared<FaultPlan>();
  std::unique_ptr<FaultInjectingStateStore> store_;
  SimulatedClock clock_;
  std::unique_ptr<ViewModel> view_;

  // The running pipeline (one generation between crashes).
  std::unique_ptr<UpstreamMaterialize> upstream_;
  std::vector<VnodeBitmap> assignment_;
  std::unique_ptr<JobProgressTracker> tracker_;
  std::vector<std::unique_ptr<ProgressReporter>> reporters_;
  std::vector<std::unique_ptr<BackfillActor>> actors_;
  std::unique_ptr<HashDispatcher> dispatcher_;
  // Per actor: barriers emitted in this generation, finished at the last
  // one, and a fault that fired in its poll and was not returned yet.
  std::vector<size_t> collected_;
  std::vector<bool> was_finished_;
  std::vector<std::string> outstanding_fault_;
  // Barriers injected and not yet collected from every actor; the number of
  // barriers of this generation already popped from the front.
  std::deque<InflightBarrier> inflight_;
  size_t inflight_base_ = 0;
  uint64_t epoch_ = 0;  // the upstream's current epoch
  int generation_ = 0;

  // The models as of each checkpoint that may be the committed one.
  std::map<uint64_t, Snapshot> snapshots_;

  // Job state (what a recovery restores).
  RateLimit rate_limit_ = RateLimit::Disabled();
  bool global_paused_ = false;
  bool fragment_paused_ = false;

  Phase phase_ = Phase::kChaos;
  bool finishing_ = false;  // stop injecting; wait for in-flight barriers
  uint64_t steady_barriers_ = 0;
  uint64_t whole_checks_ = 0;

  int crashes_left_ = 0;
  Trigger trigger_;
  std::optional<std::string> pending_crash_;
  uint64_t step_ = 0;
  std::string event_ = "start";
};

absl::Status Simulation::OpenStore() {
  if (options_.store == SimulationOptions::StoreKind::kMemory) {
    if (inner_ == nullptr) inner_ = NewMemoryStateStore();
  } else {
    RocksDbStateStoreOptions rocks;
    rocks.path = store_path_;
    rocks.sync_on_checkpoint = false;
    rocks.max_background_jobs = 1;
    rocks.write_buffer_bytes = 1 << 20;
    rocks.block_cache_bytes = 1 << 20;
    absl::StatusOr<std::unique_ptr<RocksDbStateStore>> opened =
        RocksDbStateStore::Open(rocks);
    if (!opened.ok()) return opened.status();
    inner_ = std::move(*opened);
  }
  store_ = std::make_unique<FaultInjectingStateStore>(*inner_, plan_);
  return absl::OkStatus();
}

void Simulation::CloseStore() {
  store_.reset();
  inner_.reset();
}

bool Simulation::AllFinished() const {
  for (const auto& actor : actors_) {
    if (!actor->executor().is_finished()) return false;
  }
  return !actors_.empty();
}

SeedOutcome Simulation::Run() {
  outcome_.seed = seed_;
  if (options_.store == SimulationOptions::StoreKind::kRocksDb) {
    store_path_ = absl::StrCat(options_.rocksdb_root, "/seed_", seed_);
    std::error_code ignored;
    std::filesystem::remove_all(store_path_, ignored);
  }
  if (absl::Status s = OpenStore(); !s.ok()) {
    outcome_.setup_error = s.ToString();
    return outcome_;
  }
  absl::StatusOr<std::unique_ptr<SimTable>> table =
      SimTable::Create(scenario_.shape);
  if (!table.ok()) {
    outcome_.setup_error = table.status().ToString();
    return outcome_;
  }
  table_ = std::move(*table);
  view_ = std::make_unique<ViewModel>(*table_);
  Trace(scenario_.DebugString());
  Start();
  while (!Failed()) {
    if (pending_crash_.has_value()) {
      DoCrash();
      continue;
    }
    if (finishing_ && inflight_.empty()) break;
    Step();
  }
  if (!Failed()) {
    event_ = "end of run";
    if (!AllFinished()) {
      Fail("the job did not finish", "");
    } else if (!tracker_->IsDone()) {
      Fail("the progress tracker is not done after every actor finished",
           tracker_->ProgressString(0));
    }
  }
  // Tear down in dependency order.
  dispatcher_.reset();
  actors_.clear();
  reporters_.clear();
  tracker_.reset();
  upstream_.reset();
  CloseStore();
  if (!store_path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(store_path_, ignored);
  }
  outcome_.faults_injected = static_cast<int>(plan_->num_fired());
  if (Failed() && options_.trace) {
    std::cerr << "DIVERGENCE " << outcome_.divergence->ToString() << "\n";
  }
  return outcome_;
}

void Simulation::Start() {
  event_ = "initial rows";
  absl::StatusOr<std::unique_ptr<UpstreamMaterialize>> upstream =
      UpstreamMaterialize::Create(*table_, *store_,
                                  EpochPair{Epoch(1), Epoch(0)}, RowModel());
  if (!upstream.ok()) return Fail("setup", upstream.status().ToString());
  upstream_ = std::move(*upstream);
  std::vector<UpstreamChange> ignored;
  for (int i = 0; i < scenario_.initial_rows; ++i) {
    Row row =
        testing::RandomTableRow(table_->catalog(), rng_, scenario_.key_space);
    if (upstream_->Contains(row)) continue;
    if (absl::Status s = upstream_->Insert(row, &ignored); !s.ok()) {
      return Fail("setup", s.ToString());
    }
  }
  if (absl::Status s = upstream_->Commit(EpochPair{Epoch(2), Epoch(1)});
      !s.ok()) {
    return Fail("setup", s.ToString());
  }
  if (absl::Status s = store_->Checkpoint(Epoch(1)); !s.ok()) {
    return Fail("setup", s.ToString());
  }
  snapshots_[1] = Snapshot{std::make_shared<const RowModel>(upstream_->model()),
                           std::make_shared<const ViewModel::Vnodes>()};
  epoch_ = 2;
  // Changes of epoch 2 reach the backfill through its snapshot (it waits for
  // epoch 2 to be committed), not through its input.
  for (int i = Uniform(rng_, 0, 5); i > 0; --i) DoDml();
  if (Failed()) return;
  assignment_ = RandomVnodeAssignment(rng_, table_->catalog().vnode_count,
                                      scenario_.max_actors);
  rate_limit_ = scenario_.rate_limit;
  CreateActors();
  if (Failed()) return;
  Barrier first;
  first.epoch = EpochPair{Epoch(3), Epoch(2)};
  first.kind = BarrierKind::kCheckpoint;  // creating a job checkpoints
  std::set<ActorId> ids;
  for (const auto& actor : actors_) ids.insert(actor->actor_id());
  switch (scenario_.start) {
    case Scenario::Start::kPlain:
      break;
    case Scenario::Start::kGlobalPause:
      first.mutation =
          std::make_shared<const Mutation>(AddMutation{true, {}, ids});
      break;
    case Scenario::Start::kBackfillPaused:
      first.mutation = std::make_shared<const Mutation>(
          AddMutation{false, {kFragment}, ids});
      break;
    case Scenario::Start::kAdd:
      first.mutation =
          std::make_shared<const Mutation>(AddMutation{false, {}, ids});
      break;
  }
  event_ = absl::StrCat("job created: ", actors_.size(), " actors");
  InjectBarrier(std::move(first));
  ChooseTrigger();
}

void Simulation::CreateActors() {
  ++generation_;
  const int count = static_cast<int>(assignment_.size());
  std::vector<TrackedActor> tracked;
  for (int i = 0; i < count; ++i) {
    tracked.push_back(
        TrackedActor{static_cast<ActorId>(generation_ * 16 + i),
                     static_cast<uint32_t>(assignment_[i].Count())});
  }
  absl::StatusOr<std::unique_ptr<JobProgressTracker>> tracker =
      JobProgressTracker::Create(tracked);
  if (!tracker.ok()) return Fail("setup", tracker.status().ToString());
  tracker_ = std::move(*tracker);
  std::vector<testing::ScriptedExecutor*> inputs;
  for (int i = 0; i < count; ++i) {
    reporters_.push_back(
        std::make_unique<ProgressReporter>(tracked[i].actor, *tracker_));
    BackfillActorConfig config;
    config.owned = assignment_[i];
    config.options.actor_id = tracked[i].actor;
    config.options.fragment_id = kFragment;
    config.options.chunk_size = scenario_.chunk_size;
    config.options.rate_limit = rate_limit_;
    if (options_.upstream_buffer_budget_bytes.has_value()) {
      config.options.upstream_buffer_budget_bytes =
          *options_.upstream_buffer_budget_bytes;
    }
    config.progress_table_id = kProgressTable;
    absl::StatusOr<std::unique_ptr<BackfillActor>> actor =
        BackfillActor::Create(*table_, *store_, clock_, reporters_.back().get(),
                              std::move(config));
    if (!actor.ok())
      return Fail("creating an actor", actor.status().ToString());
    inputs.push_back(&(*actor)->input());
    actors_.push_back(std::move(*actor));
  }
  dispatcher_ = std::make_unique<HashDispatcher>(*table_, assignment_, inputs,
                                                 scenario_.pair_split);
  collected_.assign(count, 0);
  was_finished_.assign(count, false);
  outstanding_fault_.assign(count, "");
  inflight_.clear();
  inflight_base_ = 0;
}

void Simulation::ApplyJobState(const Barrier& barrier) {
  if (barrier.MutationAs<PauseMutation>() != nullptr) global_paused_ = true;
  if (barrier.MutationAs<ResumeMutation>() != nullptr) global_paused_ = false;
  if (const auto* add = barrier.MutationAs<AddMutation>()) {
    global_paused_ = add->pause;
    fragment_paused_ = add->backfill_fragments_to_pause.contains(kFragment);
  }
  if (const auto* start = barrier.MutationAs<StartFragmentBackfillMutation>()) {
    if (start->fragment_ids.contains(kFragment)) fragment_paused_ = false;
  }
  if (const auto* throttle = barrier.MutationAs<ThrottleMutation>()) {
    auto it = throttle->rate_limits.find(kFragment);
    if (it != throttle->rate_limits.end()) {
      rate_limit_ = RateLimit::FromOptionalU32(it->second);
    }
  }
}

// Injects `barrier` into the pipeline: the upstream seals its epoch (unless
// it is a recovery's Initial barrier), and the dispatcher broadcasts it.
void Simulation::InjectBarrier(Barrier barrier) {
  std::shared_ptr<const RowModel> model;
  if (barrier.kind == BarrierKind::kInitial) {
    model = snapshots_.at(barrier.epoch.prev.value()).model;
  } else {
    if (absl::Status s = upstream_->Commit(barrier.epoch); !s.ok()) {
      return HandleError("the upstream", s);
    }
    model = std::make_shared<const RowModel>(upstream_->model());
  }
  clock_.AdvanceTime(scenario_.barrier_interval);
  Trace(absl::StrCat("inject ", barrier.DebugString()));
  ApplyJobState(barrier);
  dispatcher_->Broadcast(barrier);
  epoch_ = barrier.epoch.curr.value();
  ++outcome_.barriers;
  InflightBarrier inflight;
  inflight.barrier = std::move(barrier);
  inflight.model_at_prev = std::move(model);
  inflight_.push_back(std::move(inflight));
}

std::optional<Mutation> Simulation::ChaosMutation() {
  if (!Chance(rng_, scenario_.mutation_probability)) return std::nullopt;
  switch (Uniform(rng_, 0, 7)) {
    case 0:
      return PauseMutation{};
    case 1:
      return ResumeMutation{};
    case 2:
    case 3: {
      ThrottleMutation throttle;
      throttle.rate_limits[kFragment] = RandomRateLimit(rng_).ToOptionalU32();
      return throttle;
    }
    case 4: {
      ThrottleMutation throttle;  // another fragment: ignored
      throttle.rate_limits[kFragment + 1] = 0;
      return throttle;
    }
    case 5:
      return StartFragmentBackfillMutation{{kFragment}};
    case 6: {
      ThrottleMutation throttle;
      throttle.rate_limits[kFragment] = std::nullopt;
      return throttle;
    }
    default:
      return UpdateMutation{};
  }
}

void Simulation::InjectNextBarrier() {
  Barrier barrier;
  barrier.epoch = EpochPair{Epoch(epoch_ + 1), Epoch(epoch_)};
  barrier.kind = Uniform(rng_, 1, scenario_.checkpoint_frequency) == 1
                     ? BarrierKind::kCheckpoint
                     : BarrierKind::kBarrier;
  std::optional<Mutation> mutation;
  if (phase_ == Phase::kChaos) {
    mutation = ChaosMutation();
  } else if (global_paused_) {
    // The drain: lift every pause and limit, one command per barrier, until
    // the job state says it is done (a command lost in a crash is re-sent).
    mutation = ResumeMutation{};
  } else if (fragment_paused_) {
    mutation = StartFragmentBackfillMutation{{kFragment}};
  } else if (!rate_limit_.is_disabled()) {
    mutation = ThrottleMutation{{{kFragment, std::nullopt}}};
  }
  if (mutation.has_value()) {
    barrier.mutation = std::make_shared<const Mutation>(std::move(*mutation));
  }
  event_ = absl::StrCat("inject ", barrier.DebugString());
  InjectBarrier(std::move(barrier));
}

const Row& Simulation::RandomRow() {
  const RowModel& rows = upstream_->model();
  auto it = rows.begin();
  std::advance(it, Uniform(rng_, 0, static_cast<int>(rows.size()) - 1));
  return it->second.s1;
}

void Simulation::DoDml() {
  const TableCatalog& catalog = table_->catalog();
  std::vector<UpstreamChange> changes;
  absl::Status status;
  const int kind = Uniform(rng_, 0, 99);
  if (kind < 40 || upstream_->model().empty()) {
    Row row = testing::RandomTableRow(catalog, rng_, scenario_.key_space);
    event_ = absl::StrCat("upstream insert ", RowDebugString(row));
    if (!upstream_->Contains(row)) status = upstream_->Insert(row, &changes);
  } else if (kind < 60) {
    const Row row = RandomRow();
    event_ = absl::StrCat("upstream delete ", RowDebugString(row));
    status = upstream_->Delete(row, &changes);
  } else if (kind < 67) {
    // A run of deletes: consecutive rows in pk order.
    const RowModel& rows = upstream_->model();
    auto it = rows.begin();
    std::advance(it, Uniform(rng_, 0, static_cast<int>(rows.size()) - 1));
    std::vector<Row> run;
    for (int n = Uniform(rng_, 2, 12); n > 0 && it != rows.end(); --n, ++it) {
      run.push_back(it->second.s1);
    }
    event_ = absl::StrCat("upstream deletes a run of ", run.size(), " from ",
                          RowDebugString(run.front()));
    for (const Row& row : run) {
      status = upstream_->Delete(row, &changes);
      if (!status.ok()) break;
    }
  } else if (kind < 87 || !scenario_.pk_updates) {
    const Row row = RandomRow();
    Row changed = testing::RandomValueChange(catalog, row, rng_);
    event_ = absl::StrCat("upstream update ", RowDebugString(row), " -> ",
                          RowDebugString(changed));
    status = upstream_->Update(row, changed, &changes);
  } else {
    const Row row = RandomRow();
    Row moved = testing::RandomTableRow(catalog, rng_, scenario_.key_space);
    event_ = absl::StrCat("upstream pk update ", RowDebugString(row), " -> ",
                          RowDebugString(moved));
    if (!upstream_->Contains(moved)) {
      status = upstream_->Update(row, moved, &changes);
    }
  }
  if (!status.ok()) return HandleError("the upstream", status);
  if (options_.sabotage == SimulationOptions::Sabotage::kDropChange &&
      Chance(rng_, 0.1)) {
    return;
  }
  if (dispatcher_ != nullptr) dispatcher_->Route(changes);
}

void Simulation::Step() {
  ++step_;
  outcome_.steps = step_;
  if (step_ > options_.max_steps || epoch_ > options_.max_epochs) {
    return Fail("liveness: the run exceeded its step or epoch limit",
                absl::StrCat(AllFinished() ? "every actor finished"
                                           : "some actor has not finished",
                             ", in-flight barriers ", inflight_.size()));
  }
  if (phase_ == Phase::kChaos &&
      outcome_.barriers >= static_cast<uint64_t>(scenario_.chaos_epochs)) {
    phase_ = Phase::kDrain;
    Trace("drain: resume, start fragment backfill, no rate limit");
  }
  const bool all_finished = AllFinished();
  if (phase_ == Phase::kDrain && !global_paused_ && !fragment_paused_ &&
      rate_limit_.is_disabled() && all_finished &&
      steady_barriers_ >= static_cast<uint64_t>(scenario_.steady_epochs) &&
      whole_checks_ > 0 && !finishing_) {
    finishing_ = true;
    trigger_ = Trigger();
    plan_->Disarm();
    Trace("finishing: waiting for the in-flight barriers");
  }
  switch (trigger_.kind) {
    case TriggerKind::kAtStep:
      if (step_ >= trigger_.step) {
        event_ = "scheduled crash";
        return RequestCrash("at a random step", "a crash at a random step");
      }
      break;
    case TriggerKind::kInSteadyState:
      if (all_finished) {
        if (trigger_.step == 0) trigger_.step = step_ + Uniform(rng_, 1, 200);
        if (step_ >= trigger_.step) {
          event_ = "scheduled crash";
          return RequestCrash("in the steady state",
                              "a crash in the steady state");
        }
      }
      break;
    default:
      break;
  }
  double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if ((r -= scenario_.barrier_probability) < 0) {
    if (CanInject()) return InjectNextBarrier();
    return PollSomeActor();
  }
  if ((r -= scenario_.dml_probability) < 0) return DoDml();
  if ((r -= scenario_.flush_probability) < 0) {
    dispatcher_->Flush(Uniform(rng_, 0, dispatcher_->num_actors() - 1));
    return;
  }
  if ((r -= scenario_.pending_probability) < 0) {
    dispatcher_->PushPending(Uniform(rng_, 0, dispatcher_->num_actors() - 1),
                             Uniform(rng_, 1, 3));
    return;
  }
  PollSomeActor();
}

void Simulation::PollSomeActor() {
  const absl::Time now = clock_.Now();
  std::vector<int> runnable;
  absl::Time earliest = absl::InfiniteFuture();
  for (size_t i = 0; i < actors_.size(); ++i) {
    if (actors_[i]->Runnable(now)) runnable.push_back(static_cast<int>(i));
    earliest = std::min(earliest, actors_[i]->deadline());
  }
  if (runnable.empty()) {
    if (earliest != absl::InfiniteFuture()) {
      clock_.SetTime(earliest);  // waiting for rate-limit permits
      return;
    }
    if (CanInject()) return InjectNextBarrier();
    if (finishing_ && inflight_.empty()) return;
    event_ = "scheduler";
    std::string detail;
    for (size_t i = 0; i < actors_.size(); ++i) {
      absl::StrAppend(
          &detail, "actor ", i, ": ", collected_[i], " barriers emitted, ",
          actors_[i]->input().num_remaining(), " input steps left; ");
    }
    absl::StrAppend(&detail, inflight_.size(), " barriers in flight, oldest ",
                    inflight_.empty()
                        ? std::string("none")
                        : inflight_.front().barrier.DebugString());
    return Fail("stuck: no actor can make progress and none will be woken",
                detail);
  }
  PollActor(runnable[Uniform(rng_, 0, static_cast<int>(runnable.size()) - 1)]);
}

void Simulation::PollActor(int index) {
  BackfillActor& actor = *actors_[index];
  event_ = absl::StrCat("poll actor ", index, " (id ", actor.actor_id(), ")");
  plan_->TakeFired();
  PollResult result = actor.Poll();
  if (plan_->TakeFired()) {
    outstanding_fault_[index] = plan_->last_message();
    Trace(absl::StrCat(event_, ": fault fired: ", plan_->last_message()));
  }
  switch (result.kind()) {
    case PollResult::Kind::kPending:
      return;
    case PollResult::Kind::kEnd:
      return Fail("an actor ended its stream unexpectedly", "");
    case PollResult::Kind::kError: {
      const absl::Status status = result.status();
      if (outstanding_fault_[index].empty()) {
        return Fail("an actor failed without an injected fault",
                    status.ToString());
      }
      if (!absl::StrContains(status.message(), outstanding_fault_[index])) {
        return Fail("an actor returned another error than the injected fault",
                    absl::StrCat("injected: ", outstanding_fault_[index],
                                 "; returned: ", status.ToString()));
      }
      Trace(absl::StrCat(event_, ": failed: ", status.ToString()));
      return RequestCrash(
          FaultKind("an actor", outstanding_fault_[index]),
          absl::StrCat("actor ", index, " failed: ", status.ToString()));
    }
    case PollResult::Kind::kReady:
      break;
  }
  const Message& message = result.message();
  if (const auto* chunk = std::get_if<StreamChunk>(&message)) {
    if (options_.trace) {
      Trace(absl::StrCat(event_, " -> ", chunk->DebugString()));
    }
    const int times =
        options_.sabotage == SimulationOptions::Sabotage::kDuplicateChunk &&
                Chance(rng_, 0.1)
            ? 2
            : 1;
    for (int i = 0; i < times; ++i) {
      if (std::optional<Divergence> d = view_->Apply(*chunk, actor.owned())) {
        event_ = absl::StrCat(event_, ": output chunk ", chunk->DebugString());
        return Fail(std::move(*d));
      }
    }
    return;
  }
  if (const auto* barrier = std::get_if<Barrier>(&message)) {
    OnActorBarrier(index, *barrier);
  }
}

void Simulation::OnActorBarrier(int index, const Barrier& barrier) {
  BackfillActor& actor = *actors_[index];
  event_ = absl::StrCat("actor ", index, " (id ", actor.actor_id(),
                        ") emitted ", barrier.DebugString());
  Trace(event_);
  const size_t position = collected_[index] - inflight_base_;
  if (position >= inflight_.size() ||
      !(inflight_[position].barrier.epoch == barrier.epoch)) {
    return Fail("an actor emitted an unexpected barrier",
                position < inflight_.size()
                    ? absl::StrCat("expected ",
                                   inflight_[position].barrier.DebugString())
                    : std::string("no barrier is in flight for it"));
  }
  if (!outstanding_fault_[index].empty()) {
    const std::string note = absl::StrCat(
        "seed ", seed_, ": ", event_, " after a fault in its poll ",
        "was not returned: ", outstanding_fault_[index]);
    outstanding_fault_[index].clear();
    outcome_.swallowed_faults.push_back(note);
    Trace(note);
  }
  const bool first = collected_[index] == 0;
  ++collected_[index];
  InflightBarrier& inflight = inflight_[position];
  const BackfillState* state = actor.executor().backfill_state();
  if (state != nullptr) {
    ++outcome_.invariant_checks;
    if (std::optional<Divergence> d =
            CheckActorInvariant(*table_, *inflight.model_at_prev,
                                view_->vnodes(), actor.owned(), *state)) {
      return Fail(std::move(*d));
    }
  } else if (!first) {
    return Fail("an actor has no backfill state after its first barrier", "");
  }
  if (inflight.barrier.is_checkpoint()) {
    ViewModel::Vnodes part = view_->Part(actor.owned());
    inflight.view.merge(part);
  }
  const bool finished = actor.executor().is_finished();
  inflight.all_finished = inflight.all_finished && finished;
  ++inflight.collected;
  const bool just_finished = finished && !was_finished_[index];
  was_finished_[index] = finished;
  if (trigger_.kind == TriggerKind::kAfterFirstBarrier && first &&
      (trigger_.actor < 0 || trigger_.actor == index)) {
    return RequestCrash(
        generation_ == 1
            ? "after the first barrier of job creation (before its commit)"
            : "after a recovery's first barrier (before init)",
        "a crash right after an actor's first barrier");
  }
  if (trigger_.kind == TriggerKind::kAtFinishBarrier && just_finished &&
      (trigger_.actor < 0 || trigger_.actor == index)) {
    return RequestCrash("at an actor's finish barrier",
                        "a crash right after an actor's finish barrier");
  }
  CompleteBarriers();
}

void Simulation::CompleteBarriers() {
  while (!Failed() && !pending_crash_.has_value() && !inflight_.empty() &&
         inflight_.front().collected == actors_.size()) {
    InflightBarrier done = std::move(inflight_.front());
    inflight_.pop_front();
    ++inflight_base_;
    event_ = absl::StrCat("collected ", done.barrier.DebugString(),
                          " from every actor");
    if (done.all_finished) ++steady_barriers_;
    if (!done.barrier.is_checkpoint()) continue;
    const uint64_t epoch = done.barrier.epoch.prev.value();
    if (done.all_finished) {
      ++whole_checks_;
      ++outcome_.whole_view_checks;
      if (std::optional<Divergence> d =
              CheckWholeView(*table_, *done.model_at_prev, done.view)) {
        d->what = absl::StrCat("view != table after every actor finished (",
                               d->what, ")");
        return Fail(std::move(*d));
      }
    }
    snapshots_[epoch] = Snapshot{
        done.model_at_prev,
        std::make_shared<const ViewModel::Vnodes>(std::move(done.view))};
    if (absl::Status s = store_->Checkpoint(Epoch(epoch)); !s.ok()) {
      return HandleError("the coordinator", s);
    }
    Trace(absl::StrCat("checkpoint ", epoch));
    snapshots_.erase(snapshots_.begin(), snapshots_.find(epoch));
  }
}

void Simulation::DoCrash() {
  const std::string reason = std::move(*pending_crash_);
  pending_crash_.reset();
  ++outcome_.crashes;
  --crashes_left_;
  event_ = absl::StrCat("recovery after ", reason);
  Trace(absl::StrCat("CRASH: ", reason));
  // Every executor and table instance goes; their uncommitted data is lost.
  dispatcher_.reset();
  actors_.clear();
  reporters_.clear();
  tracker_.reset();
  upstream_.reset();
  inflight_.clear();
  plan_->Disarm();
  plan_->TakeFired();
  finishing_ = false;  // the new actors need barriers to finish
  if (options_.store == SimulationOptions::StoreKind::kRocksDb &&
      Chance(rng_, scenario_.reopen_probability)) {
    CloseStore();
    if (absl::Status s = OpenStore(); !s.ok()) {
      return Fail("reopening the RocksDB store failed", s.ToString());
    }
    Trace("store reopened");
  }
  const uint64_t committed =
      store_->CommittedEpoch(table_->catalog().table_id).value();
  auto it = snapshots_.find(committed);
  if (it == snapshots_.end()) {
    return Fail("the store's committed epoch is not a checkpoint of the run",
                absl::StrCat("committed epoch ", committed));
  }
  const Snapshot snapshot = it->second;
  snapshots_.erase(std::next(it), snapshots_.end());
  if (options_.sabotage != SimulationOptions::Sabotage::kKeepViewOnCrash) {
    view_->Restore(*snapshot.view);
  }
  std::vector<VnodeBitmap> assignment = assignment_;
  if (Chance(rng_, scenario_.rescale_probability)) {
    assignment = RandomVnodeAssignment(rng_, table_->catalog().vnode_count,
                                       scenario_.max_actors);
  }
  if (!SameAssignment(assignment, assignment_)) ++outcome_.rescales;
  assignment_ = std::move(assignment);
  const EpochPair first{Epoch(committed + 1), Epoch(committed)};
  absl::StatusOr<std::unique_ptr<UpstreamMaterialize>> upstream =
      UpstreamMaterialize::Create(*table_, *store_, first, *snapshot.model);
  if (!upstream.ok()) {
    return Fail("restarting the upstream", upstream.status().ToString());
  }
  upstream_ = std::move(*upstream);
  epoch_ = committed;
  CreateActors();
  if (Failed()) return;
  Barrier barrier;
  barrier.epoch = first;
  barrier.kind = BarrierKind::kInitial;
  std::set<ActorId> ids;
  for (const auto& actor : actors_) ids.insert(actor->actor_id());
  if (global_paused_ || fragment_paused_) {
    std::set<FragmentId> paused;
    if (fragment_paused_) paused.insert(kFragment);
    barrier.mutation = std::make_shared<const Mutation>(
        AddMutation{global_paused_, paused, ids});
  } else {
    switch (Uniform(rng_, 0, 2)) {
      case 0:
        break;
      case 1:
        barrier.mutation = std::make_shared<const Mutation>(UpdateMutation{});
        break;
      default:
        barrier.mutation =
            std::make_shared<const Mutation>(AddMutation{false, {}, ids});
        break;
    }
  }
  Trace(absl::StrCat("restart with ", actors_.size(), " actors at ",
                     first.DebugString()));
  InjectBarrier(std::move(barrier));
  ChooseTrigger();
}

void Simulation::ChooseTrigger() {
  trigger_ = Trigger();
  if (crashes_left_ <= 0 || finishing_) return;
  const int kind = Uniform(rng_, 0, 9);
  if (kind <= 1) {
    trigger_.kind = TriggerKind::kAtStep;
    trigger_.step = step_ + Uniform(rng_, 1, 500);
  } else if (kind == 2) {
    trigger_.kind = TriggerKind::kAfterFirstBarrier;
    trigger_.actor = Uniform(rng_, -1, static_cast<int>(actors_.size()) - 1);
  } else if (kind == 3) {
    trigger_.kind = TriggerKind::kAtFinishBarrier;
    trigger_.actor = Uniform(rng_, -1, static_cast<int>(actors_.size()) - 1);
  } else if (kind == 4) {
    trigger_.kind = TriggerKind::kInSteadyState;
  } else {
    trigger_.kind = TriggerKind::kFault;
    static const FaultOp kOps[] = {
        FaultOp::kInsert,      FaultOp::kDelete,
        FaultOp::kSeal,        FaultOp::kGet,
        FaultOp::kNewIterator, FaultOp::kIteratorMove,
        FaultOp::kCheckpoint,  FaultOp::kCheckpointAfterCommit,
        FaultOp::kInit};
    const FaultOp op = kOps[Uniform(rng_, 0, 8)];
    int max_nth = 30;
    if (op == FaultOp::kSeal) max_nth = 12;
    if (op == FaultOp::kIteratorMove) max_nth = 200;
    if (op == FaultOp::kCheckpoint || op == FaultOp::kCheckpointAfterCommit ||
        op == FaultOp::kInit) {
      max_nth = 4;
    }
    const int nth = Uniform(rng_, 1, max_nth);
    plan_->Arm(op, nth);
    Trace(absl::StrCat("armed: fail the ", nth, "th ", FaultOpName(op)));
  }
}

}  // namespace

SeedOutcome RunSimulationSeed(uint64_t seed, const SimulationOptions& options) {
  Simulation simulation(seed, options);
  return simulation.Run();
}

std::string ReproductionCommand(uint64_t seed,
                                const SimulationOptions& options) {
  return absl::StrCat(
      "bazel run -c opt //tests:backfill_simulation -- --seeds=1 --first_seed=",
      seed, " --store=",
      options.store == SimulationOptions::StoreKind::kRocksDb ? "rocksdb"
                                                              : "memory",
      options.upstream_buffer_budget_bytes.has_value()
          ? absl::StrCat(" --upstream_buffer_budget_bytes=",
                         *options.upstream_buffer_budget_bytes)
          : "",
      " --trace");
}

}  // namespace simulation
}  // namespace backfill
