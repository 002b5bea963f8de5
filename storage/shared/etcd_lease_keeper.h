// EtcdLeaseKeeper: keeps one etcd lease alive from a background thread, for
// a process that registers itself under a lease (a worker's membership key,
// an election candidacy) and must stop acting once the lease may be gone.
//
//   BACKFILL_ASSIGN_OR_RETURN(EtcdLease lease,
//   etcd.GrantLease(absl::Seconds(6))); std::unique_ptr<EtcdLeaseKeeper> keeper
//   = EtcdLeaseKeeper::Start(etcd, lease, {});
//   ...
//   if (!keeper->status().ok() || clock.Now() >= keeper->alive_until()) {
//     // The lease may have expired: stop, our registration is gone.
//   }
//
// The keeper renews every `interval` (default a third of the TTL). A renewal
// that fails for a transient reason is retried at the next tick; once etcd
// says the lease is gone (NOT_FOUND) the keeper stops renewing and status()
// stays NOT_FOUND. alive_until() is when the lease expires at the earliest if
// no renewal succeeds any more: the start of the last successful renewal plus
// the TTL (a renewal cannot extend the lease from before it was sent).
//
// Thread-safety: all methods may be called from any thread.
#ifndef STORAGE_SHARED_ETCD_LEASE_KEEPER_H_
#define STORAGE_SHARED_ETCD_LEASE_KEEPER_H_

#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "storage/shared/etcd_client.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

struct EtcdLeaseKeeperOptions {
  // Time between renewals. Default zero: a third of the lease's TTL. Must be
  // below the TTL to keep the lease; > 0 when set.
  absl::Duration interval = absl::ZeroDuration();
  // nullptr: Clock::Real(). Not owned; must outlive the keeper.
  Clock* clock = nullptr;
};

class EtcdLeaseKeeper {
 public:
  // Starts renewing `lease` (granted at about the time of the call) on a new
  // thread. `etcd` is not owned and must outlive the keeper.
  static std::unique_ptr<EtcdLeaseKeeper> Start(EtcdClient& etcd,
                                                EtcdLease lease,
                                                EtcdLeaseKeeperOptions options);

  // Stop()s. Does not revoke the lease (EtcdClient::RevokeLease does).
  ~EtcdLeaseKeeper();
  EtcdLeaseKeeper(const EtcdLeaseKeeper&) = delete;
  EtcdLeaseKeeper& operator=(const EtcdLeaseKeeper&) = delete;

  // Stops renewing and joins the thread; waits for a renewal in flight (at
  // most the client's operation_timeout). Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // OK after a successful renewal; NOT_FOUND (sticky) once the lease is gone;
  // otherwise the last renewal's error.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  // The earliest time the lease can expire without another renewal.
  absl::Time alive_until() const ABSL_LOCKS_EXCLUDED(mu_);

  // Successful renewals so far.
  int renewals() const ABSL_LOCKS_EXCLUDED(mu_);

  const EtcdLease& lease() const { return lease_; }

 private:
  EtcdLeaseKeeper(EtcdClient& etcd, EtcdLease lease,
                  EtcdLeaseKeeperOptions options);
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  EtcdClient& etcd_;
  const EtcdLease lease_;
  Clock& clock_;
  const absl::Duration interval_;

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  absl::Time alive_until_ ABSL_GUARDED_BY(mu_);
  int renewals_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_ETCD_LEASE_KEEPER_H_
