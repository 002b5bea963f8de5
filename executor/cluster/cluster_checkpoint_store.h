// ClusterCheckpointStore: the StateStore of the coordinator's process of a
// job split over processes. Reads, writes and commit notifications are its
// own SharedStateStore's (the committer's); a Checkpoint(e) is a checkpoint
// of the whole job: CheckpointCoordinator::Checkpoint(e), in which every
// worker syncs e, the committer syncs its own data (the coordinator must run
// with commit_own_data), one version commits all of them and every worker
// applies it. So the runtime's coordinator (BarrierCoordinator) checkpoints
// the job over every process without knowing there are several.
//
//   options.store = committer.get();  options.commit_own_data = true;
//   BACKFILL_ASSIGN_OR_RETURN(auto checkpoints,
//   CheckpointCoordinator::Start(options)); ClusterCheckpointStore
//   store(*committer, *checkpoints); RunStreamingJobWithDriver(store, ...);
//
// Thread-safety: as the committer's store; checkpoints run one at a time.
#ifndef EXECUTOR_CLUSTER_CLUSTER_CHECKPOINT_STORE_H_
#define EXECUTOR_CLUSTER_CLUSTER_CHECKPOINT_STORE_H_

#include <cstdint>
#include <set>

#include "absl/base/thread_annotations.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "storage/forwarding_state_store.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class ClusterCheckpointStore final : public ForwardingStateStore {
 public:
  // REQUIRES: both outlive this store; `coordinator` commits through
  // `committer` with commit_own_data.
  ClusterCheckpointStore(SharedStateStore& committer,
                         CheckpointCoordinator& coordinator)
      : ForwardingStateStore(&committer), coordinator_(coordinator) {}

  // The job's checkpoint over every process. Errors: the coordinator's
  // (a worker that did not sync fails it and nothing is committed), but
  // Unavailable for its DeadlineExceeded (a worker silent past
  // reply_timeout), which the runtime would not recover from. The workers
  // it names silent (SilentWorkers: others replied) are fenced
  // (CheckpointCoordinator::FenceWorker), named in the message.
  absl::Status Checkpoint(Epoch epoch) override ABSL_LOCKS_EXCLUDED(mu_);

  // From now on every checkpoint must hold these registrations' data
  // (CheckpointCoordinator::LiveWorker::session): those of the workers that
  // run the attempt's actors (ClusterPlacement sets them as it starts
  // them). A checkpoint without one of them would commit the view's rows
  // without the progress its actors sealed.
  void RequireSessions(std::set<uint64_t> sessions) ABSL_LOCKS_EXCLUDED(mu_);

  // The coordinator of the job's checkpoints.
  CheckpointCoordinator& coordinator() const { return coordinator_; }

 private:
  CheckpointCoordinator& coordinator_;
  Mutex mu_;
  std::set<uint64_t> required_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CLUSTER_CHECKPOINT_STORE_H_
