#include "executor/cluster/cluster_checkpoint_store.h"

#include <utility>

namespace backfill {

absl::Status ClusterCheckpointStore::Checkpoint(Epoch epoch) {
  std::set<uint64_t> required;
  {
    MutexLock lock(&mu_);
    required = required_;
  }
  return coordinator_.Checkpoint(epoch, required).status();
}

void ClusterCheckpointStore::RequireSessions(std::set<uint64_t> sessions) {
  MutexLock lock(&mu_);
  required_ = std::move(sessions);
}

}  // namespace backfill
