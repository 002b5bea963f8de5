#include "executor/runtime/streaming_job.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/channel.h"
#include "executor/runtime/dml_source_executor.h"
#include "executor/runtime/hash_dispatcher.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/materialize_executor.h"
#include "executor/runtime/merge_executor.h"
#include "metrics/backfill_metrics.h"
#include "ratelimit/rate_limit_split.h"
#include "serde/memcmp_codec.h"
#include "serde/vnode_bitmap.h"
#include "serde/vnode_hash.h"
#include "storage/replicated_state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

constexpr ActorId kSourceActor = 1;
constexpr ActorId kViewActor = 2;
constexpr ActorId kFirstBackfillActor = 100;
constexpr FragmentId kBackfillFragment = 10;

std::vector<int> OutputColumns(const StreamingJobOptions& options) {
  if (!options.output_columns.empty()) return options.output_columns;
  std::vector<int> all;
  for (size_t i = 0; i < options.upstream.columns.size(); ++i) {
    all.push_back(static_cast<int>(i));
  }
  return all;
}

// S1 indices of the view's columns: the output columns, then hidden pk ones.
std::vector<int> ViewColumns(const StreamingJobOptions& options) {
  std::vector<int> columns = OutputColumns(options);
  for (int pk : options.upstream.pk_indices) {
    if (std::find(columns.begin(), columns.end(), pk) == columns.end()) {
      columns.push_back(pk);
    }
  }
  return columns;
}

// What the job is, for the job-state table.
JobDefinition DefinitionOf(const StreamingJobOptions& options) {
  JobDefinition definition;
  definition.upstream = options.upstream;
  definition.view = ViewCatalog(options);
  definition.output_columns = OutputColumns(options);
  definition.progress_table_id = options.progress_table_id;
  definition.source_offset_table_id = options.source_offset_table_id;
  return definition;
}

// Writes the job's first catalog row (its definition and the initial state)
// in a checkpoint of its own, before anything else of the job is written.
absl::Status DefineJob(StateStore& store, const StreamingJobOptions& options,
                       const JobDefinition& definition) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<JobStateTable> table,
      JobStateTable::Create(store, options.job_state_table_id));
  const Epoch committed = store.CommittedEpoch(options.job_state_table_id);
  const EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved, table->InitEpoch(epoch));
  if (saved.has_value()) return absl::OkStatus();  // Defined meanwhile.
  JobState initial;
  initial.parallelism = options.parallelism;
  initial.rate_limit = options.rate_limit;
  BACKFILL_RETURN_IF_ERROR(table->Write(definition, initial));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(table->Commit(next));
  return store.Checkpoint(next.prev);
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1,
                                static_cast<size_t>(p * values.size()));
  return values[index];
}

// Shared between the coordinator and the actor threads.
struct JobShared {
  std::mutex mu;
  std::condition_variable cv;
  Epoch collected ABSL_GUARDED_BY(mu);
  absl::Status error ABSL_GUARDED_BY(mu);
  int threads_running ABSL_GUARDED_BY(mu) = 0;

  void Fail(const absl::Status& status) {
    std::lock_guard<std::mutex> guard(mu);
    if (error.ok()) error = status;
    cv.notify_all();
  }
  void Collect(Epoch epoch) {
    std::lock_guard<std::mutex> guard(mu);
    collected = std::max(collected, epoch);
    cv.notify_all();
  }

  // Set by the coordinator once it will not checkpoint any more (the attempt
  // is over): from then on actors may drop their state.
  bool checkpoints_stopped ABSL_GUARDED_BY(mu) = false;
  void StopCheckpoints() {
    std::lock_guard<std::mutex> guard(mu);
    checkpoints_stopped = true;
    cv.notify_all();
  }

  // Barrier latency in the backfill: injection (by the coordinator) to
  // emission (by the last backfill actor), per epoch.
  std::map<uint64_t, absl::Time> injected_at ABSL_GUARDED_BY(mu);
  std::map<uint64_t, absl::Duration> backfill_latency ABSL_GUARDED_BY(mu);
  void BackfillEmitted(Epoch epoch, absl::Time now) {
    std::lock_guard<std::mutex> guard(mu);
    auto it = injected_at.find(epoch.value());
    if (it == injected_at.end()) return;
    absl::Duration& latency = backfill_latency[epoch.value()];
    latency = std::max(latency, now - it->second);
  }
};

// Returns true if it loaded the table now (a fresh job), false if the load
// had completed in an earlier run.
absl::StatusOr<bool> BulkLoad(StateStore& store, const StreamingJobOptions& options) {
  // Rows are a pure function of their key, so reloading is idempotent; the
  // "loaded" row in the offset table says the load completed.
  BACKFILL_ASSIGN_OR_RETURN(
      auto marker_table,
      StateTable::Create(
          DmlSourceExecutor::OffsetTableCatalog(options.source_offset_table_id),
          store, VnodeBitmap::All(1)));
  const Epoch committed = store.CommittedEpoch(options.upstream.table_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_RETURN_IF_ERROR(marker_table->InitEpoch(epoch));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> loaded,
                            marker_table->GetRow(Row{int16_t{1}}));
  if (loaded.has_value()) return false;
  StateTableOptions table_options;
  table_options.op_consistency = OpConsistency::kInconsistent;
  BACKFILL_ASSIGN_OR_RETURN(
      auto table,
      StateTable::Create(options.upstream, store,
                         VnodeBitmap::All(options.upstream.vnode_count),
                         table_options));
  BACKFILL_RETURN_IF_ERROR(table->InitEpoch(epoch));
  constexpr uint64_t kRowsPerEpoch = 200000;
  for (uint64_t key = 0; key < options.initial_rows; ++key) {
    BACKFILL_RETURN_IF_ERROR(table->Insert(
        WorkloadRow(options.upstream, options.workload.seed, key, 0,
                    options.workload.null_fraction)));
    if ((key + 1) % kRowsPerEpoch == 0) {
      const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
      BACKFILL_RETURN_IF_ERROR(table->Commit(next));
      BACKFILL_RETURN_IF_ERROR(marker_table->Commit(next));
      BACKFILL_RETURN_IF_ERROR(store.Checkpoint(next.prev));
      epoch = next;
    }
  }
  BACKFILL_RETURN_IF_ERROR(marker_table->Insert(Row{int16_t{1}, int64_t{1}}));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(marker_table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(store.Checkpoint(next.prev));
  return true;
}

// One run of the actor graph from the last checkpoint until the job ends or
// an actor fails.
class JobAttempt {
 public:
  // `apply_overrides`: options.overrides apply on top of the committed job
  // state (no checkpoint of this run has persisted them yet).
  JobAttempt(StateStore& store, const StreamingJobOptions& options,
             const JobDefinition& definition, Registry* registry,
             const std::function<void(const JobProgress&)>& observer,
             Clock& clock, JobResult& result, absl::Time job_start,
             bool creating, bool apply_overrides)
      : creating_(creating),
        apply_overrides_(apply_overrides),
        store_(store),
        options_(options),
        definition_(definition),
        registry_(registry),
        observer_(observer),
        clock_(clock),
        result_(result),
        job_start_(job_start) {}

  // OK when the job completed; an actor/storage error otherwise.
  absl::Status Run();

 private:
  // Loads the committed job state (and applies the overrides) at `first`.
  absl::Status LoadJobState(EpochPair first);
  absl::Status Build();
  std::shared_ptr<const Mutation> FirstMutation() const;
  void StartThreads();
  void StopThreads();
  // For an actor thread that ends before its stop barrier (it failed, or its
  // input ended early): fails the attempt if nothing did yet, waits until
  // the coordinator checkpoints no more (a checkpoint must see the sealed
  // data of every table instance, so none may go before), then destroys
  // `executor`. That closes its input channels: an upstream actor blocked
  // on a full channel to it returns (Cancelled) instead of waiting forever,
  // and the graph can be torn down.
  template <typename T>
  void AbandonActor(std::unique_ptr<T>& executor);
  // Persists state_ into epoch.prev (not for the initial barrier), sends the
  // barrier, waits until the view collected it, and checkpoints if `kind`
  // says so.
  absl::Status InjectAndWait(EpochPair epoch, BarrierKind kind,
                             std::shared_ptr<const Mutation> mutation);
  std::shared_ptr<const Mutation> ThrottleFor(RateLimit job_limit) const;

  // True for the job's creation (Add), false for a restart or recovery
  // (Update), as RisingWave marks its first barriers.
  const bool creating_;
  const bool apply_overrides_;
  StateStore& store_;
  const StreamingJobOptions& options_;
  const JobDefinition& definition_;
  Registry* registry_;
  const std::function<void(const JobProgress&)>& observer_;
  Clock& clock_;
  JobResult& result_;
  absl::Time job_start_;
  // The job state in force (what the actors run with) and its table. Only
  // the coordinator's thread uses them.
  JobState state_;
  std::unique_ptr<JobStateTable> job_table_;

  JobShared shared_;
  std::shared_ptr<std::atomic<bool>> stop_generating_ =
      std::make_shared<std::atomic<bool>>(false);
  std::optional<ChannelSender> barrier_sender_;
  std::unique_ptr<DmlSourceExecutor> source_;
  DmlSourceExecutor* source_view_ = nullptr;
  std::unique_ptr<HashDispatcher> dispatcher_;
  std::vector<std::unique_ptr<ArrangementBackfillExecutor>> backfills_;
  std::vector<ArrangementBackfillExecutor*> backfill_views_;
  std::vector<ChannelSender> view_senders_;
  std::unique_ptr<MaterializeExecutor> view_;
  std::unique_ptr<JobProgressTracker> tracker_;
  std::vector<std::unique_ptr<ProgressReporter>> reporters_;
  std::vector<BackfillMetrics> metrics_;
  std::vector<uint32_t> owned_counts_;
  std::vector<std::thread> threads_;
  std::vector<double> latencies_ms_;
  // Backfill barrier latencies while it ran and after it finished.
  std::vector<double> backfill_latencies_ms_;
  std::vector<double> steady_latencies_ms_;
  double last_backfill_latency_ms_ = 0;
  // Written by actor i's thread before it ends; read after the join.
  std::vector<size_t> peak_buffer_bytes_;
};

absl::Status JobAttempt::LoadJobState(EpochPair first) {
  BACKFILL_ASSIGN_OR_RETURN(
      job_table_, JobStateTable::Create(store_, options_.job_state_table_id));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved,
                            job_table_->InitEpoch(first));
  if (!saved.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the job state (table ", options_.job_state_table_id,
        ") is missing at epoch ", first.prev.value(),
        ": the job was defined in an earlier checkpoint"));
  }
  // The definition was checked when the run started; a reopened store is
  // the same directory.
  state_ = saved->state;
  if (apply_overrides_) state_ = ApplyJobStateOverrides(state_, options_.overrides);
  if (state_.parallelism < 1 ||
      state_.parallelism > static_cast<uint32_t>(options_.upstream.vnode_count)) {
    return absl::DataLossError(absl::StrCat(
        "corrupt job state: parallelism = ", state_.parallelism,
        " is not in [1, ", options_.upstream.vnode_count, "]"));
  }
  stop_generating_->store(state_.upstream_stopped);
  result_.parallelism = state_.parallelism;
  result_.job_state = state_;
  return absl::OkStatus();
}

absl::Status JobAttempt::Build() {
  const TableCatalog& upstream = options_.upstream;
  const std::vector<int> view_columns = ViewColumns(options_);
  std::vector<int32_t> s2_ids;
  for (int column : view_columns) s2_ids.push_back(upstream.columns[column].column_id);

  // Source -> dispatcher.
  auto [barrier_tx, barrier_rx] = MakeChannel({options_.channel_capacity});
  barrier_sender_.emplace(std::move(barrier_tx));
  BACKFILL_ASSIGN_OR_RETURN(
      auto upstream_table,
      StateTable::Create(upstream, store_, VnodeBitmap::All(upstream.vnode_count)));
  BACKFILL_ASSIGN_OR_RETURN(
      auto offset_table,
      StateTable::Create(
          DmlSourceExecutor::OffsetTableCatalog(options_.source_offset_table_id),
          store_, VnodeBitmap::All(1)));
  ExecutorInfo source_info;
  source_info.identity = absl::StrCat("DmlSource(actor ", kSourceActor, ")");
  source_ = std::make_unique<DmlSourceExecutor>(
      std::move(barrier_rx), std::move(upstream_table), std::move(offset_table),
      options_.workload, stop_generating_, source_info);
  source_view_ = source_.get();

  const uint32_t parallelism = state_.parallelism;
  peak_buffer_bytes_.assign(parallelism, 0);
  BACKFILL_ASSIGN_OR_RETURN(std::vector<VnodeBitmap> split,
                            VnodeBitmap::EvenSplit(upstream.vnode_count,
                                                   static_cast<int>(parallelism)));
  std::vector<int> owner(upstream.vnode_count, 0);
  for (uint32_t i = 0; i < parallelism; ++i) {
    for (VirtualNode vnode : split[i].set_vnodes()) owner[vnode] = static_cast<int>(i);
    owned_counts_.push_back(static_cast<uint32_t>(split[i].Count()));
  }
  std::vector<ChannelSender> dispatch_senders;
  std::vector<ChannelReceiver> dispatch_receivers;
  for (uint32_t i = 0; i < parallelism; ++i) {
    auto [tx, rx] = MakeChannel({options_.channel_capacity});
    dispatch_senders.push_back(std::move(tx));
    dispatch_receivers.push_back(std::move(rx));
  }
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher hasher,
      VnodeHasher::Create(upstream.dist_key_indices, upstream.vnode_count));
  dispatcher_ = std::make_unique<HashDispatcher>(
      std::move(dispatch_senders), std::move(hasher), std::move(owner),
      view_columns, clock_);

  // Backfill actors.
  std::vector<TrackedActor> tracked;
  for (uint32_t i = 0; i < parallelism; ++i) {
    tracked.push_back({kFirstBackfillActor + i, owned_counts_[i]});
  }
  BACKFILL_ASSIGN_OR_RETURN(tracker_, JobProgressTracker::Create(tracked));
  const std::vector<RateLimit> shares =
      SplitJobRateLimit(state_.EffectiveRateLimit(), owned_counts_);
  std::vector<BoxedExecutor> view_inputs;
  metrics_.reserve(parallelism);  // executors keep pointers into it
  for (uint32_t i = 0; i < parallelism; ++i) {
    const ActorId actor = kFirstBackfillActor + i;
    reporters_.push_back(std::make_unique<ProgressReporter>(actor, *tracker_));
    BackfillMetrics* metrics = nullptr;
    if (registry_ != nullptr) {
      BACKFILL_ASSIGN_OR_RETURN(
          BackfillMetrics created,
          BackfillMetrics::Create(*registry_, upstream.table_id, actor));
      metrics_.push_back(std::move(created));
      metrics = &metrics_.back();
    }
    // The actor is built from its plan node, as a planner would hand it over.
    proto::ArrangementBackfillNode node;
    *node.mutable_upstream_table() = TableCatalogToProto(upstream);
    *node.mutable_progress_table() = TableCatalogToProto(
        BackfillProgressCatalog(upstream, options_.progress_table_id));
    for (int32_t id : s2_ids) node.add_upstream_column_ids(id);
    for (size_t c = 0; c < view_columns.size(); ++c) {
      node.add_output_indices(static_cast<uint32_t>(c));
    }
    node.set_chunk_size(options_.chunk_size);
    if (std::optional<uint32_t> limit = shares[i].ToOptionalU32()) {
      node.set_rate_limit(*limit);
    }
    node.set_actor_id(actor);
    node.set_fragment_id(kBackfillFragment);
    node.set_vnode_bitmap(split[i].Serialize());
    ExecutorInfo input_info;
    input_info.identity = absl::StrCat("Exchange(to actor ", actor, ")");
    auto input = std::make_unique<ReceiverExecutor>(
        input_info, std::move(dispatch_receivers[i]));
    ArrangementBackfillDeps deps;
    deps.reporter = reporters_.back().get();
    deps.metrics = metrics;
    deps.clock = &clock_;
    // A view that falls behind throttles the snapshot reads, never the
    // upstream: the actor keeps draining its input.
    deps.output_ready = [this, i](PollContext& cx) {
      return view_senders_[i].PollReady(cx);
    };
    BACKFILL_ASSIGN_OR_RETURN(
        auto backfill, BuildArrangementBackfillFromPlan(node, store_, std::move(input), deps));
    backfill_views_.push_back(backfill.get());
    backfills_.push_back(std::move(backfill));
    auto [tx, rx] = MakeChannel({options_.channel_capacity});
    view_senders_.push_back(std::move(tx));
    ExecutorInfo merge_input_info;
    merge_input_info.identity = absl::StrCat("Exchange(from actor ", actor, ")");
    view_inputs.push_back(
        std::make_unique<ReceiverExecutor>(merge_input_info, std::move(rx)));
  }
  // View: merge -> materialize.
  ExecutorInfo merge_info;
  merge_info.identity = "Merge(view)";
  auto merge = std::make_unique<MergeExecutor>(std::move(view_inputs), merge_info);
  BACKFILL_ASSIGN_OR_RETURN(
      auto view_table,
      StateTable::Create(ViewCatalog(options_), store_,
                         VnodeBitmap::All(upstream.vnode_count)));
  ExecutorInfo view_info;
  view_info.identity = absl::StrCat("Materialize(view, actor ", kViewActor, ")");
  view_ = std::make_unique<MaterializeExecutor>(std::move(merge),
                                                std::move(view_table), view_info);
  return absl::OkStatus();
}

bool IsStopBarrier(const Message& message) {
  const auto* barrier = std::get_if<Barrier>(&message);
  return barrier != nullptr && barrier->MutationAs<StopMutation>() != nullptr;
}

template <typename T>
void JobAttempt::AbandonActor(std::unique_ptr<T>& executor) {
  std::unique_lock<std::mutex> lock(shared_.mu);
  if (shared_.error.ok()) {
    shared_.error = absl::InternalError(absl::StrCat(
        executor->info().identity, ": input ended before the stop barrier"));
    shared_.cv.notify_all();
  }
  clock_.WaitUntil(lock, shared_.cv, [&] { return shared_.checkpoints_stopped; },
                   absl::InfiniteFuture());
  lock.unlock();
  executor.reset();
}

void JobAttempt::StartThreads() {
  // Upstream actor: source -> dispatcher.
  threads_.emplace_back([this] {
    while (true) {
      absl::StatusOr<std::optional<Message>> next = NextMessage(*source_, clock_);
      if (!next.ok()) {
        shared_.Fail(next.status());
        break;
      }
      if (!next->has_value()) break;
      const bool stop = std::holds_alternative<Barrier>(**next) &&
                        std::get<Barrier>(**next).MutationAs<StopMutation>() != nullptr;
      if (absl::Status status = dispatcher_->Dispatch(std::move(**next));
          !status.ok()) {
        shared_.Fail(absl::Status(status.code(),
                                  absl::StrCat("dispatcher: ", status.message())));
        break;
      }
      if (stop) break;
    }
    dispatcher_->Close();
  });
  for (size_t i = 0; i < backfills_.size(); ++i) {
    threads_.emplace_back([this, i] {
      ArrangementBackfillExecutor& executor = *backfills_[i];
      bool stopped = false;
      while (true) {
        absl::StatusOr<std::optional<Message>> next = NextMessage(executor, clock_);
        if (!next.ok()) {
          shared_.Fail(next.status());
          break;
        }
        if (!next->has_value()) break;
        if (const auto* barrier = std::get_if<Barrier>(&**next)) {
          shared_.BackfillEmitted(barrier->epoch.curr, clock_.Now());
        }
        if (IsStopBarrier(**next)) stopped = true;
        if (absl::Status status = view_senders_[i].Send(std::move(**next), clock_);
            !status.ok()) {
          shared_.Fail(status);
          break;
        }
      }
      view_senders_[i].Close();
      peak_buffer_bytes_[i] = executor.peak_upstream_buffer_bytes();
      if (!stopped) AbandonActor(backfills_[i]);
    });
  }
  threads_.emplace_back([this] {
    bool stopped = false;
    while (true) {
      absl::StatusOr<std::optional<Message>> next = NextMessage(*view_, clock_);
      if (!next.ok()) {
        shared_.Fail(next.status());
        break;
      }
      if (!next->has_value()) break;
      if (const auto* barrier = std::get_if<Barrier>(&**next)) {
        shared_.Collect(barrier->epoch.curr);
        if (barrier->MutationAs<StopMutation>() != nullptr) {
          stopped = true;
          break;
        }
      }
    }
    if (!stopped) AbandonActor(view_);
  });
}

void JobAttempt::StopThreads() {
  if (barrier_sender_.has_value()) barrier_sender_->Close();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

std::shared_ptr<const Mutation> JobAttempt::FirstMutation() const {
  if (!creating_) return std::make_shared<const Mutation>(UpdateMutation{});
  AddMutation add;
  add.added_actors.insert(kSourceActor);
  add.added_actors.insert(kViewActor);
  for (size_t i = 0; i < backfills_.size(); ++i) {
    add.added_actors.insert(kFirstBackfillActor + static_cast<ActorId>(i));
  }
  return std::make_shared<const Mutation>(std::move(add));
}

std::shared_ptr<const Mutation> JobAttempt::ThrottleFor(RateLimit job_limit) const {
  const std::vector<RateLimit> shares = SplitJobRateLimit(job_limit, owned_counts_);
  ThrottleMutation throttle;
  throttle.rate_limits[kBackfillFragment] = job_limit.ToOptionalU32();
  for (size_t i = 0; i < shares.size(); ++i) {
    throttle.actor_rate_limits[kFirstBackfillActor + static_cast<ActorId>(i)] =
        shares[i].ToOptionalU32();
  }
  return std::make_shared<const Mutation>(std::move(throttle));
}

absl::Status JobAttempt::InjectAndWait(EpochPair epoch, BarrierKind kind,
                                       std::shared_ptr<const Mutation> mutation) {
  if (kind != BarrierKind::kInitial) {
    // The job state in force after this barrier's mutation belongs to the
    // epoch the barrier ends, like the actors' writes: its checkpoint
    // commits them together.
    BACKFILL_RETURN_IF_ERROR(job_table_->Write(definition_, state_));
    BACKFILL_RETURN_IF_ERROR(job_table_->Commit(epoch));
  }
  Barrier barrier;
  barrier.epoch = epoch;
  barrier.kind = kind;
  barrier.mutation = std::move(mutation);
  const absl::Time injected = clock_.Now();
  {
    std::lock_guard<std::mutex> guard(shared_.mu);
    shared_.injected_at[epoch.curr.value()] = injected;
  }
  if (absl::Status status = barrier_sender_->Send(std::move(barrier), clock_);
      !status.ok()) {
    std::lock_guard<std::mutex> guard(shared_.mu);
    return shared_.error.ok() ? status : shared_.error;
  }
  std::unique_lock<std::mutex> lock(shared_.mu);
  const absl::Time deadline = job_start_ + options_.max_duration;
  const bool done = clock_.WaitUntil(
      lock, shared_.cv,
      [&] { return !shared_.error.ok() || shared_.collected >= epoch.curr; },
      deadline);
  if (!shared_.error.ok()) return shared_.error;
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat(
        "barrier ", epoch.DebugString(), " not collected within the job's ",
        absl::FormatDuration(options_.max_duration)));
  }
  last_backfill_latency_ms_ = absl::ToDoubleMilliseconds(
      shared_.backfill_latency[epoch.curr.value()]);
  shared_.injected_at.erase(epoch.curr.value());
  shared_.backfill_latency.erase(epoch.curr.value());
  lock.unlock();
  latencies_ms_.push_back(absl::ToDoubleMilliseconds(clock_.Now() - injected));
  ++result_.epochs;
  if (kind == BarrierKind::kCheckpoint) {
    BACKFILL_RETURN_IF_ERROR(store_.Checkpoint(epoch.prev));
    ++result_.checkpoints;
    result_.job_state = state_;
  }
  return absl::OkStatus();
}

absl::Status JobAttempt::Run() {
  const Epoch committed = store_.CommittedEpoch(options_.upstream.table_id);
  const EpochPair first{Epoch(committed.value() + 1), committed};
  BACKFILL_RETURN_IF_ERROR(LoadJobState(first));
  BACKFILL_RETURN_IF_ERROR(Build());
  StartThreads();
  absl::Status status = [&]() -> absl::Status {
    EpochPair epoch = first;
    BACKFILL_RETURN_IF_ERROR(
        InjectAndWait(epoch, BarrierKind::kInitial, FirstMutation()));
    result_.resumed |= source_view_->resumed();
    std::optional<uint64_t> rows_at_start;  // persisted progress of a restart
    uint32_t checkpoints_after_finish = 0;
    uint64_t barrier_index = 0;
    absl::Time next_tick = clock_.Now();
    while (true) {
      next_tick += options_.barrier_interval;
      clock_.SleepUntil(next_tick);
      ++barrier_index;
      const bool checkpoint =
          barrier_index % std::max<uint32_t>(options_.checkpoint_frequency, 1) == 0;
      // Every action of this barrier applies, in order, to the job state;
      // the barrier carries one Throttle for the net change of the actors'
      // limit (pause is the backfill's rate-limit Pause, so that pause,
      // resume and rate changes compose into one mutation).
      JobState next = state_;
      ++next.epochs_since_creation;
      next = ApplyJobActions(next, options_.actions);
      std::shared_ptr<const Mutation> mutation;
      if (next.EffectiveRateLimit() != state_.EffectiveRateLimit()) {
        mutation = ThrottleFor(next.EffectiveRateLimit());
      }
      if (next.upstream_stopped) stop_generating_->store(true);
      state_ = next;
      const bool done = tracker_->IsDone();
      const bool last = done && checkpoint &&
                        checkpoints_after_finish >= options_.extra_checkpoints_after_finish;
      if (last) {
        stop_generating_->store(true);
        StopMutation stop;
        stop.actors.insert(kSourceActor);
        stop.actors.insert(kViewActor);
        for (size_t i = 0; i < backfills_.size(); ++i) {
          stop.actors.insert(kFirstBackfillActor + static_cast<ActorId>(i));
        }
        mutation = std::make_shared<const Mutation>(std::move(stop));
      }
      epoch = EpochPair{Epoch(epoch.curr.value() + 1), epoch.curr};
      BACKFILL_RETURN_IF_ERROR(InjectAndWait(
          epoch, checkpoint ? BarrierKind::kCheckpoint : BarrierKind::kBarrier,
          mutation));
      (done ? steady_latencies_ms_ : backfill_latencies_ms_)
          .push_back(last_backfill_latency_ms_);
      if (done && checkpoint) ++checkpoints_after_finish;
      if (!rows_at_start.has_value()) rows_at_start = tracker_->consumed_rows();
      result_.upstream_ops = source_view_->offset();
      if (observer_) {
        JobProgress progress;
        progress.seconds = absl::ToDoubleSeconds(clock_.Now() - job_start_);
        progress.snapshot_rows = tracker_->consumed_rows();
        progress.upstream_ops = source_view_->offset();
        progress.epochs = result_.epochs;
        progress.checkpoints = result_.checkpoints;
        for (size_t i = 0; i < backfill_views_.size(); ++i) {
          progress.vnodes_total += owned_counts_[i];
          std::optional<ActorProgress> actor =
              tracker_->GetActorProgress(kFirstBackfillActor + static_cast<ActorId>(i));
          if (actor.has_value() && actor->state == ActorProgress::State::kDone) {
            progress.vnodes_completed += owned_counts_[i];
          }
        }
        progress.estimated_total_rows = options_.initial_rows;
        progress.barrier_latency_p50_ms = Percentile(latencies_ms_, 0.5);
        progress.barrier_latency_p99_ms = Percentile(latencies_ms_, 0.99);
        progress.last_backfill_barrier_latency_ms = last_backfill_latency_ms_;
        progress.backfill_done = done;
        observer_(progress);
      }
      if (last) break;
    }
    result_.snapshot_rows = tracker_->consumed_rows();
    // Rows read in this run (a restart's persisted rows are not counted;
    // the first barrier's report includes them).
    result_.snapshot_rows_this_run +=
        result_.snapshot_rows - (result_.resumed ? rows_at_start.value_or(0) : 0);
    result_.barrier_latency_p50_ms = Percentile(latencies_ms_, 0.5);
    result_.barrier_latency_p99_ms = Percentile(latencies_ms_, 0.99);
    result_.backfill_barrier_latency_p50_ms =
        Percentile(backfill_latencies_ms_, 0.5);
    result_.backfill_barrier_latency_p99_ms =
        Percentile(backfill_latencies_ms_, 0.99);
    result_.steady_barrier_latency_p50_ms = Percentile(steady_latencies_ms_, 0.5);
    result_.steady_barrier_latency_p99_ms =
        Percentile(steady_latencies_ms_, 0.99);
    return absl::OkStatus();
  }();
  if (!status.ok()) shared_.Fail(status);
  shared_.StopCheckpoints();
  StopThreads();
  if (dispatcher_ != nullptr) {
    result_.upstream_blocked_seconds =
        std::max(result_.upstream_blocked_seconds,
                 absl::ToDoubleSeconds(dispatcher_->max_blocked()));
  }
  uint64_t peak = 0;
  for (size_t bytes : peak_buffer_bytes_) peak += bytes;
  result_.peak_buffer_bytes = std::max(result_.peak_buffer_bytes, peak);
  return status;
}

std::string EncodedRow(const Row& row, const std::vector<DataType>& types) {
  std::string key;
  EncodeKey(row, types, std::vector<OrderType>(types.size(), OrderType::Ascending()),
            &key);
  return key;
}

}  // namespace

TableCatalog ViewCatalog(const StreamingJobOptions& options) {
  const TableCatalog& upstream = options.upstream;
  const std::vector<int> columns = ViewColumns(options);
  TableCatalog view;
  view.table_id = options.view_table_id;
  view.name = absl::StrCat(upstream.name, "_view");
  for (size_t i = 0; i < columns.size(); ++i) {
    ColumnDesc column = upstream.columns[columns[i]];
    column.column_id = static_cast<int32_t>(i + 1);
    view.columns.push_back(column);
  }
  auto position = [&](int s1) {
    return static_cast<int>(std::find(columns.begin(), columns.end(), s1) -
                            columns.begin());
  };
  for (size_t i = 0; i < upstream.pk_indices.size(); ++i) {
    view.pk_indices.push_back(position(upstream.pk_indices[i]));
    view.pk_orders.push_back(upstream.pk_orders[i]);
  }
  for (int column : upstream.dist_key_indices) {
    view.dist_key_indices.push_back(position(column));
  }
  view.vnode_count = upstream.vnode_count;
  view.value_encoding = ValueEncoding::kPositional;
  for (size_t i = 0; i < columns.size(); ++i) {
    view.value_indices.push_back(static_cast<int>(i));
  }
  return view;
}

absl::StatusOr<std::vector<Row>> ReadCommittedRows(
    StateStore& store, const TableCatalog& catalog,
    const std::vector<int>& columns) {
  // A read-only view through a replicated instance: it decodes rows exactly
  // as the table's own state table does, and is never part of a checkpoint.
  std::vector<int32_t> all_ids;
  for (const ColumnDesc& column : catalog.columns) all_ids.push_back(column.column_id);
  BACKFILL_ASSIGN_OR_RETURN(
      auto table, ReplicatedStateTable::Create(
                      catalog, store, VnodeBitmap::All(catalog.vnode_count), all_ids));
  const Epoch committed = store.CommittedEpoch(catalog.table_id);
  BACKFILL_RETURN_IF_ERROR(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  std::vector<DataType> types;
  for (int column : columns) types.push_back(catalog.columns[column].type);
  std::vector<std::pair<std::string, Row>> rows;
  for (int vnode = 0; vnode < catalog.vnode_count; ++vnode) {
    BACKFILL_ASSIGN_OR_RETURN(auto it,
                              table->IterWithVnode(static_cast<VirtualNode>(vnode)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Row projected = ProjectRow(it->row(), columns);
      std::string key = EncodedRow(projected, types);
      rows.emplace_back(std::move(key), std::move(projected));
    }
    BACKFILL_RETURN_IF_ERROR(it->status());
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Row> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

absl::StatusOr<JobResult> RunStreamingJob(
    StateStore& store, const StreamingJobOptions& options, Registry* registry,
    std::function<void(const JobProgress&)> observer, Clock& clock) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(options.upstream));
  if (options.parallelism < 1 ||
      options.parallelism > static_cast<uint32_t>(options.upstream.vnode_count)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism = ", options.parallelism, " must be in [1, ",
        options.upstream.vnode_count, "] (the vnode count)"));
  }
  for (int column : options.output_columns) {
    if (column < 0 || column >= static_cast<int>(options.upstream.columns.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("output column ", column, " is out of range"));
    }
  }
  if (options.overrides.parallelism.has_value() &&
      (*options.overrides.parallelism < 1 ||
       *options.overrides.parallelism >
           static_cast<uint32_t>(options.upstream.vnode_count))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "overrides.parallelism = ", *options.overrides.parallelism,
        " must be in [1, ", options.upstream.vnode_count, "] (the vnode count)"));
  }
  if (options.rate_limit.is_paused() ||
      (options.overrides.rate_limit.has_value() &&
       options.overrides.rate_limit->is_paused())) {
    return absl::InvalidArgumentError(
        "the job-wide rate limit must not be Pause (pausing is an action)");
  }
  BACKFILL_RETURN_IF_ERROR(ValidateJobActions(options.actions));
  {
    const TableId ids[] = {options.upstream.table_id, options.view_table_id,
                           options.progress_table_id, options.source_offset_table_id,
                           options.job_state_table_id};
    for (size_t i = 0; i < std::size(ids); ++i) {
      for (size_t j = i + 1; j < std::size(ids); ++j) {
        if (ids[i] == ids[j]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "table id ", ids[i], " is used twice (upstream, view, progress, "
              "source offset and job state tables must differ)"));
        }
      }
    }
  }
  const JobDefinition definition = DefinitionOf(options);
  const absl::Time start = clock.Now();
  JobResult result;
  result.parallelism = options.overrides.parallelism.value_or(options.parallelism);
  StateStore* current = &store;
  // The newest checkpoint a store acknowledged: every reopen must keep it.
  Epoch acknowledged = store.CommittedEpoch(options.upstream.table_id);
  // Decides whether to retry after `error`; if so logs it, backs off,
  // reopens the store and checks that it kept every acknowledged
  // checkpoint. Returns the error to give up with otherwise.
  uint32_t consecutive = 0;
  auto recover = [&](absl::Status error) -> absl::Status {
    while (true) {
      if (error.code() == absl::StatusCode::kDataLoss ||
          error.code() == absl::StatusCode::kDeadlineExceeded) {
        return error;
      }
      if (result.recoveries >= options.max_recoveries) {
        return absl::Status(
            error.code(), absl::StrCat(error.message(), " (giving up after ",
                                       result.recoveries, " recoveries)"));
      }
      ++result.recoveries;
      ++consecutive;
      result.resumed = true;
      if (options.on_recovery) options.on_recovery(error, result.recoveries);
      absl::Duration backoff = options.recovery_backoff;
      for (uint32_t i = 1; i < consecutive && backoff < absl::Seconds(5); ++i) {
        backoff *= 2;
      }
      backoff = std::min(backoff, absl::Seconds(5));
      if (clock.Now() + backoff > start + options.max_duration) {
        return absl::DeadlineExceededError(absl::StrCat(
            "no time left within the job's ",
            absl::FormatDuration(options.max_duration),
            " to recover from: ", error.message()));
      }
      clock.SleepUntil(clock.Now() + backoff);
      if (!options.reopen_store) return absl::OkStatus();
      if (current != nullptr) {
        acknowledged = std::max(
            acknowledged, current->CommittedEpoch(options.upstream.table_id));
      }
      current = nullptr;  // The reopen closes it.
      absl::StatusOr<StateStore*> reopened = options.reopen_store();
      if (!reopened.ok()) {
        error = absl::Status(reopened.status().code(),
                             absl::StrCat("reopening the state store: ",
                                          reopened.status().message()));
        continue;
      }
      current = *reopened;
      const Epoch committed = current->CommittedEpoch(options.upstream.table_id);
      if (committed < acknowledged) {
        return absl::DataLossError(absl::StrCat(
            "the reopened state store lost acknowledged checkpoints: its "
            "committed epoch is ",
            committed.value(), ", but checkpoint ", acknowledged.value(),
            " had been acknowledged"));
      }
      return absl::OkStatus();
    }
  };
  // The job's catalog row first: a store that holds another job is refused
  // before anything of this job is read or written (its tables would not
  // decode as this job's); a new job is defined before its bulk load.
  while (true) {
    absl::StatusOr<std::optional<SavedJob>> saved =
        ReadCommittedJob(*current, options.job_state_table_id);
    absl::Status status = saved.status();
    if (saved.ok() && saved->has_value()) {
      // Not retried: another job's directory stays another job's.
      BACKFILL_RETURN_IF_ERROR(CheckSameJob((*saved)->definition, definition));
    } else if (saved.ok()) {
      status = DefineJob(*current, options, definition);
    }
    if (status.ok()) break;
    BACKFILL_RETURN_IF_ERROR(recover(absl::Status(
        status.code(), absl::StrCat("job state: ", status.message()))));
  }
  // The bulk load (idempotent: rows are a function of their key).
  bool creating = false;
  while (true) {
    absl::StatusOr<bool> loaded = BulkLoad(*current, options);
    if (loaded.ok()) {
      creating = *loaded;
      break;
    }
    BACKFILL_RETURN_IF_ERROR(recover(absl::Status(
        loaded.status().code(),
        absl::StrCat("bulk load: ", loaded.status().message()))));
  }
  // The overrides apply until a checkpoint of this run has persisted them
  // (every coordinator checkpoint writes the job state in force).
  const Epoch run_start = current->CommittedEpoch(options.upstream.table_id);
  while (true) {
    const uint64_t checkpoints_before = result.checkpoints;
    absl::Status status;
    {
      const bool apply_overrides =
          current->CommittedEpoch(options.upstream.table_id) <= run_start;
      JobAttempt attempt(*current, options, definition, registry, observer, clock,
                         result, start, creating, apply_overrides);
      status = attempt.Run();
    }  // Nothing made on the store survives the attempt.
    if (status.ok()) break;
    // A recovery restarts an existing job, even if this attempt created it.
    creating = false;
    // An attempt that got a checkpoint through ends a run of failures.
    if (result.checkpoints > checkpoints_before) consecutive = 0;
    BACKFILL_RETURN_IF_ERROR(recover(status));
  }
  consecutive = 0;
  result.seconds = absl::ToDoubleSeconds(clock.Now() - start);
  if (result.seconds > 0) {
    result.snapshot_rows_per_second =
        static_cast<double>(result.snapshot_rows_this_run) / result.seconds;
  }
  // Verify: the view equals the table projected to the output columns. The
  // reads are retried like the job (a failed read says nothing about the
  // data).
  const std::vector<int> output = OutputColumns(options);
  const TableCatalog view = ViewCatalog(options);
  std::vector<int> view_output;
  for (size_t i = 0; i < output.size(); ++i) view_output.push_back(static_cast<int>(i));
  std::vector<Row> upstream_rows, view_rows;
  while (true) {
    absl::Status status = [&]() -> absl::Status {
      BACKFILL_ASSIGN_OR_RETURN(upstream_rows,
                                ReadCommittedRows(*current, options.upstream, output));
      BACKFILL_ASSIGN_OR_RETURN(view_rows,
                                ReadCommittedRows(*current, view, view_output));
      return absl::OkStatus();
    }();
    if (status.ok()) break;
    BACKFILL_RETURN_IF_ERROR(recover(absl::Status(
        status.code(), absl::StrCat("verification: ", status.message()))));
  }
  result.upstream_rows = upstream_rows.size();
  result.view_rows = view_rows.size();
  result.consistent = upstream_rows.size() == view_rows.size();
  for (size_t i = 0; result.consistent && i < upstream_rows.size(); ++i) {
    if (!RowsEqual(upstream_rows[i], view_rows[i])) {
      result.consistent = false;
      result.mismatch = absl::StrCat("row ", i, ": table ",
                                     RowDebugString(upstream_rows[i]), " view ",
                                     RowDebugString(view_rows[i]));
    }
  }
  if (!result.consistent && result.mismatch.empty()) {
    result.mismatch = absl::StrCat("table has ", upstream_rows.size(),
                                   " rows, view has ", view_rows.size());
  }
  return result;
}

absl::StatusOr<bool> LoadInitialRows(StateStore& store,
                                     const StreamingJobOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(options.upstream));
  return BulkLoad(store, options);
}

}  // namespace backfill
