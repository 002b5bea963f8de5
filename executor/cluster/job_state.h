// ClusterJobState: what a cluster job keeps in etcd (issue 19's control plane):
// the live workers, each with the etcd lease it registered with, and the vnode
// assignment over them, versioned. One key, `<job_prefix>state`, written
// only by the leading coordinator (checkpoint_coordinator.h) in the same
// transaction as each worker's membership key `<job_prefix>workers/<id>`
// (bound to the worker's lease); the coordinators' election lives under
// `<job_prefix>coordinator/`. The data plane reads the assignment with
// ReadJobState.
//
//   ClusterJobState state;
//   state.AddWorker("w1", lease_a);      // assignment_version 1, w1 [0, N)
//   state.AddWorker("w2", lease_b);      // version 2, w1 [0, N/2), w2 [N/2, N)
//   BACKFILL_ASSIGN_OR_RETURN(std::optional<ClusterJobState> stored,
//                             ReadJobState(etcd, "jobs/7/"));
//
// Thread-safety: a value type; ReadJobState is as thread-safe as the client.
#ifndef EXECUTOR_CLUSTER_JOB_STATE_H_
#define EXECUTOR_CLUSTER_JOB_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/shared/etcd_client.h"

namespace backfill {

// One live worker and its vnodes [first_vnode, end_vnode).
struct WorkerVnodes {
  std::string worker_id;
  int64_t lease_id = 0;
  uint32_t first_vnode = 0;
  uint32_t end_vnode = 0;

  bool operator==(const WorkerVnodes&) const = default;
};

struct ClusterJobState {
  // Bumped by every AddWorker / RemoveWorker; 0 before the first.
  uint64_t assignment_version = 0;
  // Vnodes split over the workers. > 0.
  uint32_t num_vnodes = 256;
  // The live workers in registration order, each with a contiguous range;
  // the ranges follow that order and cover [0, num_vnodes) once (a worker
  // beyond the num_vnodes-th gets an empty range).
  std::vector<WorkerVnodes> workers;

  // The worker's entry, or nullptr.
  const WorkerVnodes* Find(absl::string_view worker_id) const;
  // Appends a worker (or, for a known id, replaces its lease in place) and
  // re-splits the vnodes; bumps assignment_version.
  void AddWorker(absl::string_view worker_id, int64_t lease_id);
  // Removes a worker, re-splits; bumps assignment_version. False (and no
  // change) if it is not there.
  bool RemoveWorker(absl::string_view worker_id);

  std::string Encode() const;
  // DataLoss naming `key` for bytes that do not decode or ranges that do
  // not cover [0, num_vnodes).
  static absl::StatusOr<ClusterJobState> Decode(absl::string_view bytes,
                                                absl::string_view key);

  bool operator==(const ClusterJobState&) const = default;
};

// The even contiguous split of `num_vnodes` over `count` workers: worker i
// gets [i * n / count, (i + 1) * n / count) (sizes differ by at most one).
std::pair<uint32_t, uint32_t> VnodeRangeOf(uint32_t num_vnodes, size_t count,
                                           size_t index);

// Places a job's backfill actors by the vnode assignment of `state`: the job
// splits its `vnode_count` vnodes over `parallelism` actors
// (VnodeBitmap::EvenSplit; actor i holds the i-th range), and actor i runs
// on the worker of `state` whose range holds the most of actor i's vnodes
// (the first such in the state's order). Returns each actor's worker id, in
// actor order. Errors: FailedPrecondition if state.num_vnodes is not
// `vnode_count` (the coordinator was configured for another table) or the
// state has no worker; InvalidArgument unless 1 <= parallelism <=
// vnode_count.
absl::StatusOr<std::vector<std::string>> PlaceActorsByAssignment(
    const ClusterJobState& state, uint32_t vnode_count, uint32_t parallelism);

// The keys under `job_prefix` (which should end in '/').
std::string JobStateKey(absl::string_view job_prefix);
std::string WorkerKeyPrefix(absl::string_view job_prefix);
std::string WorkerKey(absl::string_view job_prefix,
                      absl::string_view worker_id);
std::string CoordinatorElectionPrefix(absl::string_view job_prefix);

// The job's state as the leading coordinator last wrote it, with the key's
// mod revision (nullopt before the first write). Errors: etcd's; DataLoss
// for a value that does not decode.
struct StoredJobState {
  ClusterJobState state;
  int64_t mod_revision = 0;
};
absl::StatusOr<std::optional<StoredJobState>> ReadJobState(
    EtcdClient& etcd, absl::string_view job_prefix);

// The leading coordinator's address (its election value), or NotFound if
// no coordinator campaigns. For workers looking for the leader after a
// failover.
absl::StatusOr<std::string> LeadingCoordinatorAddress(
    EtcdClient& etcd, absl::string_view job_prefix);

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_JOB_STATE_H_
