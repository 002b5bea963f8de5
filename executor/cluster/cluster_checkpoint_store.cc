#include "executor/cluster/cluster_checkpoint_store.h"

#include <utility>

namespace backfill {

absl::Status ClusterCheckpointStore::Checkpoint(Epoch epoch) {
  std::set<uint64_t> required;
  {
    MutexLock lock(&mu_);
    required = required_;
  }
  absl::Status status = coordinator_.Checkpoint(epoch, required).status();
  // A worker that did not reply in time is a worker lost for this attempt
  // (hung, or its process paused): the job recovers from it, while the
  // runtime never retries DeadlineExceeded (its own deadline's code).
  if (absl::IsDeadlineExceeded(status)) {
    return absl::UnavailableError(status.message());
  }
  return status;
}

void ClusterCheckpointStore::RequireSessions(std::set<uint64_t> sessions) {
  MutexLock lock(&mu_);
  required_ = std::move(sessions);
}

}  // namespace backfill
