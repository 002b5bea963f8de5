#include "executor/cluster/cluster_checkpoint_store.h"

namespace backfill {

absl::Status ClusterCheckpointStore::Checkpoint(Epoch epoch) {
  return coordinator_.Checkpoint(epoch).status();
}

}  // namespace backfill
