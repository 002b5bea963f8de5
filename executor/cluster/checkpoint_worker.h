// CheckpointWorker: a worker process's side of the checkpoint protocol
// (checkpoint.proto, executor/cluster/README.md). It opens one stream to the
// coordinator (checkpoint_coordinator.h), registers, and from then on, on
// its own thread, answers each request with its store: "sync epoch e" with
// SharedStateStore::SyncCheckpoint(e)'s result, "version v committed" with
// ApplyCheckpoint(v) (after which the store's committed epoch is v's and it
// reads every worker's rows).
//
//   CheckpointWorkerOptions options;
//   options.coordinator_address = "10.0.0.7:4711";
//   options.worker_id = "worker-2";
//   options.store = store.get();       // same etcd prefix as the coordinator's
//   BACKFILL_ASSIGN_OR_RETURN(auto worker, CheckpointWorker::Connect(options));
//   ... write and seal epochs through the store; the coordinator checkpoints
//   them; store->WaitCommitted(...) sees them committed ...
//
// Thread-safety: every method may be called from any thread but the
// worker's own (which runs the store's commit listeners: a listener must
// not call Disconnect).
#ifndef EXECUTOR_CLUSTER_CHECKPOINT_WORKER_H_
#define EXECUTOR_CLUSTER_CHECKPOINT_WORKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/cluster/grpc_keepalive.h"
#include "storage/epoch.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace cluster::proto {
class InjectBarrier;
}  // namespace cluster::proto

// The vnodes a worker runs with (from the coordinator's last SyncRequest):
// [first_vnode, end_vnode) of assignment `version` (0: none yet, or a
// coordinator without a control plane).
struct WorkerAssignment {
  uint64_t version = 0;
  uint32_t first_vnode = 0;
  uint32_t end_vnode = 0;

  bool operator==(const WorkerAssignment&) const = default;
};

struct CheckpointWorkerOptions {
  // The coordinator's address, host:port. Required.
  std::string coordinator_address;
  // This worker's id, unique among the coordinator's live workers.
  // Required, non-empty.
  std::string worker_id;
  // The worker's store: opened on the same etcd prefix and object store as
  // the coordinator's (its own cache directory). Required; not owned; must
  // outlive the worker. Its checkpoints are the coordinator's: do not call
  // its Checkpoint.
  SharedStateStore* store = nullptr;
  // The etcd lease this worker takes part under, granted and kept alive by
  // the caller (EtcdLeaseKeeper) for as long as the worker runs: required
  // by a coordinator with a control plane, which fences the worker once the
  // lease expires (its stream ends; the lease is refused from then on).
  // 0 (default): none.
  int64_t lease_id = 0;
  // How long Connect waits for the connection to the coordinator. > 0.
  // Default 10 s. (gRPC's deadlines use real time.) The answer to the
  // registration is then awaited without a deadline: the coordinator answers
  // as soon as it reads it.
  absl::Duration connect_timeout = absl::Seconds(10);
  // How long Disconnect waits for the coordinator to end the call after
  // this worker half-closed it, before cancelling it. > 0. Default 5 s.
  absl::Duration disconnect_timeout = absl::Seconds(5);
  // Time for disconnect_timeout and WaitUntilEnded; nullptr means
  // Clock::Real(). Not owned; must outlive the worker.
  Clock* clock = nullptr;
  // Sent with the registration (CheckpointCoordinator::LiveWorkerEndpoints):
  // the worker's other services by name, e.g. {"actor": ..., "exchange":
  // ...} of its ActorWorker.
  std::map<std::string, std::string> endpoints = {};
  // Pings on the connection to the coordinator (grpc_keepalive.h): a
  // coordinator that vanished without closing it (its machine died) ends
  // the stream within interval + timeout, as one that closed it does.
  Keepalive keepalive = {};
  // The barriers the coordinator injects (checkpoint.proto's
  // InjectBarrier): called on the worker's thread for each, with the
  // attempt's key (actor_service.proto's AttemptRequest.attempt_key), the
  // barrier's epochs and the actors to collect it from.
  // `collected` answers BarrierCollected with its status (OK: every actor
  // emitted it), from any thread, once; after the stream ended it does
  // nothing. Typically the worker's ActorWorker's BarrierCollector::Inject.
  // Null (a worker that runs no actors): each inject is answered at once
  // with FailedPrecondition.
  std::function<void(uint64_t attempt_key, EpochPair epoch,
                     std::vector<uint32_t> actors,
                     std::function<void(const absl::Status&)> collected)>
      on_inject = nullptr;
};

class CheckpointWorker {
 public:
  // Connects, registers and starts answering on a thread of its own.
  // Errors: InvalidArgument naming a bad option; Unavailable or
  // DeadlineExceeded if the coordinator cannot be reached in time;
  // AlreadyExists if a live worker has the same id.
  static absl::StatusOr<std::unique_ptr<CheckpointWorker>> Connect(
      const CheckpointWorkerOptions& options);
  // Disconnect(). REQUIRES: no other call of this object in progress.
  ~CheckpointWorker();
  CheckpointWorker(const CheckpointWorker&) = delete;
  CheckpointWorker& operator=(const CheckpointWorker&) = delete;

  // Leaves: the coordinator drops this worker (a checkpoint it has not
  // answered fails), and the thread is joined. An answer in progress (its
  // sync or apply) finishes and is sent first; later requests are not
  // answered. The stream is half-closed, so that the coordinator reads
  // everything sent before; if it has not ended the call within
  // disconnect_timeout, the call is cancelled. Idempotent.
  void Disconnect() ABSL_LOCKS_EXCLUDED(mu_, join_mu_);

  // OK while the stream is open; once it ended, why: Cancelled after
  // Disconnect, else the coordinator's status (e.g. Unavailable when it shut
  // down or the connection broke), naming the worker and the coordinator.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);
  // The assignment of the last SyncRequest (the one the worker runs with;
  // it answers with its version).
  WorkerAssignment assignment() const ABSL_LOCKS_EXCLUDED(mu_);

  // Blocks until the stream ended and returns status(); at `deadline`,
  // DeadlineExceeded if it is still open.
  absl::Status WaitUntilEnded(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Connection;
  class Outbox;

  CheckpointWorker(const CheckpointWorkerOptions& options,
                   std::unique_ptr<Connection> connection);
  // The thread: reads requests and answers them until the stream ends.
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // An InjectBarrier: hands it to on_inject with its answer.
  void Inject(const cluster::proto::InjectBarrier& inject);

  const CheckpointWorkerOptions options_;
  const std::unique_ptr<Connection> connection_;
  // Every write to the stream (the thread's answers, the barriers'
  // collections from other threads, the half-close) goes through it.
  const std::shared_ptr<Outbox> outbox_;
  std::thread thread_;

  mutable Mutex mu_;
  CondVar changed_;
  // The thread is answering a request (and will write its reply).
  bool answering_ ABSL_GUARDED_BY(mu_) = false;
  // The thread is still reading (it has not started finishing the call).
  bool reading_ ABSL_GUARDED_BY(mu_) = true;
  // The call is finished and status_ final.
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool disconnected_ ABSL_GUARDED_BY(mu_) = false;
  WorkerAssignment assignment_ ABSL_GUARDED_BY(mu_);
  // Held while joining the thread, so that every Disconnect returns after it.
  Mutex join_mu_;
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CHECKPOINT_WORKER_H_
