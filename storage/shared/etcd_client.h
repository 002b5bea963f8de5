// EtcdClient: a small synchronous client of etcd's v3 API (etcd 3.4) over
// several endpoints, for the shared store's version commits (issue 18) and the
// cluster's worker registration and coordinator election (issue 19). No gRPC
// or protobuf type appears here (pimpl).
//
//   EtcdClientOptions options;
//   options.endpoints = {"127.0.0.1:2379", "127.0.0.1:22379",
//   "127.0.0.1:32379"}; BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient>
//   etcd,
//                             EtcdClient::Create(options));
//   EtcdTxn commit;  // fenced by the version it replaces
//   commit.compares = {EtcdCompare::ModRevisionEquals("job/version", fence)};
//   commit.then_puts = {{"job/version", encoded_version, /*lease=*/0}};
//   commit.else_gets = {"job/version"};
//   BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, etcd->Txn(commit));
//
// Contract (also storage/shared/README.md, "The etcd client"):
//   - Every read is linearizable (etcd's default): it sees every write any
//     client was acknowledged before it started.
//   - A call tries one endpoint at a time, each attempt with its own deadline
//     (`call_timeout`); on UNAVAILABLE or an attempt's DEADLINE_EXCEEDED
//     (on the client's side, or the server's: etcd 3.4 answers that one as
//     UNKNOWN "context deadline exceeded", taken as DEADLINE_EXCEEDED) it
//     moves to the next endpoint, pausing with back-off after each full round,
//     until `operation_timeout` has passed. It remembers the endpoint that last
//     answered. Any other error is returned at once.
//   - A write whose attempt failed that way may still have been applied (the
//     member died after proposing it). Put and Delete are idempotent, so the
//     retry is harmless; a Txn is not: `EtcdTxnResult::attempts > 1` says the
//     outcome of an earlier attempt is unknown, and a compare-and-swap that
//     then reports `succeeded == false` may be refused by its own earlier
//     success. Write a value the caller can recognise and read it back in
//     `else_gets` (see Txn()).
//   - Requests over etcd's limits (`max_request_bytes`, `max_txn_operations`)
//     and empty keys are refused with InvalidArgument before anything is sent.
//   - Errors name the operation, the key (C-escaped, truncated) and the
//     endpoint; the code is etcd's gRPC code (NOT_FOUND for an unknown or
//     expired lease, UNAVAILABLE / DEADLINE_EXCEEDED when no endpoint answered
//     within `operation_timeout`).
//
// Thread-safety: all methods may be called concurrently.
#ifndef STORAGE_SHARED_ETCD_CLIENT_H_
#define STORAGE_SHARED_ETCD_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct EtcdClientOptions {
  // "host:port" of each member's client URL (plain HTTP/2, no TLS). Required:
  // at least one, none empty. Calls start at the first and fail over in order.
  std::vector<std::string> endpoints;

  // Deadline of one RPC attempt against one endpoint. Default 5 s; > 0.
  absl::Duration call_timeout = absl::Seconds(5);

  // Deadline of a whole call over all its attempts and endpoints. Default
  // 30 s; >= call_timeout. An etcd leader election takes about 1-3 s.
  absl::Duration operation_timeout = absl::Seconds(30);

  // Pause after a full round of failed endpoints; doubles per round up to
  // 1 s. Default 50 ms; > 0.
  absl::Duration retry_backoff = absl::Milliseconds(50);

  // etcd's --max-request-bytes (default 1.5 MiB). A request whose encoding is
  // larger than this minus kEtcdRequestEnvelopeBytes (the raft envelope etcd
  // adds before its own check) is refused before sending. > envelope.
  int64_t max_request_bytes = 1536 * 1024;

  // etcd's --max-txn-ops (default 128): the most compares, the most `then`
  // operations and the most `else` operations of one Txn. >= 1.
  int max_txn_operations = 128;

  // Time for the operation deadline and back-off; nullptr means
  // Clock::Real(). (gRPC's per-attempt deadlines always use real time.)
  // Not owned; must outlive the client.
  Clock* clock = nullptr;
};

// Bytes reserved below `max_request_bytes` for the envelope etcd wraps a
// request in (request header with id and auth revision) before comparing it
// with its --max-request-bytes.
inline constexpr int64_t kEtcdRequestEnvelopeBytes = 64;

// One key as etcd stores it.
struct EtcdKeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;  // revision of the put that created the key
  int64_t mod_revision = 0;     // revision of the last put to the key
  int64_t version = 0;          // number of puts since creation (1 = created)
  int64_t lease = 0;            // lease the key is attached to; 0 = none
};

struct EtcdRangeOptions {
  enum class Order {
    kKey,                      // ascending key (etcd's order)
    kCreateRevisionAscending,  // oldest key first (elections)
  };
  // Most keys returned; 0 = all. Default 0; >= 0.
  int64_t limit = 0;
  Order order = Order::kKey;
  // Leave values empty (keys and revisions only). Default false.
  bool keys_only = false;
  // Skip the prefix's keys before this one; it must start with the prefix.
  // Default "": from the prefix's first key.
  std::string from_key;
};

struct EtcdRangeResult {
  std::vector<EtcdKeyValue> kvs;
  // The store's revision when the read was served.
  int64_t revision = 0;
  // True when `limit` cut the result short.
  bool more = false;
};

// One put, alone (Put) or in a Txn.
struct EtcdPut {
  std::string key;    // non-empty
  std::string value;  // may be empty
  int64_t lease =
      0;  // attach to this lease (deleted when it expires); 0 = none
};

// One condition of a Txn.
struct EtcdCompare {
  enum class Target { kValue, kModRevision, kCreateRevision, kVersion };
  enum class Result { kEqual, kNotEqual, kLess, kGreater };

  std::string key;
  Target target = Target::kModRevision;
  Result result = Result::kEqual;
  std::string value;   // for kValue
  int64_t number = 0;  // for the revisions and kVersion

  // The key's value is `value` (false if the key is absent).
  static EtcdCompare ValueEquals(absl::string_view key,
                                 absl::string_view value);
  // The key was last written at `mod_revision`; 0 means the key is absent.
  // This is the fence of a version commit: it fails once anyone else wrote.
  static EtcdCompare ModRevisionEquals(absl::string_view key,
                                       int64_t mod_revision);
  // The key was created at `create_revision` (and not deleted since); 0 means
  // absent. Fences a lease holder: its key, once gone, never comes back with
  // the same create revision.
  static EtcdCompare CreateRevisionEquals(absl::string_view key,
                                          int64_t create_revision);
  // The key does not exist.
  static EtcdCompare Absent(absl::string_view key);
};

// If every compare holds, apply then_puts and then_deletes atomically (one
// new revision); otherwise read else_gets. No key may be written twice.
struct EtcdTxn {
  std::vector<EtcdCompare> compares;
  std::vector<EtcdPut> then_puts;
  std::vector<std::string> then_deletes;  // single keys
  std::vector<std::string> else_gets;     // single keys
};

struct EtcdTxnResult {
  bool succeeded = false;
  // The store's revision after the txn (the puts' mod_revision if succeeded).
  int64_t revision = 0;
  // If !succeeded: one entry per else_gets, nullopt for an absent key.
  std::vector<std::optional<EtcdKeyValue>> else_values;
  // RPC attempts made. > 1: an earlier attempt may have been applied.
  int attempts = 0;
};

struct EtcdLease {
  int64_t id = 0;
  // The TTL etcd granted (it may raise a short one to its minimum, about
  // 1.5 election timeouts).
  absl::Duration ttl;
};

class EtcdClient {
 public:
  // Validates `options` (InvalidArgument naming the field) and sets up one
  // lazy gRPC channel per endpoint; does no I/O.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(
      EtcdClientOptions options);

  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // The key's current value and revisions, or nullopt if it is absent.
  absl::StatusOr<std::optional<EtcdKeyValue>> Get(absl::string_view key);

  // The keys starting with `prefix` (non-empty), in `options.order`.
  absl::StatusOr<EtcdRangeResult> GetPrefix(
      absl::string_view prefix, const EtcdRangeOptions& options = {});

  // Writes one key; returns the new revision. NOT_FOUND if `put.lease` is
  // unknown or expired.
  absl::StatusOr<int64_t> Put(const EtcdPut& put);

  // Deletes one key / every key starting with `prefix` (non-empty); returns
  // how many were deleted.
  absl::StatusOr<int64_t> Delete(absl::string_view key);
  absl::StatusOr<int64_t> DeletePrefix(absl::string_view prefix);

  // Compare-and-swap (see EtcdTxn). A refused compare is not an error:
  // `succeeded` is false and `else_values` holds the reads. If `attempts > 1`
  // and the txn was refused, the refusal may come from this txn's own earlier,
  // applied attempt: compare `else_values` with what the txn wrote.
  absl::StatusOr<EtcdTxnResult> Txn(const EtcdTxn& txn);

  // A lease of (at least) `ttl`, rounded up to whole seconds (>= 1 s).
  absl::StatusOr<EtcdLease> GrantLease(absl::Duration ttl);

  // Renews the lease to its full TTL once; returns that TTL. NOT_FOUND if the
  // lease expired or was revoked. Call it well within the TTL (a third).
  absl::StatusOr<absl::Duration> KeepAliveLease(int64_t lease_id);

  // The lease's remaining time; NOT_FOUND if it expired or was revoked.
  absl::StatusOr<absl::Duration> LeaseTimeToLive(int64_t lease_id);

  // Ends the lease now and deletes its keys. NOT_FOUND if already gone.
  absl::Status RevokeLease(int64_t lease_id);

  const EtcdClientOptions& options() const;

 private:
  class Impl;
  explicit EtcdClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_ETCD_CLIENT_H_
