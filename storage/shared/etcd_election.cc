#include "storage/shared/etcd_election.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

EtcdElection::EtcdElection(EtcdClient& etcd, std::string prefix)
    : etcd_(etcd), prefix_(std::move(prefix)) {}

absl::StatusOr<EtcdCandidacy> EtcdElection::Campaign(int64_t lease_id,
                                                     absl::string_view value) {
  if (prefix_.empty()) {
    return absl::InvalidArgumentError("EtcdElection: empty prefix");
  }
  // Fixed width, so keys sort like lease ids (only for readability: the
  // order of candidates is their create revision).
  const std::string key =
      absl::StrCat(prefix_, absl::StrFormat("%016x", lease_id));
  EtcdTxn txn;
  txn.compares = {EtcdCompare::Absent(key)};
  txn.then_puts = {
      {.key = key, .value = std::string(value), .lease = lease_id}};
  txn.else_gets = {key};
  BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, etcd_.Txn(txn));
  EtcdCandidacy candidacy{key, result.revision, lease_id};
  if (!result.succeeded) {
    // Already a candidate with this lease (or this txn's own earlier attempt,
    // after a failover): keep that registration.
    if (!result.else_values[0].has_value()) {
      return absl::InternalError(absl::StrCat("EtcdElection ", prefix_,
                                              ": key ", key,
                                              " neither absent nor present"));
    }
    candidacy.create_revision = result.else_values[0]->create_revision;
  }
  return candidacy;
}

absl::StatusOr<std::optional<EtcdKeyValue>> EtcdElection::Leader() {
  EtcdRangeOptions options;
  options.limit = 1;
  options.order = EtcdRangeOptions::Order::kCreateRevisionAscending;
  BACKFILL_ASSIGN_OR_RETURN(EtcdRangeResult result,
                            etcd_.GetPrefix(prefix_, options));
  if (result.kvs.empty()) return std::nullopt;
  return std::move(result.kvs[0]);
}

absl::StatusOr<bool> EtcdElection::IsLeader(const EtcdCandidacy& candidacy) {
  BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> leader, Leader());
  return leader.has_value() && leader->key == candidacy.key &&
         leader->create_revision == candidacy.create_revision;
}

EtcdCompare EtcdElection::Fence(const EtcdCandidacy& candidacy) {
  return EtcdCompare::CreateRevisionEquals(candidacy.key,
                                           candidacy.create_revision);
}

absl::Status EtcdElection::Resign(const EtcdCandidacy& candidacy) {
  EtcdTxn txn;
  txn.compares = {Fence(candidacy)};
  txn.then_deletes = {candidacy.key};
  return etcd_.Txn(txn).status();
}

}  // namespace backfill
