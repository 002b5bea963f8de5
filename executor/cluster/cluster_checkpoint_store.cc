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
  const std::string fenced_note =
      fenced.empty()
          ? ""
          : absl::StrCat(" (fenced: ", absl::StrJoin(fenced, ", "), ")");
  // A worker that did not reply in time is a worker lost for this attempt:
  // the job recovers from it, while the runtime never retries
  // DeadlineExceeded (its own deadline's code).
  if (absl::IsDeadlineExceeded(status)) {
    return absl::UnavailableError(absl::StrCat(status.message(), fenced_note));
  }
  if (!fenced.empty()) {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), fenced_note));
  }
  return status;
}

void ClusterCheckpointStore::RequireSessions(std::set<uint64_t> sessions) {
  MutexLock lock(&mu_);
  required_ = std::move(sessions);
}

}  // namespace backfill
