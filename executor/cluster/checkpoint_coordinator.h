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
// Thread-safety: every method may be called from any thread; checkpoints
// run one at a time (a second Checkpoint waits for the first).
#ifndef EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_
#define EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "storage/epoch.h"
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
  SharedStateStore* store = nullptr;
  // The address to listen on, host:port; port 0 picks a free port (see
  // address()). Default "127.0.0.1:0".
  std::string listen_address = "127.0.0.1:0";
  // How long a checkpoint waits for every worker's sync replies, and then
  // again for their apply replies. > 0. Default 30 s.
  absl::Duration reply_timeout = absl::Seconds(30);
  // Time for reply_timeout; nullptr means Clock::Real(). Not owned; must
  // outlive the coordinator.
  Clock* clock = nullptr;
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

class CheckpointCoordinator {
 public:
  // Validates the options and starts the server.
  // Errors: InvalidArgument naming a bad option; Unavailable if the address
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> Start(
      const CheckpointCoordinatorOptions& options);
  // Shutdown(). REQUIRES: no other call of this object in progress.
  ~CheckpointCoordinator();
  CheckpointCoordinator(const CheckpointCoordinator&) = delete;
  CheckpointCoordinator& operator=(const CheckpointCoordinator&) = delete;

  // The address workers connect to, host:port (the bound port if the
  // options said 0).
  std::string address() const;

  // The ids of the registered workers whose streams are open, in
  // registration order.
  std::vector<std::string> LiveWorkers() const ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until at least `count` workers are live. Errors: DeadlineExceeded
  // (with the live ones) at `deadline`; Unavailable after Shutdown.
  absl::Status WaitForWorkers(size_t count, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);

  // One checkpoint of `epoch`: every worker live at the call is asked to
  // sync it; once all of them replied, their results are committed as one
  // version (CommitCheckpoint on the store, in registration order) and
  // every one of them is told to apply it; returns once they all confirmed
  // or reply_timeout passed (CheckpointResult::not_applied). Workers that
  // register during the call take part from the next checkpoint.
  // Errors (nothing committed; the workers' uploads stay invisible, and
  // their sealed data are synced again by the next checkpoint):
  // FailedPrecondition if no worker is live or epoch <= the store's
  // committed epoch; Unavailable naming every worker whose stream ended
  // before its sync reply (it is no longer live); DeadlineExceeded naming
  // those that did not reply within reply_timeout; a worker's sync error
  // with its code, naming it; the store's commit errors (FailedPrecondition
  // if another committer took over).
  absl::StatusOr<CheckpointResult> Checkpoint(Epoch epoch)
      ABSL_LOCKS_EXCLUDED(mu_, checkpoint_mu_);

  // Closes every worker's stream, stops the server and fails a checkpoint
  // waiting for replies (Unavailable). Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_, shutdown_mu_);

 private:
  class Service;
  struct Session;
  // What a worker replied to the current checkpoint's request.
  struct Reply {
    absl::Status status;
    std::vector<std::string> descriptors;  // Of a Synced.
  };
  enum class Phase { kIdle, kSync, kApply };

  CheckpointCoordinator(const CheckpointCoordinatorOptions& options,
                        Clock& clock);

  // The handler of one worker's stream (Service::Control).
  absl::Status Serve(std::shared_ptr<Session> session) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until every session in `asked` replied in the current phase or
  // is gone (or the deadline, or shutdown).
  void WaitForReplies(const std::vector<std::shared_ptr<Session>>& asked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why `session` has no reply in the current phase (`what`: "sync",
  // "apply"): shut down, disconnected, or no reply in time.
  absl::Status MissingReply(const Session& session, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CheckpointCoordinatorOptions options_;
  Clock& clock_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  Mutex checkpoint_mu_;

  mutable Mutex mu_;
  CondVar changed_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
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
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CHECKPOINT_COORDINATOR_H_
