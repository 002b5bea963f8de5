#include "executor/cluster/cluster_checkpoint_store.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {

absl::Status ClusterCheckpointStore::Checkpoint(Epoch epoch) {
  std::set<uint64_t> required;
  {
    MutexLock lock(&mu_);
    required = required_;
  }
  absl::Status status = coordinator_.Checkpoint(epoch, required).status();
  // A worker that did not reply in time while others did holds up the job
  // (hung, or its process paused, with its lease kept): it is fenced, so
  // the recovery splits its vnodes over the others instead of waiting for
  // it again.
  std::vector<std::string> fenced;
  for (const std::string& worker : SilentWorkers(status)) {
    if (coordinator_
            .FenceWorker(worker, absl::StrCat("it sent no sync reply to the "
                                              "checkpoint of epoch ",
                                              epoch.value(), " in time"))
            .ok()) {
      fenced.push_back(absl::StrCat("'", worker, "'"));
    }
  }
  // A worker that did not reply in time is a worker lost for this attempt:
  // the job recovers from it, while the runtime never retries
  // DeadlineExceeded (its own deadline's code).
  if (!absl::IsDeadlineExceeded(status) && fenced.empty()) return status;
  return absl::Status(
      absl::IsDeadlineExceeded(status) ? absl::StatusCode::kUnavailable
                                       : status.code(),
      fenced.empty()
          ? status.message()
          : absl::StrCat(status.message(),
                         " (fenced: ", absl::StrJoin(fenced, ", "), ")"));
}

void ClusterCheckpointStore::RequireSessions(std::set<uint64_t> sessions) {
  MutexLock lock(&mu_);
  required_ = std::move(sessions);
}

}  // namespace backfill
