#include "executor/cluster/job_state.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "executor/cluster/job_state.pb.h"
#include "serde/vnode_bitmap.h"
#include "storage/shared/etcd_election.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

void Resplit(ClusterJobState& state) {
  for (size_t i = 0; i < state.workers.size(); ++i) {
    const auto [first, end] =
        VnodeRangeOf(state.num_vnodes, state.workers.size(), i);
    state.workers[i].first_vnode = first;
    state.workers[i].end_vnode = end;
  }
  ++state.assignment_version;
}

}  // namespace

std::pair<uint32_t, uint32_t> VnodeRangeOf(uint32_t num_vnodes, size_t count,
                                           size_t index) {
  const uint64_t n = num_vnodes;
  return {static_cast<uint32_t>(n * index / count),
          static_cast<uint32_t>(n * (index + 1) / count)};
}

absl::StatusOr<std::vector<std::string>> PlaceActorsByAssignment(
    const ClusterJobState& state, uint32_t vnode_count, uint32_t parallelism) {
  if (state.num_vnodes != vnode_count) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the job's vnode assignment (version ", state.assignment_version,
        ") splits ", state.num_vnodes, " vnodes, but the table has ",
        vnode_count,
        " (configure the coordinator's num_vnodes with the table's vnode "
        "count)"));
  }
  if (state.workers.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the job's vnode assignment (version ", state.assignment_version,
        ") has no worker to place ", parallelism, " backfill actors on"));
  }
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<VnodeBitmap> split,
      VnodeBitmap::EvenSplit(static_cast<int>(vnode_count),
                             static_cast<int>(parallelism)));
  std::vector<std::string> placed;
  placed.reserve(split.size());
  for (const VnodeBitmap& actor : split) {
    // Contiguous and non-empty: [begin, end).
    uint32_t begin = vnode_count;
    uint32_t end = 0;
    for (VirtualNode vnode : actor.set_vnodes()) {
      begin = std::min<uint32_t>(begin, vnode);
      end = std::max<uint32_t>(end, static_cast<uint32_t>(vnode) + 1);
    }
    const WorkerVnodes* best = nullptr;
    uint32_t best_overlap = 0;
    for (const WorkerVnodes& worker : state.workers) {
      const uint32_t low = std::max(begin, worker.first_vnode);
      const uint32_t high = std::min(end, worker.end_vnode);
      const uint32_t overlap = high > low ? high - low : 0;
      if (best == nullptr || overlap > best_overlap) {
        best = &worker;
        best_overlap = overlap;
      }
    }
    placed.push_back(best->worker_id);
  }
  return placed;
}

const WorkerVnodes* ClusterJobState::Find(absl::string_view worker_id) const {
  for (const WorkerVnodes& worker : workers) {
    if (worker.worker_id == worker_id) return &worker;
  }
  return nullptr;
}

void ClusterJobState::AddWorker(absl::string_view worker_id, int64_t lease_id) {
  auto known = std::find_if(workers.begin(), workers.end(),
                            [&](const WorkerVnodes& worker) {
                              return worker.worker_id == worker_id;
                            });
  if (known != workers.end()) {
    known->lease_id = lease_id;
  } else {
    workers.push_back({std::string(worker_id), lease_id, 0, 0});
  }
  Resplit(*this);
}

bool ClusterJobState::RemoveWorker(absl::string_view worker_id) {
  auto known = std::find_if(workers.begin(), workers.end(),
                            [&](const WorkerVnodes& worker) {
                              return worker.worker_id == worker_id;
                            });
  if (known == workers.end()) return false;
  workers.erase(known);
  Resplit(*this);
  return true;
}

std::string ClusterJobState::Encode() const {
  cluster::proto::JobStateProto proto;
  proto.set_assignment_version(assignment_version);
  proto.set_num_vnodes(num_vnodes);
  for (const WorkerVnodes& worker : workers) {
    cluster::proto::WorkerStateProto& entry = *proto.add_workers();
    entry.set_worker_id(worker.worker_id);
    entry.set_lease_id(worker.lease_id);
    entry.set_first_vnode(worker.first_vnode);
    entry.set_end_vnode(worker.end_vnode);
  }
  return proto.SerializeAsString();
}

absl::StatusOr<ClusterJobState> ClusterJobState::Decode(absl::string_view bytes,
                                                        absl::string_view key) {
  cluster::proto::JobStateProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(
        absl::StrCat("job state '", absl::CHexEscape(key),
                     "' does not decode (", bytes.size(), " bytes)"));
  }
  ClusterJobState state;
  state.assignment_version = proto.assignment_version();
  state.num_vnodes = proto.num_vnodes();
  uint32_t next = 0;
  for (const cluster::proto::WorkerStateProto& entry : proto.workers()) {
    if (entry.first_vnode() != next || entry.end_vnode() < next ||
        entry.worker_id().empty()) {
      return absl::DataLossError(
          absl::StrCat("job state '", absl::CHexEscape(key), "': worker '",
                       absl::CHexEscape(entry.worker_id()), "' has vnodes [",
                       entry.first_vnode(), ", ", entry.end_vnode(),
                       "), expected from ", next));
    }
    next = entry.end_vnode();
    state.workers.push_back({entry.worker_id(), entry.lease_id(),
                             entry.first_vnode(), entry.end_vnode()});
  }
  if (state.num_vnodes == 0 ||
      (!state.workers.empty() && next != state.num_vnodes)) {
    return absl::DataLossError(absl::StrCat(
        "job state '", absl::CHexEscape(key), "': the workers' vnodes end at ",
        next, " of ", state.num_vnodes));
  }
  return state;
}

std::string JobStateKey(absl::string_view job_prefix) {
  return absl::StrCat(job_prefix, "state");
}
std::string WorkerKeyPrefix(absl::string_view job_prefix) {
  return absl::StrCat(job_prefix, "workers/");
}
std::string WorkerKey(absl::string_view job_prefix,
                      absl::string_view worker_id) {
  return absl::StrCat(job_prefix, "workers/", worker_id);
}
std::string CoordinatorElectionPrefix(absl::string_view job_prefix) {
  return absl::StrCat(job_prefix, "coordinator/");
}

absl::StatusOr<std::optional<StoredJobState>> ReadJobState(
    EtcdClient& etcd, absl::string_view job_prefix) {
  const std::string key = JobStateKey(job_prefix);
  BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> value, etcd.Get(key));
  if (!value.has_value()) return std::nullopt;
  BACKFILL_ASSIGN_OR_RETURN(ClusterJobState state,
                            ClusterJobState::Decode(value->value, key));
  return StoredJobState{std::move(state), value->mod_revision};
}

absl::StatusOr<std::string> LeadingCoordinatorAddress(
    EtcdClient& etcd, absl::string_view job_prefix) {
  EtcdElection election(etcd, CoordinatorElectionPrefix(job_prefix));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> leader,
                            election.Leader());
  if (!leader.has_value()) {
    return absl::NotFoundError(absl::StrCat("no coordinator campaigns under '",
                                            election.prefix(), "'"));
  }
  return leader->value;
}

}  // namespace backfill
