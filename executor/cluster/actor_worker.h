// ActorWorker: the actors of a job in a worker process (issue 19). A gRPC
// server (actor_service.proto) through which the coordinator's process
// runs this worker's share of each attempt's backfill actors: it builds a
// graph of the job for the attempt with only those actors local
// (BuildJobGraph with GrpcRemoteActors: their input from the source and
// their output to the view cross the data exchange), runs them
// (RunActorsThreaded) and streams their progress events and their end back.
// Its barrier collector hears every barrier its actors emit; the worker's
// control stream (CheckpointWorkerOptions::on_inject) hands it the
// coordinator's injects, and it answers each once the actors emitted it.
// Its exchange server lives as long as the worker, so its address is known
// before any attempt.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto worker, ActorWorker::Start(
//       {.store = worker_store, .options = &job_options}));
//   // the coordinator's placement: worker->address(),
//   worker->exchange_address()
//   checkpoint_options.on_inject = worker->collector().InjectHandler();
//
// The store is the worker's own (a SharedStateStore of the job's shared
// store, checkpointed by a CheckpointWorker); `options` are the job's, as
// the coordinator runs it.
//
// Thread-safety: thread-safe.
#ifndef EXECUTOR_CLUSTER_ACTOR_WORKER_H_
#define EXECUTOR_CLUSTER_ACTOR_WORKER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/cluster/barrier_collector.h"
#include "executor/cluster/grpc_keepalive.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/streaming_job_options.h"
#include "storage/shared/shared_state_store.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace backfill {

struct ActorWorkerOptions {
  // Where the actor service listens, host:port (port 0: a free one).
  std::string listen_address = "127.0.0.1:0";
  // Where its exchange server listens.
  std::string exchange_listen_address = "127.0.0.1:0";
  // The worker's store. Required; not owned; must outlive the worker.
  StateStore* store = nullptr;
  // `store` itself when it is a store object of a shared store (else null):
  // an attempt first applies the committed version it starts from if this
  // store has not read it yet.
  SharedStateStore* shared_store = nullptr;
  // The job. Required; not owned; must outlive the worker.
  const StreamingJobOptions* options = nullptr;
  // The actors' clock; nullptr means Clock::Real().
  Clock* clock = nullptr;
  // After an attempt's actors stopped at their stop barrier, how long the
  // worker keeps them (their table instances, whose last epoch is sealed but
  // not yet synced) for the coordinator's final checkpoint to commit that
  // epoch; past it the attempt ends with DeadlineExceeded.
  absl::Duration final_commit_timeout = absl::Seconds(60);
  // Pings on the coordinator's connections to the actor service and the
  // exchange server (grpc_keepalive.h): an attempt whose coordinator
  // vanished without closing them is cancelled within interval + timeout,
  // so the next leader's attempt does not wait for it.
  Keepalive keepalive = {};
};

class ActorWorker {
 public:
  // Errors: InvalidArgument for a missing store or options or an address
  // without a port; Unavailable when it cannot listen.
  static absl::StatusOr<std::unique_ptr<ActorWorker>> Start(
      const ActorWorkerOptions& options);
  ~ActorWorker();  // Shutdown()

  ActorWorker(const ActorWorker&) = delete;
  ActorWorker& operator=(const ActorWorker&) = delete;

  const std::string& address() const { return address_; }
  const std::string& exchange_address() const { return exchange_->address(); }
  // The barriers of the running attempt: its actors' emissions reach it;
  // hand it the coordinator's injects.
  BarrierCollector& collector() { return collector_; }

  // Stops serving: a running attempt's call ends (its actors end with their
  // exchange edges, which fail). Idempotent.
  void Shutdown();

 private:
  class Service;
  explicit ActorWorker(const ActorWorkerOptions& options);

  const ActorWorkerOptions options_;
  std::unique_ptr<ExchangeServer> exchange_;
  BarrierCollector collector_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_ACTOR_WORKER_H_
