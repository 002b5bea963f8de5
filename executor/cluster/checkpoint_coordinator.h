// CheckpointCoordinator: the coordinator of checkpoints over several worker
// processes that share one SharedStateStore (issue 19, first slice). A gRPC
// server (checkpoint.proto) that workers (checkpoint_worker.h) connect to
// with one bidirectional stream each; a checkpoint asks every live worker to
// sync the epoch, commits their sync results as one version through the
// coordinator's own store (the committer), and has every worker apply it.
// The protocol step by step: executor/cluster/README.md.
//
//   CheckpointCoordinatorOptions options;
//   options.store = committer.get();   // same etcd prefix as the workers'
//   BACKFILL_ASSIGN_OR_RETURN(auto coordinator,
//                             CheckpointCoordinator::Start(options));
//   // workers connect to coordinator->address() ...
//   BACKFILL_ASSIGN_OR_RETURN(CheckpointResult result,
//                             coordinator->Checkpoint(Epoch(3)));
//
// With a control plane (options.etcd set; README.md, "The control plane"):
// workers register with an etcd lease and are recorded in the job's state
// (job_state.h) with their vnode assignment; a worker whose lease expired
// is fenced; several coordinators campaign (etcd election) and only the
// leader serves and commits, through a store it opens when it takes over:
//
//   options.etcd = etcd.get();  options.job_prefix = "jobs/7/";
//   options.lease_id = lease.id;                // kept alive by the caller
//   options.open_store = [] { return SharedStateStore::Open(...); };
//
// Thread-safety: every method may be called from any thread; checkpoints
// run one at a time (a second Checkpoint waits for the first).
#ifndef EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_
#define EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/cluster/grpc_keepalive.h"
#include "executor/cluster/job_state.h"
#include "storage/epoch.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_election.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace backfill {

struct CheckpointCoordinatorOptions {
  // The committer's store: opened on the same etcd prefix and object store
  // as the workers' stores (its own cache directory). Required; not owned;
  // must outlive the coordinator. Only the coordinator commits through it.
  // Required without `etcd`; must be null with it (open_store instead).
  SharedStateStore* store = nullptr;
  // The address to listen on, host:port; port 0 picks a free port (see
  // address()). Default "127.0.0.1:0".
  std::string listen_address = "127.0.0.1:0";
  // How long a checkpoint waits for every worker's sync replies, and then
  // again for their apply replies. > 0. Default 30 s.
  absl::Duration reply_timeout = absl::Seconds(30);
  // Whether the committer's store holds data of its own (the process that
  // runs the job's source and view): each checkpoint then also syncs it and
  // commits its result, first, with the workers' in the same version, and
  // a checkpoint with no worker connected commits it alone. Default false:
  // the committer only commits (its store must hold no sealed data).
  bool commit_own_data = false;
  // Time for reply_timeout and poll_interval; nullptr means Clock::Real().
  // Not owned; must outlive the coordinator.
  Clock* clock = nullptr;
  // Pings on the workers' connections (grpc_keepalive.h): the stream of a
  // worker that vanished without closing it ends within interval + timeout
  // (the worker leaves).
  Keepalive keepalive = {};

  // ---- The control plane (all of the following, or none).
  // The job's etcd. Default nullptr: no leases, no assignment, no election.
  // Not owned; must outlive the coordinator.
  EtcdClient* etcd = nullptr;
  // The job's etcd prefix (job_state.h's keys), ending in '/'.
  std::string job_prefix = "";
  // This coordinator's election lease, granted and kept alive by the caller
  // (EtcdLeaseKeeper). Once it ends, so does the leadership (for good).
  int64_t lease_id = 0;
  // Vnodes split over the workers when the job's state is first written
  // (a stored state keeps its own). > 0. Default 256.
  uint32_t num_vnodes = 256;
  // Opens the committer's store when this coordinator becomes the leader
  // (opening loads the current version). Called once.
  std::function<absl::StatusOr<std::unique_ptr<SharedStateStore>>()>
      open_store = nullptr;
  // How often the coordinator checks its leadership (a standby: whether it
  // leads now) and its workers' leases. > 0. Default 100 ms.
  absl::Duration poll_interval = absl::Milliseconds(100);

  // Called once for each worker fenced (its lease expired, or FenceWorker),
  // with why, on the fencing thread with no lock held. Optional.
  std::function<void(const std::string& worker_id, const absl::Status& why)>
      on_fence = nullptr;
};

// A committed checkpoint.
struct CheckpointResult {
  SharedStateStore::CommittedVersion version;
  // The workers whose sync results the version holds, in registration order.
  std::vector<std::string> workers;
  // Those of them that did not confirm applying the version (disconnected,
  // an apply error, no reply in time), with why. The version is committed
  // regardless: they read it once they apply it or a later one.
  std::map<std::string, absl::Status> not_applied;
};

// The workers a failed CheckpointCoordinator::Checkpoint names as silent:
// asked, still connected, but with no sync reply within reply_timeout while
// another worker asked did reply. Empty for any other status, and when
// every worker asked was silent (the coordinator may as well be the one
// cut off).
std::vector<std::string> SilentWorkers(const absl::Status& status);

class CheckpointCoordinator {
 public:
  // Validates the options and starts the server; with `etcd`, campaigns
  // (the election value is address()) and checks leadership and leases
  // every poll_interval on a thread of its own. Until it leads, it refuses
  // registrations (Unavailable) and checkpoints (FailedPrecondition).
  // Errors: InvalidArgument naming a bad option; Unavailable if the address
  // cannot be bound; the campaign's etcd errors (NotFound: lease gone).
  static absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> Start(
      const CheckpointCoordinatorOptions& options);
  // Shutdown(). REQUIRES: no other call of this object in progress.
  ~CheckpointCoordinator();
  CheckpointCoordinator(const CheckpointCoordinator&) = delete;
  CheckpointCoordinator& operator=(const CheckpointCoordinator&) = delete;

  // The address workers connect to, host:port (the bound port if the
  // options said 0).
  std::string address() const;

  // The committer's store: options.store, or with `etcd` the one open_store
  // opened when this coordinator took over (nullptr until then). Valid as
  // long as the coordinator, or until ReopenStore.
  SharedStateStore* store() const ABSL_LOCKS_EXCLUDED(mu_);

  // With `etcd`, leading: closes the committer's store (after its pending
  // maintenance) and opens it again with open_store, which loads the
  // current version; returns the new one, store() from now on. For a
  // recovery: a store whose commit failed refuses every later commit
  // (SharedStateStore::CommitCheckpoint), and one that another committer's
  // version overtook (a deposed leader's last compaction) is fenced until
  // it loads that version. REQUIRES: no checkpoint in progress and nothing
  // alive on the old store (between a job's attempts: the runtime's
  // reopen_store). Errors: FailedPrecondition unless leading with
  // open_store; open_store's (store() is then nullptr until a later call
  // succeeds).
  absl::StatusOr<SharedStateStore*> ReopenStore() ABSL_LOCKS_EXCLUDED(mu_);

  // The ids of the registered workers whose streams are open, in
  // registration order.
  std::vector<std::string> LiveWorkers() const ABSL_LOCKS_EXCLUDED(mu_);
  // The same workers with the endpoints each registered with
  // (CheckpointWorkerOptions::endpoints).
  struct LiveWorker {
    std::string worker_id;
    std::map<std::string, std::string> endpoints;
    // The registration (a worker that registers again has a new one).
    uint64_t session = 0;
  };
  std::vector<LiveWorker> LiveWorkerEndpoints() const ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until at least `count` workers are live. Errors: DeadlineExceeded
  // (with the live ones) at `deadline`; Unavailable after Shutdown.
  absl::Status WaitForWorkers(size_t count, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);

  // With `etcd`: whether this coordinator leads (took over and has not
  // lost its candidacy since); and a wait for it (DeadlineExceeded at the
  // deadline; FailedPrecondition once it can never lead: its candidacy is
  // gone or taking over failed, with why; Unavailable after Shutdown).
  // Without `etcd` it always leads.
  bool IsLeading() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WaitUntilLeading(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // With `etcd`: writes `put` only while this coordinator leads (one
  // transaction fenced by its candidacy, EtcdElection::Fence); returns
  // whether it was written. For what only the leader may record (e.g. the
  // end of the job), which a leader deposed a moment ago must not. Errors:
  // FailedPrecondition without `etcd`; etcd's.
  absl::StatusOr<bool> PutIfLeading(EtcdPut put) ABSL_LOCKS_EXCLUDED(mu_);

  // With `etcd`, while leading: the job's state (live workers with their
  // leases, the vnode assignment) as this coordinator last wrote it to etcd.
  // nullopt otherwise.
  std::optional<ClusterJobState> State() const ABSL_LOCKS_EXCLUDED(state_mu_);

  // Fences the live worker `worker_id` now, as if its lease had expired:
  // its stream is ended (what it sends is never read; a checkpoint waiting
  // for it fails at once, with `why`) and it is no longer live. With
  // `etcd`, while leading, it is also dropped from the job's state (its
  // vnodes are split over the others, the assignment version bumped) and
  // its membership key deleted, and its lease is revoked and refused for
  // good (this coordinator and a successor refuse it). For a worker that
  // keeps its lease but holds up the job (its actors hang: a barrier
  // timeout). Without `etcd` the worker id may register again (a new
  // session). Errors: NotFound if no live worker has the id (nothing
  // changes); FailedPrecondition with `etcd` when not leading; the job
  // state's write errors (nothing changes).
  absl::Status FenceWorker(const std::string& worker_id, absl::string_view why)
      ABSL_LOCKS_EXCLUDED(state_mu_, mu_);

  // One checkpoint of `epoch`: every worker live at the call is asked to
  // sync it; once all of them replied, their results are committed as one
  // version (CommitCheckpoint on the store, in registration order) and
  // every one of them is told to apply it; returns once they all confirmed
  // or reply_timeout passed (CheckpointResult::not_applied). Workers that
  // register during the call take part from the next checkpoint.
  // Errors (nothing committed; the workers' uploads stay invisible, and
  // their sealed data are synced again by the next checkpoint):
  // FailedPrecondition if no worker is live (unless commit_own_data) or
  // epoch <= the store's
  // committed epoch; Unavailable naming every worker whose stream ended
  // before its sync reply (it is no longer live); DeadlineExceeded naming
  // those that did not reply within reply_timeout; a worker's sync error
  // with its code, naming it; the store's commit errors (FailedPrecondition
  // if another committer took over).
  // With `etcd`, the workers asked are those of the job's state (in its
  // order), each told its assignment version and vnodes. Also:
  // FailedPrecondition if this coordinator does not lead (also checked
  // right before the commit) or a worker synced with another assignment
  // version; Unavailable naming a worker of the state whose stream is not
  // open (e.g. not yet reconnected after a failover) or that was fenced
  // while asked (its lease expired: the checkpoint fails at once).
  // `required_sessions`: registrations (LiveWorker::session) whose data the
  // checkpoint must hold, e.g. those of the workers that ran actors in the
  // epochs it commits: Unavailable, nothing committed, if one of them is no
  // longer live (its sealed data are lost with it; a worker that registered
  // again has another session).
  absl::StatusOr<CheckpointResult> Checkpoint(
      Epoch epoch, const std::set<uint64_t>& required_sessions = {})
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_, state_mu_);

  // ---- Barriers (checkpoint.proto's InjectBarrier, BarrierCollected).
  // Tells the live registration `session` (LiveWorker::session) that the
  // barrier of `epoch` was injected into the attempt whose key is
  // `attempt_key` (the worker's RunAttempt call carries it): it answers once
  // each of `actors` (which it runs in that attempt) emitted it; the
  // answer reaches the barrier callback. Errors: Unavailable naming the
  // worker if the registration is not live (it left, was fenced, or the
  // coordinator shut down) or the stream broke.
  absl::Status InjectBarrier(uint64_t session, uint64_t attempt_key,
                             EpochPair epoch, bool checkpoint,
                             const std::vector<uint32_t>& actors)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A worker's answer to an inject: OK once its actors emitted the barrier,
  // else why it cannot collect it (with the worker's code).
  struct BarrierCollection {
    uint64_t session = 0;
    std::string worker_id;
    uint64_t attempt_key = 0;
    EpochPair epoch;
    absl::Status status;
  };
  // `callback` gets every answer of a live registration (what a fenced
  // worker sends is never read), on the thread of its stream, with none of
  // the coordinator's locks held. Null drops them. Once this returns, no
  // call of the previous callback is running. The callback must not call
  // SetBarrierCallback.
  void SetBarrierCallback(
      std::function<void(const BarrierCollection&)> callback)
      ABSL_LOCKS_EXCLUDED(barrier_mu_);

  // Closes every worker's stream, stops the server and fails a checkpoint
  // waiting for replies (Unavailable); with `etcd`, resigns (a standby takes
  // over) and leaves the job's state as it is (the workers' leases decide).
  // Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_, state_mu_, shutdown_mu_);

 private:
  class Service;
  struct Session;
  // What a worker replied to the current checkpoint's request.
  struct Reply {
    absl::Status status;
    std::vector<std::string> descriptors;  // Of a Synced.
    uint64_t assignment_version = 0;       // Of a Synced.
  };
  enum class Phase { kIdle, kSync, kApply };
  enum class Role { kStandby, kLeading, kDeposed };

  CheckpointCoordinator(const CheckpointCoordinatorOptions& options,
                        Clock& clock);

  // The handler of one worker's stream (Service::Control).
  absl::Status Serve(std::shared_ptr<Session> session)
      ABSL_LOCKS_EXCLUDED(state_mu_, mu_);
  // Waits until every session in `asked` replied in the current phase or
  // is gone (or the deadline, or shutdown).
  void WaitForReplies(const std::vector<std::shared_ptr<Session>>& asked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why `session` has no reply in the current phase (`what`: "sync",
  // "apply"): shut down, disconnected, or no reply in time.
  absl::Status MissingReply(const Session& session, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- The control plane (options_.etcd set).
  // Why a worker may not register now (shut down; with a control plane:
  // not leading, its lease fenced; a live session with its id), or OK.
  absl::Status CheckCanRegister(const std::string& worker_id,
                                int64_t lease_id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a registering worker in the job's state (or, with the lease it
  // is recorded with, checks the lease is alive: a reconnect).
  absl::Status JoinLocked(const std::string& worker_id, int64_t lease_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `next` (and the membership keys to put / delete) fenced by the
  // election and the state's last revision; then it is state_.
  absl::Status WriteState(ClusterJobState next, std::vector<EtcdPut> puts,
                          std::vector<std::string> deletes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_mu_);
  // Drops a worker from the state (its stream ended) unless the coordinator
  // shut down or does not lead.
  void Leave(const std::string& worker_id, int64_t lease_id)
      ABSL_LOCKS_EXCLUDED(state_mu_, mu_);
  // The control thread: every poll_interval, TakeOver if it leads now,
  // Depose if it lost the lead, else FenceExpired.
  void Control() ABSL_LOCKS_EXCLUDED(state_mu_, mu_);
  absl::Status TakeOver() ABSL_LOCKS_EXCLUDED(state_mu_, mu_);
  void Depose(const absl::Status& why) ABSL_LOCKS_EXCLUDED(mu_);
  // Fences every worker of the state whose membership key (bound to its
  // lease) is gone: drops it from the state and the live set, ends its
  // stream, refuses its lease from then on.
  absl::Status FenceExpired() ABSL_LOCKS_EXCLUDED(state_mu_, mu_);
  // Ends the live session of `worker_id` under `lease_id` (if any): its
  // stream is cancelled, it is no longer live, and `why` is what a
  // checkpoint waiting for it reports.
  void EndFencedSessionLocked(const std::string& worker_id, int64_t lease_id,
                              absl::Status why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CheckpointCoordinatorOptions options_;
  Clock& clock_;
  std::unique_ptr<EtcdElection> election_;
  EtcdCandidacy candidacy_;  // Set by Start, constant after.
  std::thread control_thread_;

  // Serializes the job state's writes. Taken before mu_.
  mutable Mutex state_mu_;
  ClusterJobState state_ ABSL_GUARDED_BY(state_mu_);
  int64_t state_revision_ ABSL_GUARDED_BY(state_mu_) = 0;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  Mutex checkpoint_mu_;

  mutable Mutex mu_;
  CondVar changed_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  Role role_ ABSL_GUARDED_BY(mu_) = Role::kStandby;
  absl::Status deposed_ ABSL_GUARDED_BY(mu_);  // Why, in Role::kDeposed.
  // The committer's store: options_.store, or owned_store_ once leading.
  SharedStateStore* store_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::unique_ptr<SharedStateStore> owned_store_ ABSL_GUARDED_BY(mu_);
  // Leases of fenced workers (refused for good), and why each fenced
  // session was dropped (by session number).
  std::set<int64_t> fenced_leases_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Status> fenced_ ABSL_GUARDED_BY(mu_);
  uint64_t next_session_ ABSL_GUARDED_BY(mu_) = 1;
  // Open streams of registered workers, by registration number.
  std::map<uint64_t, std::shared_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);
  // The checkpoint in progress: its epoch, phase, the sessions asked and
  // their replies so far.
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kIdle;
  Epoch epoch_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> asked_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Reply> replies_ ABSL_GUARDED_BY(mu_);

  // Held through Shutdown, so that a second call returns once it is done.
  Mutex shutdown_mu_;

  // Held while the barrier callback runs. Taken with no other lock held.
  Mutex barrier_mu_;
  std::function<void(const BarrierCollection&)> barrier_callback_
      ABSL_GUARDED_BY(barrier_mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_
