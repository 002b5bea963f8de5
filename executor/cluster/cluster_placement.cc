#include "executor/cluster/cluster_placement.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/cluster/actor_service.grpc.pb.h"
#include "executor/cluster/grpc_keepalive.h"
#include "executor/runtime/barrier_coordinator.h"
#include "grpcpp/grpcpp.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

struct ClusterPlacement::Call {
  size_t worker = 0;
  std::string name;  // "worker 1 at host:port"
  cluster::proto::AttemptRequest request;
  // Its backfill actors (the request's), for each barrier's inject.
  std::vector<uint32_t> actors;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<cluster::proto::ActorService::Stub> stub;
  grpc::ClientContext context;
  // Set by EndRemote before it cancels the call (which may not have
  // started: it waits for its connection).
  std::atomic<bool> cancelled{false};
  std::thread thread;
  Mutex mu;
  CondVar ended_cv;
  bool ended ABSL_GUARDED_BY(mu) = false;
  // The last barrier (curr epoch) all of the worker's actors emitted.
  std::atomic<uint64_t> last_emitted{0};
};

namespace {
// 64 random bits, never 0.
uint64_t NewAttemptKey() {
  std::random_device random;
  uint64_t key = 0;
  while (key == 0) {
    key = (static_cast<uint64_t>(random()) << 32) ^ random();
  }
  return key;
}
}  // namespace

ClusterPlacement::ClusterPlacement(ExchangeServer& exchange,
                                   const SharedStateStore& committer,
                                   ClusterCheckpointStore& checkpoints,
                                   std::vector<WorkerEndpoint> workers,
                                   uint64_t attempt,
                                   std::vector<size_t> actor_workers,
                                   absl::Duration end_timeout)
    : exchange_(exchange),
      committer_(committer),
      checkpoints_(checkpoints),
      workers_(std::move(workers)),
      attempt_(attempt),
      attempt_key_(NewAttemptKey()),
      actor_workers_(std::move(actor_workers)),
      end_timeout_(end_timeout),
      remote_(
          [](ActorId actor) { return actor < JobGraph::kFirstBackfillActor; },
          exchange,
          [this](ActorId actor) {
            return workers_.empty()
                       ? std::string()
                       : workers_[WorkerOf(actor)].exchange_address;
          },
          /*permits=*/16, attempt_key_) {}

ClusterPlacement::~ClusterPlacement() { EndRemote().IgnoreError(); }

absl::StatusOr<std::vector<size_t>> ActorWorkersByAssignment(
    const ClusterJobState& state, const std::vector<WorkerEndpoint>& workers,
    uint32_t vnode_count, uint32_t parallelism) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<std::string> placed,
      PlaceActorsByAssignment(state, vnode_count, parallelism));
  std::vector<size_t> indexes;
  indexes.reserve(placed.size());
  for (size_t actor = 0; actor < placed.size(); ++actor) {
    auto it = std::find_if(workers.begin(), workers.end(),
                           [&](const WorkerEndpoint& worker) {
                             return worker.worker_id == placed[actor];
                           });
    if (it == workers.end()) {
      return absl::UnavailableError(absl::StrCat(
          "the vnode assignment (version ", state.assignment_version,
          ") gives backfill actor ", JobGraph::kFirstBackfillActor + actor,
          " to worker '", placed[actor],
          "', which is not connected with its actor service"));
    }
    indexes.push_back(static_cast<size_t>(it - workers.begin()));
  }
  return indexes;
}

size_t ClusterPlacement::WorkerOf(ActorId actor) const {
  const size_t index = actor - JobGraph::kFirstBackfillActor;
  if (index < actor_workers_.size()) return actor_workers_[index];
  return index % workers_.size();
}

bool ClusterPlacement::IsLocal(ActorId actor) const {
  return remote_.IsLocal(actor);
}

absl::Status ClusterPlacement::NoWorker() const {
  // None is live (all left or were fenced): a recovery may find one that
  // registered since.
  return absl::UnavailableError(absl::StrCat(
      "attempt ", attempt_, ": no live worker to run the backfill actors on"));
}

absl::Status ClusterPlacement::Serve(ActorId upstream, ActorId downstream,
                                     const Schema& schema,
                                     ChannelReceiver receiver) {
  if (workers_.empty()) return NoWorker();
  return remote_.Serve(upstream, downstream, schema, std::move(receiver));
}

absl::Status ClusterPlacement::Receive(ActorId upstream, ActorId downstream,
                                       const Schema& schema,
                                       ChannelSender sender) {
  if (workers_.empty()) return NoWorker();
  return remote_.Receive(upstream, downstream, schema, std::move(sender));
}

absl::Status ClusterPlacement::StartRemote(const JobState& state,
                                           JobGraph& graph,
                                           BarrierCoordinator& coordinator) {
  if (workers_.empty()) return NoWorker();
  if (!actor_workers_.empty()) {
    if (actor_workers_.size() != state.parallelism) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attempt ", attempt_, ": placed ", actor_workers_.size(),
          " backfill actors, the attempt runs ", state.parallelism));
    }
    for (size_t worker : actor_workers_) {
      if (worker >= workers_.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("attempt ", attempt_, ": an actor placed on worker ",
                         worker, " of ", workers_.size()));
      }
    }
  }
  const std::optional<uint32_t> rate =
      state.EffectiveRateLimit().ToOptionalU32();
  std::set<uint64_t> sessions;
  for (uint32_t i = 0; i < state.parallelism; ++i) {
    sessions.insert(
        workers_[WorkerOf(JobGraph::kFirstBackfillActor + i)].session);
  }
  // Before any barrier of the attempt: each of its checkpoints must hold
  // what these workers' actors seal.
  checkpoints_.RequireSessions(std::move(sessions));
  // When the attempt fails (here or in a worker), the local actors must
  // stop waiting for the workers: the inputs from them fail at once, and so
  // do the sends to them.
  coordinator_ = &coordinator;
  parallelism_ = state.parallelism;
  coordinator.SetFailureCallback([this](const absl::Status& failure) {
    FindHoldingWorkers(failure);
    remote_.CancelInputs();
    // Nor may the local actors wait on a worker that stopped reading their
    // output (its actors hang while its process answers).
    exchange_.CancelOutputs();
  });
  for (size_t w = 0; w < workers_.size(); ++w) {
    auto call = std::make_unique<Call>();
    call->worker = w;
    call->name = absl::StrCat("worker ", w, " at ", workers_[w].actor_address);
    cluster::proto::AttemptRequest& request = call->request;
    request.set_attempt(attempt_);
    request.set_attempt_key(attempt_key_);
    request.set_parallelism(state.parallelism);
    if (rate.has_value()) request.set_rate_limit(*rate);
    request.set_coordinator_exchange_address(exchange_.address());
    request.set_version_id(committer_.VersionId());
    request.set_committed_epoch(committer_.CommittedEpoch(0).value());
    for (uint32_t i = 0; i < state.parallelism; ++i) {
      const ActorId actor = JobGraph::kFirstBackfillActor + i;
      if (WorkerOf(actor) == w) call->actors.push_back(actor);
    }
    request.mutable_actors()->Add(call->actors.begin(), call->actors.end());
    if (request.actors_size() == 0) continue;
    // A worker that vanished without closing the connection (its machine
    // died) fails the call within the keepalive's interval + timeout.
    call->channel =
        CreateKeepaliveChannel(workers_[w].actor_address, Keepalive{});
    call->stub = cluster::proto::ActorService::NewStub(call->channel);
    Call& started = *call;
    calls_.push_back(std::move(call));
    started.thread = std::thread([this, &started, &graph, &coordinator] {
      Relay(started, graph, coordinator);
    });
  }
  // The barriers: the coordinator injects each into every worker with
  // actors, over its control stream, as it makes it (before the barrier
  // enters the source), and collects it once its view and every one of
  // those workers collected it.
  checkpoints_.coordinator().SetBarrierCallback(
      [this, &coordinator](
          const CheckpointCoordinator::BarrierCollection& collection) {
        Collected(collection, coordinator);
      });
  coordinator.CollectRemotely(calls_.size(),
                              [this, &coordinator](const Barrier& barrier) {
                                Inject(barrier, coordinator);
                              });
  return absl::OkStatus();
}

void ClusterPlacement::Inject(const Barrier& barrier,
                              BarrierCoordinator& coordinator) {
  for (const std::unique_ptr<Call>& call : calls_) {
    const absl::Status sent = checkpoints_.coordinator().InjectBarrier(
        workers_[call->worker].session, attempt_key_, barrier.epoch,
        barrier.is_checkpoint(), call->actors);
    if (!sent.ok()) {
      RecordFailure(absl::Status(sent.code(), absl::StrCat(call->name, ": ",
                                                           sent.message())),
                    coordinator);
    }
  }
}

void ClusterPlacement::Collected(
    const CheckpointCoordinator::BarrierCollection& collection,
    BarrierCoordinator& coordinator) {
  if (collection.attempt_key != attempt_key_) return;  // Another attempt's.
  for (const std::unique_ptr<Call>& call : calls_) {
    if (workers_[call->worker].session != collection.session) continue;
    if (!collection.status.ok()) {
      RecordFailure(
          absl::Status(collection.status.code(),
                       absl::StrCat(call->name, ", attempt ", attempt_,
                                    ": cannot collect barrier ",
                                    collection.epoch.DebugString(), ": ",
                                    collection.status.message())),
          coordinator);
      return;
    }
    // Each barrier once per worker, in order.
    const uint64_t curr = collection.epoch.curr.value();
    if (curr <= call->last_emitted.load()) return;
    call->last_emitted.store(curr);
    // Every actor of this worker emitted the barrier: its latency through
    // the backfill, as the coordinator's clock sees it.
    Barrier emitted;
    emitted.epoch = collection.epoch;
    coordinator.BackfillEmitted(call->actors.front(), emitted,
                                coordinator.clock().Now());
    coordinator.RemoteCollected(collection.epoch.curr);
    return;
  }
}

void ClusterPlacement::Relay(Call& call, JobGraph& graph,
                             BarrierCoordinator& coordinator) {
  const std::string context =
      absl::StrCat(call.name, ", attempt ", attempt_, ": ");
  const absl::Status connected = WaitUntilConnected(
      *call.channel, kConnectTimeout, [&call] { return call.cancelled.load(); },
      absl::StrCat(call.name, ", attempt ", attempt_));
  absl::Cleanup mark_ended = [&call] {
    MutexLock lock(&call.mu);
    call.ended = true;
    call.ended_cv.SignalAll();
  };
  if (!connected.ok()) {
    if (!call.cancelled.load()) RecordFailure(connected, coordinator);
    return;
  }
  std::unique_ptr<grpc::ClientReader<cluster::proto::AttemptEvent>> reader =
      call.stub->RunAttempt(&call.context, call.request);
  cluster::proto::AttemptEvent event;
  bool saw_end = false;
  bool failed = false;
  while (reader->Read(&event)) {
    if (event.has_progress()) {
      const cluster::proto::ProgressMessage& p = event.progress();
      const absl::Status reported =
          graph.in_force().tracker->Report(ProgressEvent{
              .actor = p.actor(),
              .epoch = EpochPair{Epoch(p.curr_epoch()), Epoch(p.prev_epoch())},
              .done = p.done(),
              .consumed_epoch = Epoch(p.consumed_epoch()),
              .consumed_rows = p.consumed_rows(),
              .persisted_rows = p.persisted_rows()});
      if (!reported.ok()) {
        RecordFailure(
            absl::Status(reported.code(), absl::StrCat(context, "progress: ",
                                                       reported.message())),
            coordinator);
      }
    } else if (event.has_failed() || event.has_ended()) {
      const cluster::proto::EndedMessage& end =
          event.has_failed() ? event.failed() : event.ended();
      if (end.code() != 0 && !failed) {
        failed = true;
        RecordFailure(absl::Status(static_cast<absl::StatusCode>(end.code()),
                                   absl::StrCat(context, end.message())),
                      coordinator);
      }
      if (event.has_ended()) saw_end = true;
      // EndRemote need not wait longer: after a failure the worker holds
      // the call (and its actors' sealed data) until it is cancelled.
      MutexLock lock(&call.mu);
      call.ended = true;
      call.ended_cv.SignalAll();
    }
  }
  const grpc::Status finished = reader->Finish();
  if (!saw_end && !failed) {
    RecordFailure(
        finished.ok() || finished.error_code() == grpc::StatusCode::CANCELLED
            ? absl::UnavailableError(absl::StrCat(
                  context, "the actor call ended before the actors did: ",
                  finished.ok() ? "no end reported" : finished.error_message()))
            : absl::Status(
                  static_cast<absl::StatusCode>(finished.error_code()),
                  absl::StrCat(context,
                               "the actor call ended before the actors did: ",
                               finished.error_message())),
        coordinator);
  }
}

std::vector<std::pair<size_t, std::string>> WorkersHoldingBarrier(
    const std::vector<WorkerBarrierEvidence>& workers,
    absl::string_view timed_out, absl::Duration at_least) {
  std::vector<std::pair<size_t, std::string>> holding;
  for (const WorkerBarrierEvidence& worker : workers) {
    if (worker.emitted || worker.output_unread) continue;
    if (worker.stopped_reading) {
      holding.emplace_back(
          worker.worker,
          absl::StrCat(timed_out, " and stopped reading their input for at ",
                       "least ", absl::FormatDuration(at_least)));
    } else if (worker.received) {
      holding.emplace_back(
          worker.worker,
          absl::StrCat(timed_out, " though it reached every input at least ",
                       absl::FormatDuration(at_least), " before"));
    }
  }
  return holding;
}

void ClusterPlacement::FindHoldingWorkers(const absl::Status& failure) {
  // Only a barrier timeout is looked into; it comes from the driver, which
  // runs after StartRemote made every call.
  const std::optional<Epoch> held = BarrierTimeoutEpoch(failure);
  if (!held.has_value() || coordinator_ == nullptr) return;
  const absl::Duration at_least = coordinator_->barrier_timeout() / 2;
  auto is_backfill = [this](ActorId actor) {
    return actor >= JobGraph::kFirstBackfillActor &&
           actor < JobGraph::kFirstBackfillActor + parallelism_;
  };
  std::map<size_t, WorkerBarrierEvidence> evidence;
  for (const std::unique_ptr<Call>& call : calls_) {
    evidence[call->worker] = {
        .worker = call->worker,
        .emitted = call->last_emitted.load() >= held->value()};
  }
  for (const auto& [upstream, downstream] :
       exchange_.EdgesOutOfPermits(at_least)) {
    if (!is_backfill(downstream)) continue;
    auto it = evidence.find(WorkerOf(downstream));
    if (it != evidence.end()) it->second.stopped_reading = true;
  }
  // Received: every input edge (one at least) sent it long enough ago.
  const absl::Time sent_before = absl::Now() - at_least;
  std::map<size_t, bool> received;
  for (const ExchangeServer::EdgeBarrier& edge : exchange_.EdgeBarriers()) {
    if (!is_backfill(edge.downstream)) continue;
    const bool sent = edge.epoch >= *held && edge.sent_at <= sent_before;
    auto [it, first] = received.try_emplace(WorkerOf(edge.downstream), sent);
    if (!first) it->second = it->second && sent;
  }
  for (const auto& [worker, all_sent] : received) {
    auto it = evidence.find(worker);
    if (it != evidence.end()) it->second.received = all_sent;
  }
  for (const auto& [upstream, downstream] :
       remote_.InputsBlockedBefore(*held, at_least)) {
    if (!is_backfill(upstream)) continue;
    auto it = evidence.find(WorkerOf(upstream));
    if (it != evidence.end()) it->second.output_unread = true;
  }
  std::vector<WorkerBarrierEvidence> workers;
  for (const auto& [worker, known] : evidence) workers.push_back(known);
  std::vector<std::pair<size_t, std::string>> holding = WorkersHoldingBarrier(
      workers,
      absl::StrCat("its actors did not emit barrier ", held->value(),
                   " within the barrier timeout ",
                   absl::FormatDuration(coordinator_->barrier_timeout())),
      at_least);
  MutexLock lock(&mu_);
  holding_ = std::move(holding);
}

void ClusterPlacement::RecordFailure(const absl::Status& status,
                                     BarrierCoordinator& coordinator) {
  {
    MutexLock lock(&mu_);
    if (failure_.ok()) failure_ = status;
  }
  coordinator.Fail(status);
}

void ClusterPlacement::FenceHoldingWorkers() {
  std::vector<std::pair<size_t, std::string>> holding;
  {
    MutexLock lock(&mu_);
    holding.swap(holding_);
  }
  for (const auto& [worker, reason] : holding) {
    checkpoints_.coordinator()
        .FenceWorker(workers_[worker].worker_id, reason)
        .IgnoreError();
  }
}

absl::Status ClusterPlacement::EndRemote() {
  if (!ended_) {
    ended_ = true;
    // No answer of a worker reaches this attempt any more.
    checkpoints_.coordinator().SetBarrierCallback(nullptr);
    if (coordinator_ != nullptr) coordinator_->CollectRemotely(0, nullptr);
    // A failed attempt is recovered from its last checkpoint: nothing of
    // it is checkpointed any more, so its calls are cancelled at once (a
    // hung worker would hold each for end_timeout). A completed one waits
    // for every worker's end: their actors stopped at the stop barrier.
    const bool failed = coordinator_ != nullptr && !coordinator_->error().ok();
    FenceHoldingWorkers();
    for (const std::unique_ptr<Call>& call : calls_) {
      if (!failed) {
        MutexLock lock(&call->mu);
        const absl::Time deadline = absl::Now() + end_timeout_;
        while (!call->ended) {
          const absl::Duration left = deadline - absl::Now();
          if (left <= absl::ZeroDuration()) break;
          call->ended_cv.WaitWithTimeout(&call->mu, left);
        }
      }
      call->cancelled.store(true);
      call->context.TryCancel();
      if (call->thread.joinable()) call->thread.join();
    }
    if (coordinator_ != nullptr) coordinator_->SetFailureCallback(nullptr);
    remote_.CancelInputs();
    // The workers let go of this attempt's edges once their actors went (a
    // held actor keeps its input until its call was cancelled above): the
    // next attempt serves the same edges. Then the edges no worker took (a
    // worker that died before its receive) are dropped.
    exchange_.WaitUntilNoCall(end_timeout_);
    exchange_.ClearUntaken();
  }
  MutexLock lock(&mu_);
  return failure_;
}

}  // namespace backfill
