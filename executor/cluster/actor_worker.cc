#include "executor/cluster/actor_worker.h"

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/cluster/actor_service.grpc.pb.h"
#include "executor/cluster/grpc_remote_actors.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/threaded_driver.h"
#include "grpcpp/grpcpp.h"
#include "storage/cancellation.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace {

using Writer = grpc::ServerWriter<cluster::proto::AttemptEvent>;

// The attempt's events on the call's stream, one writer at a time (the
// actors' threads report progress concurrently). A write to a call that
// ended is dropped: the coordinator no longer listens.
class EventStream final : public ProgressEventSink, public BarrierListener {
 public:
  // Emissions go to `collector` as those of the attempt `attempt_key`.
  EventStream(Writer& writer, BarrierCollector& collector, uint64_t attempt_key)
      : writer_(writer), collector_(collector), attempt_key_(attempt_key) {}

  void Write(const cluster::proto::AttemptEvent& event)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    writer_.Write(event);
  }

  absl::Status Report(const ProgressEvent& event) override {
    cluster::proto::AttemptEvent message;
    cluster::proto::ProgressMessage& progress = *message.mutable_progress();
    progress.set_actor(event.actor);
    progress.set_curr_epoch(event.epoch.curr.value());
    progress.set_prev_epoch(event.epoch.prev.value());
    progress.set_done(event.done);
    progress.set_consumed_epoch(event.consumed_epoch.value());
    progress.set_consumed_rows(event.consumed_rows);
    progress.set_persisted_rows(event.persisted_rows);
    Write(message);
    return absl::OkStatus();
  }

  // The collector answers the coordinator's inject of a barrier once every
  // actor of this worker emitted it (on the control stream: the
  // coordinator collects it, and measures its latency through the backfill
  // from the answers). An actor's end is reported with the attempt's. The
  // newest epoch the actors sealed is the one the attempt's last checkpoint
  // must commit before their table instances go.
  void BackfillEmitted(ActorId actor, const Barrier& barrier,
                       absl::Time) override {
    {
      MutexLock lock(&mu_);
      last_sealed_ = std::max(last_sealed_, barrier.epoch.prev);
    }
    collector_.Emitted(attempt_key_, actor, barrier.epoch);
  }
  Epoch last_sealed() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return last_sealed_;
  }
  void Collected(const Barrier&) override {}
  void ActorEnded(const Actor&) override {}

 private:
  mutable Mutex mu_;
  Writer& writer_ ABSL_GUARDED_BY(mu_);
  BarrierCollector& collector_;
  const uint64_t attempt_key_;
  Epoch last_sealed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

class ActorWorker::Service final
    : public cluster::proto::ActorService::Service {
 public:
  explicit Service(ActorWorker* worker) : worker_(worker) {}

  grpc::Status RunAttempt(grpc::ServerContext* call,
                          const cluster::proto::AttemptRequest* request,
                          Writer* writer) override {
    // One attempt at a time: a later one waits until the one before let
    // its actors go (their table instances must not meet the new ones'
    // checkpoints).
    MutexLock attempt_lock(&attempt_mu_);
    {
      MutexLock lock(&mu_);
      if (shut_down_) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "actor worker shut down");
      }
    }
    // The coordinator gave up on this attempt while it waited for the one
    // before: nothing to run (its Begin would only replace the collector's
    // attempt).
    if (call->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "the attempt was cancelled before it started");
    }
    const std::set<ActorId> actors(request->actors().begin(),
                                   request->actors().end());
    const std::string coordinator = request->coordinator_exchange_address();
    auto remote = std::make_shared<GrpcRemoteActors>(
        [actors](ActorId actor) { return actors.contains(actor); },
        *worker_->exchange_, [coordinator](ActorId) { return coordinator; },
        /*permits=*/16, request->attempt_key());
    // The injects of this attempt kept so far are checked and kept for its
    // actors; an earlier attempt's are dropped.
    const uint64_t attempt_key = request->attempt_key();
    worker_->collector_.Begin(attempt_key,
                              std::set<uint32_t>(actors.begin(), actors.end()));
    EventStream events(*writer, worker_->collector_, attempt_key);
    JobState state;
    state.parallelism = request->parallelism();
    state.rate_limit = RateLimit::FromOptionalU32(
        request->has_rate_limit()
            ? std::optional<uint32_t>(request->rate_limit())
            : std::nullopt);
    if (request->has_rate_limit() && request->rate_limit() == 0) {
      state.rate_limit = RateLimit::Disabled();
      state.paused = true;
    }
    JobGraphContext context;
    context.clock = worker_->options_.clock != nullptr ? worker_->options_.clock
                                                       : &Clock::Real();
    context.listener = &events;
    context.remote = remote.get();
    context.progress_sink = &events;
    absl::Status status;
    SharedStateStore* shared = worker_->options_.shared_store;
    if (shared != nullptr && request->version_id() > shared->VersionId()) {
      // Joined the checkpoints after the attempt's start was committed.
      status = shared->ApplyCheckpoint(
          {request->version_id(), Epoch(request->committed_epoch())});
      if (!status.ok()) {
        status = absl::Status(
            status.code(),
            absl::StrCat("attempt ", request->attempt(),
                         ": cannot read the version it starts from (",
                         request->version_id(), "): ", status.message()));
      }
    }
    if (status.ok() && shared != nullptr) {
      // A checkpoint this worker synced after that version failed (the
      // attempt before this one was recovered from): its sync is forgotten,
      // or this attempt's actors could not start at the committed epoch + 1.
      status =
          shared->AbandonUncommittedSyncs(Epoch(request->committed_epoch()));
      if (!status.ok()) {
        status = absl::Status(
            status.code(),
            absl::StrCat("attempt ", request->attempt(),
                         ": cannot start from the committed epoch ",
                         request->committed_epoch(), ": ", status.message()));
      }
    }
    const uint32_t vnodes =
        static_cast<uint32_t>(worker_->options_.options->upstream.vnode_count);
    if (status.ok() && (state.parallelism < 1 || state.parallelism > vnodes)) {
      status = absl::InvalidArgumentError(
          absl::StrCat("attempt ", request->attempt(), ": parallelism ",
                       state.parallelism, " is not in [1, ", vnodes, "]"));
    }
    absl::StatusOr<std::unique_ptr<JobGraph>> graph =
        status.ok() ? BuildJobGraph(*worker_->options_.store,
                                    *worker_->options_.options, state, context)
                    : absl::StatusOr<std::unique_ptr<JobGraph>>(status);
    if (graph.ok()) {
      {
        MutexLock lock(&mu_);
        running_ = remote;
      }
      cluster::proto::AttemptEvent started;
      started.set_started(true);
      events.Write(started);
      ActorFailureHooks hooks;
      hooks.on_failure = [&events](const absl::Status& error) {
        cluster::proto::AttemptEvent failed;
        failed.mutable_failed()->set_code(static_cast<int32_t>(error.code()));
        failed.mutable_failed()->set_message(std::string(error.message()));
        events.Write(failed);
      };
      // What a failed actor sealed before it failed may still be
      // checkpointed until the coordinator ends the attempt (it cancels
      // this call), or this worker shuts down.
      hooks.hold = [&] {
        const absl::Time hold_deadline =
            context.clock->Now() + worker_->options_.final_commit_timeout;
        while (!call->IsCancelled() && !shutdown_.IsCancelled() &&
               context.clock->Now() < hold_deadline) {
          context.clock->SleepUntil(context.clock->Now() +
                                    absl::Milliseconds(20));
        }
      };
      // The coordinator ended the attempt (it cancelled this call, or its
      // connection went): every actor must end, also one that reads no
      // input while it waits to send on an edge the coordinator never
      // received (its connection failed). Its inputs fail, and so do the
      // sends on this worker's edges.
      Mutex watch_mu;
      CondVar watch_cv;
      bool actors_ended = false;
      std::thread watcher([&] {
        MutexLock lock(&watch_mu);
        while (!actors_ended) {
          if (call->IsCancelled() || shutdown_.IsCancelled()) {
            remote->CancelInputs();
            worker_->exchange_->CancelOutputs();
            return;
          }
          watch_cv.WaitWithTimeout(&watch_mu, absl::Milliseconds(20));
        }
      });
      status = RunActorsThreaded(**graph, *context.clock, hooks);
      {
        MutexLock lock(&watch_mu);
        actors_ended = true;
        watch_cv.SignalAll();
      }
      watcher.join();
      {
        MutexLock lock(&mu_);
        running_ = nullptr;
      }
      if (status.ok()) {
        // Every actor stopped at the stop barrier; its epoch is sealed in
        // this worker's table instances, and only the checkpoint the
        // coordinator makes after collecting that barrier uploads it: the
        // instances (the graph) stay until it is committed here.
        const Epoch sealed = events.last_sealed();
        status = worker_->options_.store->WaitCommitted(
            worker_->options_.options->upstream.table_id, sealed,
            context.clock->Now() + worker_->options_.final_commit_timeout,
            shutdown_, *context.clock);
        if (!status.ok()) {
          status = absl::Status(
              status.code(),
              absl::StrCat(
                  "attempt ", request->attempt(),
                  ": the actors stopped, but epoch ", sealed.value(),
                  " they sealed was not committed: ", status.message()));
        }
      }
    } else {
      status = graph.status();
    }
    remote->CancelInputs();
    worker_->collector_.End(attempt_key);
    cluster::proto::AttemptEvent ended;
    ended.mutable_ended()->set_code(static_cast<int32_t>(status.code()));
    ended.mutable_ended()->set_message(std::string(status.message()));
    events.Write(ended);
    // What the attempt left: edges the coordinator never received (a next
    // attempt adds them again), and the actors.
    worker_->exchange_->ClearUntaken();
    if (graph.ok()) graph->reset();
    return grpc::Status::OK;
  }

  // Ends the running attempt's inputs (its actors then end) and refuses
  // later attempts.
  void Shutdown() {
    std::shared_ptr<GrpcRemoteActors> running;
    {
      MutexLock lock(&mu_);
      shut_down_ = true;
      running = running_;
    }
    if (running != nullptr) running->CancelInputs();
    shutdown_.Cancel();
  }

 private:
  ActorWorker* const worker_;
  Cancellation shutdown_;
  Mutex attempt_mu_;
  Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<GrpcRemoteActors> running_ ABSL_GUARDED_BY(mu_);
};

ActorWorker::ActorWorker(const ActorWorkerOptions& options)
    : options_(options) {}

absl::StatusOr<std::unique_ptr<ActorWorker>> ActorWorker::Start(
    const ActorWorkerOptions& options) {
  if (options.store == nullptr || options.options == nullptr) {
    return absl::InvalidArgumentError(
        "ActorWorkerOptions.store and .options are required");
  }
  const size_t colon = options.listen_address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("ActorWorkerOptions.listen_address must be host:port: '",
                     options.listen_address, "'"));
  }
  std::unique_ptr<ActorWorker> worker(new ActorWorker(options));
  absl::StatusOr<std::unique_ptr<ExchangeServer>> exchange =
      ExchangeServer::Start({.listen_address = options.exchange_listen_address,
                             .keepalive = options.keepalive});
  if (!exchange.ok()) return exchange.status();
  worker->exchange_ = *std::move(exchange);
  worker->service_ = std::make_unique<Service>(worker.get());
  grpc::ServerBuilder builder;
  ConfigureKeepalive(builder, options.keepalive);
  int port = 0;
  builder.AddListeningPort(options.listen_address,
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(worker->service_.get());
  worker->server_ = builder.BuildAndStart();
  if (worker->server_ == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "actor worker cannot listen on '", options.listen_address, "'"));
  }
  worker->address_ =
      absl::StrCat(options.listen_address.substr(0, colon), ":", port);
  return worker;
}

ActorWorker::~ActorWorker() { Shutdown(); }

void ActorWorker::Shutdown() {
  if (service_ != nullptr) service_->Shutdown();
  if (exchange_ != nullptr) exchange_->Shutdown();
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
}

}  // namespace backfill
