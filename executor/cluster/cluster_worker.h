// ClusterWorker: a worker that follows the job's leading coordinator. It
// finds the leader through the job's election (job_state.h,
// LeadingCoordinatorAddress), takes part in its checkpoints as a
// CheckpointWorker registered with the worker's lease, and when that stream
// ends (the leader shut down, died or lost the lead) finds the new leader
// and registers again with the same lease, so a standby's checkpoints
// include it. It stops for good once it is fenced (its lease expired: a
// coordinator refuses it with FailedPrecondition) or on Stop().
//
//   ClusterWorkerOptions options;
//   options.etcd = etcd.get();  options.job_prefix = "jobs/7/";
//   options.worker_id = "w1";   options.store = store.get();
//   options.lease_id = lease.id;           // kept alive by the caller
//   BACKFILL_ASSIGN_OR_RETURN(auto worker, ClusterWorker::Start(options));
//   ... the store's data are checkpointed by whichever coordinator leads ...
//
// Thread-safety: every method may be called from any thread but the
// worker's own (on_stopped runs there).
#ifndef EXECUTOR_CLUSTER_CLUSTER_WORKER_H_
#define EXECUTOR_CLUSTER_CLUSTER_WORKER_H_

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
#include "executor/cluster/checkpoint_worker.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

struct ClusterWorkerOptions {
  // The job's etcd and prefix (as the coordinators'). Required; the client
  // is not owned and must outlive the worker.
  EtcdClient* etcd = nullptr;
  std::string job_prefix = "";
  // As CheckpointWorkerOptions: the worker's id, its store, its lease
  // (granted and kept alive by the caller). Required.
  std::string worker_id = "";
  SharedStateStore* store = nullptr;
  int64_t lease_id = 0;
  // Sent with every registration (CheckpointWorkerOptions::endpoints), so
  // whichever coordinator leads learns them, e.g. the worker's actor and
  // exchange addresses. Optional.
  std::map<std::string, std::string> endpoints = {};
  // As CheckpointWorkerOptions::on_inject, with every leader: the barriers
  // to collect (e.g. the worker's ActorWorker's collector). Optional.
  std::function<void(uint64_t attempt_key, EpochPair epoch,
                     std::vector<uint32_t> actors,
                     std::function<void(const absl::Status&)> collected)>
      on_inject = nullptr;
  // Pause before looking for the leader again after a failed attempt (no
  // leader yet, a standby not yet leading, a connection refused). > 0.
  // Default 50 ms.
  absl::Duration retry_interval = absl::Milliseconds(50);
  // Runs once on the worker's thread when it stops for good (fenced, or
  // Stop()), with why. Optional.
  std::function<void(const absl::Status&)> on_stopped = nullptr;
  // Time for retry_interval; nullptr means Clock::Real(). Not owned.
  Clock* clock = nullptr;
};

class ClusterWorker {
 public:
  // Validates the options (InvalidArgument naming a bad one) and starts
  // following on a thread of its own; does not wait for a connection.
  static absl::StatusOr<std::unique_ptr<ClusterWorker>> Start(
      ClusterWorkerOptions options);
  // Stop().
  ~ClusterWorker();
  ClusterWorker(const ClusterWorker&) = delete;
  ClusterWorker& operator=(const ClusterWorker&) = delete;

  // Disconnects from the coordinator (CheckpointWorker::Disconnect) and
  // joins the thread. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // OK while following; once stopped, why: FailedPrecondition ("fenced")
  // when a coordinator refused the lease, Cancelled after Stop().
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);
  // Registrations accepted so far (1 after the first, 2 after following a
  // failover, ...), and a wait for at least `count` of them with the stream
  // open (DeadlineExceeded at the deadline; status() once stopped).
  int registrations() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WaitForRegistrations(int count, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The assignment of the current connection's last SyncRequest (of the
  // last connection once it ended).
  WorkerAssignment assignment() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  ClusterWorker(ClusterWorkerOptions options, Clock& clock);
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // One attempt: find the leader and register. NotFound / Unavailable /
  // DeadlineExceeded are retried; FailedPrecondition is the fence.
  absl::StatusOr<std::unique_ptr<CheckpointWorker>> ConnectToLeader();

  const ClusterWorkerOptions options_;
  Clock& clock_;
  std::thread thread_;

  mutable Mutex mu_;
  CondVar changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  // The current connection; its own methods are thread-safe. Replaced only
  // by the thread, under mu_.
  std::shared_ptr<CheckpointWorker> connection_ ABSL_GUARDED_BY(mu_);
  WorkerAssignment last_assignment_ ABSL_GUARDED_BY(mu_);
  Mutex join_mu_;
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CLUSTER_WORKER_H_
