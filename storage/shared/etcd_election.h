// EtcdElection: leader election over etcd leases, the recipe of etcd's own
// concurrency package: each candidate creates a key <prefix><lease id> bound
// to its lease; the candidate whose key has the lowest create revision leads.
// For issue 19's standby coordinator (a standby campaigns and becomes leader
// when the leader's lease expires or it resigns) and for fencing its writes.
//
//   EtcdElection election(etcd, "job/coordinator/");
//   BACKFILL_ASSIGN_OR_RETURN(EtcdLease lease,
//   etcd.GrantLease(absl::Seconds(5))); BACKFILL_ASSIGN_OR_RETURN(EtcdCandidacy
//   me, election.Campaign(lease.id, "host:port"));
//   BACKFILL_ASSIGN_OR_RETURN(bool leading, election.IsLeader(me));
//   // Commit only while leading: the txn is refused once `me` lost its key.
//   EtcdTxn txn;
//   txn.compares = {EtcdElection::Fence(me), ...};
//
// A candidate keeps its lease alive (EtcdClient::KeepAliveLease every third
// of the TTL); when it stops, its key goes with the lease and the next oldest
// candidate leads. Leadership is never handed back: a key's create revision
// is unique, so a candidate that lost its key is fenced for good and must
// campaign again (with a new lease) to become a candidate at all.
//
// Thread-safety: as thread-safe as the EtcdClient (all methods are const
// over it).
#ifndef STORAGE_SHARED_ETCD_ELECTION_H_
#define STORAGE_SHARED_ETCD_ELECTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/shared/etcd_client.h"

namespace backfill {

// One candidate's registration: its key and the revision that created it.
struct EtcdCandidacy {
  std::string key;
  int64_t create_revision = 0;
  int64_t lease = 0;
};

class EtcdElection {
 public:
  // `prefix` (non-empty; by convention ending in '/') names the election.
  // `etcd` is not owned and must outlive the election.
  EtcdElection(EtcdClient& etcd, std::string prefix);

  // Registers a candidate bound to `lease_id` with `value` (for example its
  // address, which Leader() reports). Idempotent for one lease: campaigning
  // again returns the existing candidacy (its value unchanged). NOT_FOUND if
  // the lease expired.
  absl::StatusOr<EtcdCandidacy> Campaign(int64_t lease_id,
                                         absl::string_view value);

  // The leading candidate (lowest create revision), or nullopt if there is
  // none.
  absl::StatusOr<std::optional<EtcdKeyValue>> Leader();

  // Whether `candidacy` leads now (it may lose the lead at any moment after:
  // use Fence() to make a write conditional on still leading).
  absl::StatusOr<bool> IsLeader(const EtcdCandidacy& candidacy);

  // A compare that holds only while `candidacy` is still registered. Added to
  // the txn of a leader's write, the write is refused once the candidacy is
  // gone (lease expired, resigned). REQUIRES: `candidacy` led when the caller
  // last checked IsLeader (no older candidate can appear later).
  static EtcdCompare Fence(const EtcdCandidacy& candidacy);

  // Withdraws `candidacy` (deletes its key if it is still this candidacy's);
  // the lease stays. OK if it was already gone.
  absl::Status Resign(const EtcdCandidacy& candidacy);

  const std::string& prefix() const { return prefix_; }

 private:
  EtcdClient& etcd_;
  std::string prefix_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_ETCD_ELECTION_H_
