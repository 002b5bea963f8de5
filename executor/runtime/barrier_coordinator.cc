#include "executor/runtime/barrier_coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ratelimit/rate_limit_split.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::Status DefineJob(StateStore& store, const StreamingJobOptions& options) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<JobStateTable> table,
      JobStateTable::Create(store, options.job_state_table_id));
  const Epoch committed = store.CommittedEpoch(options.job_state_table_id);
  const EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved,
                            table->InitEpoch(epoch));
  if (saved.has_value()) return absl::OkStatus();  // Defined meanwhile.
  JobState initial;
  initial.parallelism = options.parallelism;
  initial.rate_limit = options.rate_limit;
  initial.adaptive_target = options.adaptive_target_barrier_latency;
  BACKFILL_RETURN_IF_ERROR(table->Write(JobDefinitionOf(options), initial));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(table->Commit(next));
  return store.Checkpoint(next.prev);
}

absl::StatusOr<std::unique_ptr<BarrierCoordinator>> BarrierCoordinator::Create(
    StateStore& store, const StreamingJobOptions& options, AttemptStart attempt,
    Clock& clock, JobResult* result) {
  const Epoch committed = store.CommittedEpoch(options.upstream.table_id);
  const EpochPair first{Epoch(committed.value() + 1), committed};
  std::unique_ptr<BarrierCoordinator> coordinator(new BarrierCoordinator(
      store, options, std::move(attempt), clock, result, first));
  BACKFILL_RETURN_IF_ERROR(coordinator->LoadJobState());
  return coordinator;
}

absl::Status BarrierCoordinator::LoadJobState() {
  BACKFILL_ASSIGN_OR_RETURN(
      job_table_, JobStateTable::Create(store_, options_.job_state_table_id));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved,
                            job_table_->InitEpoch(epoch_));
  if (!saved.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the job state (table ", options_.job_state_table_id,
                     ") is missing at epoch ", epoch_.prev.value(),
                     ": the job was defined in an earlier checkpoint"));
  }
  // The definition was checked when the run started; a reopened store is
  // the same directory.
  state_ = saved->state;
  if (attempt_.apply_overrides) {
    state_ = ApplyJobStateOverrides(state_, options_.overrides);
  }
  if (state_.parallelism < 1 ||
      state_.parallelism >
          static_cast<uint32_t>(options_.upstream.vnode_count)) {
    return absl::DataLossError(
        absl::StrCat("corrupt job state: parallelism = ", state_.parallelism,
                     " is not in [1, ", options_.upstream.vnode_count, "]"));
  }
  BACKFILL_RETURN_IF_ERROR(StartAdaptiveController());
  result_.parallelism = state_.parallelism;
  result_.job_state = state_;
  return absl::OkStatus();
}

namespace {

// What a count reached in this run: `total` less the part an earlier run
// had (`before`), never below 0.
uint64_t ThisRun(uint64_t total, uint64_t before) {
  return total - std::min(total, before);
}

// The controller's ceiling under the user's limit.
uint32_t AdaptiveCeiling(RateLimit rate_limit) {
  return rate_limit.is_fixed() ? rate_limit.rows_per_second() : UINT32_MAX;
}

// The rows the backfill reads at once: each of its actors reads whole chunks.
uint32_t ReadGranularityRows(const StreamingJobOptions& options,
                             uint32_t parallelism) {
  return static_cast<uint32_t>(std::min<uint64_t>(
      UINT32_MAX, uint64_t{EffectiveChunkSize(options)} * parallelism));
}

}  // namespace

absl::Status BarrierCoordinator::StartAdaptiveController() {
  if (!state_.adaptive()) return absl::OkStatus();
  AdaptiveRateControllerOptions controller;
  controller.target_barrier_latency = state_.adaptive_target;
  // Built uncapped so that it keeps the floor as configured: a cap below
  // the floor lowers it only while the cap is in force.
  controller.min_rows_per_second = AdaptiveFloorRowsPerSecond(options_);
  controller.read_granularity_rows =
      ReadGranularityRows(options_, state_.parallelism);
  // A saved rate resumes where the last checkpoint left it; a new mode
  // starts low and doubles.
  if (state_.adaptive_rows_per_second > 0) {
    controller.initial_rows_per_second = state_.adaptive_rows_per_second;
    controller.slow_start = false;
  }
  BACKFILL_RETURN_IF_ERROR(ValidateAdaptiveRateControllerOptions(controller));
  adaptive_ = std::make_unique<AdaptiveRateController>(controller);
  adaptive_->SetMaxRowsPerSecond(AdaptiveCeiling(state_.rate_limit));
  state_.adaptive_rows_per_second = adaptive_->rows_per_second();
  return absl::OkStatus();
}

JobState BarrierCoordinator::WithAdaptiveRate(JobState next) {
  if (adaptive_ == nullptr) return next;
  // This barrier closes the epoch that ran under state_.
  closes_paused_epoch_ = state_.paused;
  if (next.rate_limit != state_.rate_limit) {
    adaptive_->SetMaxRowsPerSecond(AdaptiveCeiling(next.rate_limit));
  }
  if (next.parallelism != state_.parallelism) {  // a rescale
    adaptive_->SetReadGranularityRows(
        ReadGranularityRows(options_, next.parallelism));
  }
  next.adaptive_rows_per_second = adaptive_->rows_per_second();
  return next;
}

void BarrierCoordinator::ObserveAdaptiveLatency(
    const JobGraph& graph, absl::Duration backfill_latency) {
  // The first barrier re-establishes the state (its latency is the actors'
  // start); a paused epoch says nothing about the rate; after the backfill
  // there is nothing to control.
  if (adaptive_ == nullptr || done_) return;
  if (kind_ == BarrierKind::kInitial || closes_paused_epoch_) {
    // Nor do the rows read in it: the measure starts again after it.
    adaptive_->ForgetRowsRead();
    return;
  }
  // The rows read tell the controller whether its rate binds at all (a
  // rescale's new tracker may count from lower: the controller starts its
  // count again there).
  adaptive_->OnBarrier(injected_at_, backfill_latency,
                       graph.in_force().tracker->consumed_rows());
}

std::shared_ptr<const Mutation> BarrierCoordinator::ThrottleFor(
    const JobGraph& graph, RateLimit job_limit) const {
  const BackfillActorSet& in_force = graph.in_force();
  const std::vector<RateLimit> shares =
      SplitJobRateLimit(job_limit, in_force.owned_vnodes);
  ThrottleMutation throttle;
  throttle.rate_limits[JobGraph::kBackfillFragment] = job_limit.ToOptionalU32();
  for (size_t i = 0; i < shares.size(); ++i) {
    throttle.actor_rate_limits[in_force.actor_ids[i]] =
        shares[i].ToOptionalU32();
  }
  return std::make_shared<const Mutation>(std::move(throttle));
}

absl::StatusOr<Barrier> BarrierCoordinator::NextBarrier(JobGraph& graph) {
  Barrier barrier;
  if (!started_) {
    started_ = true;
    // A source that stopped before a restart stays stopped.
    graph.stop_generating->store(state_.upstream_stopped);
    kind_ = BarrierKind::kInitial;
    if (attempt_.creating) {
      AddMutation add;
      for (ActorId actor : graph.ActorIds()) add.added_actors.insert(actor);
      barrier.mutation = std::make_shared<const Mutation>(std::move(add));
    } else {
      barrier.mutation = std::make_shared<const Mutation>(UpdateMutation{});
    }
  } else {
    ++barrier_index_;
    const bool checkpoint =
        barrier_index_ % std::max<uint32_t>(options_.checkpoint_frequency, 1) ==
        0;
    kind_ = checkpoint ? BarrierKind::kCheckpoint : BarrierKind::kBarrier;
    // Every action of this barrier applies, in order, to the job state; the
    // barrier carries one Throttle for the net change of the actors' limit
    // (pause is the backfill's rate-limit Pause, so that pause, resume and
    // rate changes compose into one mutation).
    JobState next = state_;
    ++next.epochs_since_creation;
    next = ApplyJobActions(next, options_.actions);
    next = WithAdaptiveRate(std::move(next));
    if (next.EffectiveRateLimit() != state_.EffectiveRateLimit()) {
      barrier.mutation = ThrottleFor(graph, next.EffectiveRateLimit());
    }
    if (next.upstream_stopped) graph.stop_generating->store(true);
    state_ = next;
    const bool rescale = checkpoint && RescaleDue(graph);
    // A rescale's new actors have their backfill (or their finish barrier)
    // still ahead of them: the attempt goes on.
    done_ = !rescale && graph.in_force().tracker->IsDone();
    last_ =
        done_ && checkpoint &&
        checkpoints_after_finish_ >= options_.extra_checkpoints_after_finish;
    if (!last_ && checkpoint && !rescale) {
      std::optional<std::string> reschedule;
      {
        MutexLock guard(&mu_);
        reschedule = reschedule_requested_;
      }
      if (reschedule.has_value()) {
        // The attempt ends here; the job goes on in a new one from this
        // barrier's checkpoint (the source resumes from its offset).
        last_ = true;
        rescheduled_ = true;
        reschedule_reason_ = *std::move(reschedule);
      }
    }
    if (last_) {
      graph.stop_generating->store(true);
      StopMutation stop;
      for (ActorId actor : graph.ActorIds()) stop.actors.insert(actor);
      barrier.mutation = std::make_shared<const Mutation>(std::move(stop));
    }
    epoch_ = EpochPair{Epoch(epoch_.curr.value() + 1), epoch_.curr};
    // The job state in force after this barrier's mutation belongs to the
    // epoch the barrier ends, like the actors' writes: its checkpoint
    // commits them together.
    BACKFILL_RETURN_IF_ERROR(job_table_->Write(definition_, state_));
    BACKFILL_RETURN_IF_ERROR(job_table_->Commit(epoch_));
    if (rescale) {
      BACKFILL_ASSIGN_OR_RETURN(barrier.mutation, BeginRescale(graph));
    }
  }
  barrier.epoch = epoch_;
  barrier.kind = kind_;
  injected_at_ = clock_.Now();
  if (!result_.first_barrier_at.has_value()) {
    result_.first_barrier_at = injected_at_;
  }
  {
    MutexLock guard(&mu_);
    injected_[epoch_.curr.value()] = injected_at_;
  }
  if (on_inject_) on_inject_(barrier);
  return barrier;
}

void BarrierCoordinator::CollectRemotely(
    size_t processes, std::function<void(const Barrier&)> on_inject) {
  on_inject_ = processes > 0 ? std::move(on_inject) : nullptr;
  MutexLock guard(&mu_);
  remote_processes_ = processes;
  AdvanceCollectedLocked();
}

void BarrierCoordinator::RemoteCollected(Epoch curr) {
  MutexLock guard(&mu_);
  if (curr <= collected_) return;
  ++remote_collected_[curr.value()];
  AdvanceCollectedLocked();
}

void BarrierCoordinator::AdvanceCollectedLocked() {
  if (graph_collected_ <= collected_) return;
  if (remote_processes_ > 0) {
    auto it = remote_collected_.find(graph_collected_.value());
    if (it == remote_collected_.end() || it->second < remote_processes_) {
      return;
    }
  }
  collected_ = graph_collected_;
  remote_collected_.erase(remote_collected_.begin(),
                          remote_collected_.upper_bound(collected_.value()));
  cv_.SignalAll();
}

bool BarrierCoordinator::IsCollected(Epoch curr) const {
  MutexLock guard(&mu_);
  return collected_ >= curr;
}

namespace {
// BarrierTimeoutEpoch's payload: the barrier's curr epoch, in decimal.
constexpr absl::string_view kBarrierTimeoutPayload =
    "type.googleapis.com/backfill.BarrierTimeout";
}  // namespace

std::optional<Epoch> BarrierTimeoutEpoch(const absl::Status& status) {
  if (!absl::IsUnavailable(status)) return std::nullopt;
  const auto payload = status.GetPayload(kBarrierTimeoutPayload);
  uint64_t epoch = 0;
  if (!payload.has_value() ||
      !absl::SimpleAtoi(std::string(*payload), &epoch)) {
    return std::nullopt;
  }
  return Epoch(epoch);
}

absl::Status BarrierCoordinator::DeadlineExceeded() const {
  return absl::DeadlineExceededError(
      absl::StrCat("the job did not finish within its max_duration of ",
                   absl::FormatDuration(options_.max_duration), " (barrier ",
                   epoch_.DebugString(), " was in flight)"));
}

absl::Status BarrierCoordinator::WaitCollected() {
  MutexLock lock(&mu_);
  auto injected = injected_.find(epoch_.curr.value());
  const absl::Time barrier_deadline =
      injected == injected_.end() ? absl::InfiniteFuture()
                                  : injected->second + options_.barrier_timeout;
  const bool collected = clock_.WaitUntil(
      mu_, cv_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !error_.ok() || collected_ >= epoch_.curr;
      },
      std::min(deadline(), barrier_deadline));
  if (!error_.ok()) return error_;
  if (!collected) {
    // The job's own time ran out, whatever the barrier was doing: say
    // that first (a stuck barrier is the timeout below).
    if (clock_.Now() >= deadline()) return DeadlineExceeded();
    absl::Status timeout = absl::UnavailableError(absl::StrCat(
        "barrier ", epoch_.DebugString(),
        " not collected within the barrier timeout ",
        absl::FormatDuration(options_.barrier_timeout),
        " of its injection (an actor, or a process on its path, is stuck)"));
    timeout.SetPayload(kBarrierTimeoutPayload,
                       absl::Cord(absl::StrCat(epoch_.curr.value())));
    return timeout;
  }
  return absl::OkStatus();
}

absl::Status BarrierCoordinator::OnCollected(JobGraph& graph) {
  {
    MutexLock guard(&mu_);
    last_backfill_latency_ms_ =
        absl::ToDoubleMilliseconds(backfill_latency_[epoch_.curr.value()]);
    injected_.erase(epoch_.curr.value());
    backfill_latency_.erase(epoch_.curr.value());
  }
  const double latency_ms =
      absl::ToDoubleMilliseconds(clock_.Now() - injected_at_);
  latency_p50_ms_.Add(latency_ms);
  latency_p99_ms_.Add(latency_ms);
  ObserveAdaptiveLatency(graph, absl::Milliseconds(last_backfill_latency_ms_));
  ++result_.epochs;
  if (kind_ == BarrierKind::kCheckpoint) {
    BACKFILL_RETURN_IF_ERROR(store_.Checkpoint(epoch_.prev));
    ++result_.checkpoints;
    result_.job_state = state_;
    if (rescale_in_flight_) FinishRescale(graph);
  }
  if (kind_ == BarrierKind::kInitial) {
    // Decided by the run's first attempt to start the job (a later attempt,
    // after a recovery, resumes this run's own checkpoints).
    if (!result_.upstream_ops_before_run.has_value()) {
      result_.resumed = graph.source->resumed();
    }
    return absl::OkStatus();
  }
  (done_ ? steady_latencies_ms_ : backfill_latencies_ms_)
      .push_back(last_backfill_latency_ms_);
  if (done_ && !result_.backfill_seconds.has_value()) {
    result_.backfill_seconds = absl::ToDoubleSeconds(
        clock_.Now() - result_.first_barrier_at.value_or(attempt_.job_start));
  }
  if (done_ && kind_ == BarrierKind::kCheckpoint) ++checkpoints_after_finish_;
  if (!result_.snapshot_rows_before_run.has_value()) {
    // A source that did not resume started a new job: nothing before. A
    // resumed one: what the actors' persisted progress held when they
    // started (not the rows they report now, which include the rows they
    // read in this run's first epoch: all of them, for a short rest).
    result_.snapshot_rows_before_run =
        graph.source->resumed() ? graph.in_force().tracker->persisted_rows()
                                : 0;
  }
  if (!result_.upstream_ops_before_run.has_value()) {
    // The source handled the barrier just collected: its start is set.
    result_.upstream_ops_before_run = graph.source->start_offset();
  }
  const uint64_t offset = graph.source->offset();
  result_.upstream_ops = ThisRun(offset, *result_.upstream_ops_before_run);
  if (attempt_.observer) {
    JobProgress progress;
    progress.seconds = absl::ToDoubleSeconds(clock_.Now() - attempt_.job_start);
    // Monotone across a rescale, and complete at its barrier: the old
    // actors' tracker holds the rows they read up to it; the new actors
    // report those (and theirs) only from the barrier after it.
    for (const std::unique_ptr<BackfillActorSet>& set : graph.backfill_sets) {
      observed_rows_ = std::max(observed_rows_, set->tracker->consumed_rows());
    }
    progress.snapshot_rows = observed_rows_;
    progress.snapshot_rows_this_run =
        ThisRun(observed_rows_, *result_.snapshot_rows_before_run);
    progress.upstream_ops = result_.upstream_ops;
    progress.epochs = result_.epochs;
    progress.checkpoints = result_.checkpoints;
    const BackfillActorSet& in_force = graph.in_force();
    progress.parallelism = static_cast<uint32_t>(in_force.actor_ids.size());
    for (size_t i = 0; i < in_force.actor_ids.size(); ++i) {
      progress.vnodes_total += in_force.owned_vnodes[i];
      std::optional<ActorProgress> actor =
          in_force.tracker->GetActorProgress(in_force.actor_ids[i]);
      if (actor.has_value() && actor->state == ActorProgress::State::kDone) {
        progress.vnodes_completed += in_force.owned_vnodes[i];
      }
    }
    observed_vnodes_completed_ =
        std::max(observed_vnodes_completed_, progress.vnodes_completed);
    progress.vnodes_completed = observed_vnodes_completed_;
    progress.barrier_latency_p50_ms = latency_p50_ms_.Get();
    progress.barrier_latency_p99_ms = latency_p99_ms_.Get();
    progress.last_backfill_barrier_latency_ms = last_backfill_latency_ms_;
    progress.backfill_done = done_;
    progress.rate_limit = state_.EffectiveRateLimit();
    progress.adaptive_target_unreachable =
        adaptive_ != nullptr && !done_ && adaptive_->target_unreachable();
    progress.job_state = state_;
    progress.backfill_seconds = result_.backfill_seconds;
    attempt_.observer(progress);
  }
  if (last_) finished_ = true;
  return absl::OkStatus();
}

void BarrierCoordinator::RecordAttemptEnd(const JobGraph& graph,
                                          bool completed) {
  if (completed) {
    result_.snapshot_rows = graph.in_force().tracker->consumed_rows();
    // Rows read in this run, by every attempt (an earlier run's persisted
    // rows are not counted; the first barrier's report includes them).
    result_.snapshot_rows_this_run = ThisRun(
        result_.snapshot_rows, result_.snapshot_rows_before_run.value_or(0));
    result_.barrier_latency_p50_ms = latency_p50_ms_.Get();
    result_.barrier_latency_p99_ms = latency_p99_ms_.Get();
    result_.backfill_barrier_latency_p50_ms =
        Percentile(backfill_latencies_ms_, 0.5);
    result_.backfill_barrier_latency_p99_ms =
        Percentile(backfill_latencies_ms_, 0.99);
    result_.backfill_barriers = backfill_latencies_ms_.size();
    result_.steady_barrier_latency_p50_ms =
        Percentile(steady_latencies_ms_, 0.5);
    result_.steady_barrier_latency_p99_ms =
        Percentile(steady_latencies_ms_, 0.99);
  }
  if (graph.dispatcher != nullptr) {
    result_.upstream_blocked_seconds =
        std::max(result_.upstream_blocked_seconds,
                 absl::ToDoubleSeconds(graph.dispatcher->max_blocked()));
    result_.rescale_upstream_blocked_seconds = std::max(
        result_.rescale_upstream_blocked_seconds,
        absl::ToDoubleSeconds(graph.dispatcher->max_rescale_blocked()));
  }
  // Per set of actors (the first, each rescale's): the sum over its actors.
  for (const std::unique_ptr<BackfillActorSet>& set : graph.backfill_sets) {
    uint64_t peak = 0;
    for (size_t bytes : set->peak_buffer_bytes) peak += bytes;
    result_.peak_buffer_bytes = std::max(result_.peak_buffer_bytes, peak);
    uint64_t log_peak = 0;
    for (uint64_t bytes : set->peak_log_bytes) log_peak += bytes;
    result_.peak_snapshot_log_bytes =
        std::max(result_.peak_snapshot_log_bytes, log_peak);
  }
}

// ---- Online rescale ---------------------------------------------------------

bool BarrierCoordinator::RescaleDue(const JobGraph& graph) const {
  return state_.parallelism != graph.in_force().actor_ids.size();
}

absl::StatusOr<std::shared_ptr<const Mutation>>
BarrierCoordinator::BeginRescale(JobGraph& graph) {
  BACKFILL_ASSIGN_OR_RETURN(UpdateMutation update,
                            AddBackfillActors(graph, state_.parallelism,
                                              state_.EffectiveRateLimit()));
  rescale_in_flight_ = true;
  return std::make_shared<const Mutation>(std::move(update));
}

void BarrierCoordinator::FinishRescale(const JobGraph& graph) {
  // The old actors (the set before the one in force) have their last
  // progress committed: they may go.
  const BackfillActorSet& from = *graph.backfill_sets.end()[-2];
  retired_.insert(retired_.end(), from.actors.begin(), from.actors.end());
  rescale_in_flight_ = false;
  ++result_.rescales;
  result_.parallelism = state_.parallelism;
}

std::vector<Actor*> BarrierCoordinator::TakeRetiredActors() {
  std::vector<Actor*> retired;
  retired.swap(retired_);
  return retired;
}

void BarrierCoordinator::Fail(const absl::Status& status) {
  std::function<void(const absl::Status&)> callback;
  {
    MutexLock guard(&mu_);
    if (!error_.ok()) return;
    error_ = status;
    cv_.SignalAll();
    callback = failure_callback_;
  }
  if (callback) callback(status);
}

void BarrierCoordinator::RequestReschedule(std::string reason) {
  MutexLock guard(&mu_);
  if (!reschedule_requested_.has_value()) {
    reschedule_requested_ = std::move(reason);
  }
}

void BarrierCoordinator::SetFailureCallback(
    std::function<void(const absl::Status&)> callback) {
  absl::Status failed;
  {
    MutexLock guard(&mu_);
    failure_callback_ = callback;
    failed = error_;
  }
  if (callback && !failed.ok()) callback(failed);
}

absl::Status BarrierCoordinator::error() const {
  MutexLock guard(&mu_);
  return error_;
}

void BarrierCoordinator::StopCheckpoints() {
  MutexLock guard(&mu_);
  checkpoints_stopped_ = true;
  cv_.SignalAll();
}

void BarrierCoordinator::WaitUntilCheckpointsStopped() {
  MutexLock lock(&mu_);
  clock_.WaitUntil(
      mu_, cv_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return checkpoints_stopped_; },
      absl::InfiniteFuture());
}

void BarrierCoordinator::BackfillEmitted(ActorId, const Barrier& barrier,
                                         absl::Time now) {
  MutexLock guard(&mu_);
  auto it = injected_.find(barrier.epoch.curr.value());
  if (it == injected_.end()) return;
  absl::Duration& latency = backfill_latency_[barrier.epoch.curr.value()];
  latency = std::max(latency, now - it->second);
}

void BarrierCoordinator::ActorEnded(const Actor& actor) {
  if (actor.state() == Actor::State::kStopped) return;
  Fail(actor.state() == Actor::State::kFailed
           ? actor.status()
           : absl::InternalError(absl::StrCat(
                 actor.identity(), ": input ended before the stop barrier")));
}

void BarrierCoordinator::Collected(const Barrier& barrier) {
  MutexLock guard(&mu_);
  graph_collected_ = std::max(graph_collected_, barrier.epoch.curr);
  AdvanceCollectedLocked();
}

}  // namespace backfill
