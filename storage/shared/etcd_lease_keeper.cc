#include "storage/shared/etcd_lease_keeper.h"

#include <algorithm>
#include <utility>

namespace backfill {

std::unique_ptr<EtcdLeaseKeeper> EtcdLeaseKeeper::Start(
    EtcdClient& etcd, EtcdLease lease, EtcdLeaseKeeperOptions options) {
  std::unique_ptr<EtcdLeaseKeeper> keeper(
      new EtcdLeaseKeeper(etcd, lease, options));
  keeper->thread_ = std::thread([keeper = keeper.get()] { keeper->Run(); });
  return keeper;
}

EtcdLeaseKeeper::EtcdLeaseKeeper(EtcdClient& etcd, EtcdLease lease,
                                 EtcdLeaseKeeperOptions options)
    : etcd_(etcd),
      lease_(lease),
      clock_(options.clock != nullptr ? *options.clock : Clock::Real()),
      interval_(options.interval > absl::ZeroDuration() ? options.interval
                                                        : lease.ttl / 3),
      alive_until_(clock_.Now() + lease.ttl) {}

EtcdLeaseKeeper::~EtcdLeaseKeeper() { Stop(); }

void EtcdLeaseKeeper::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

absl::Status EtcdLeaseKeeper::status() const {
  MutexLock lock(&mu_);
  return status_;
}

absl::Time EtcdLeaseKeeper::alive_until() const {
  MutexLock lock(&mu_);
  return alive_until_;
}

int EtcdLeaseKeeper::renewals() const {
  MutexLock lock(&mu_);
  return renewals_;
}

void EtcdLeaseKeeper::Run() {
  while (true) {
    {
      MutexLock lock(&mu_);
      const absl::Time next = clock_.Now() + interval_;
      if (clock_.WaitUntil(
              mu_, cv_,
              [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; },
              next)) {
        return;
      }
    }
    // The lease lives at least TTL from when etcd renews it, which is after
    // this moment.
    const absl::Time sent = clock_.Now();
    absl::StatusOr<absl::Duration> ttl = etcd_.KeepAliveLease(lease_.id);
    MutexLock lock(&mu_);
    if (ttl.ok()) {
      status_ = absl::OkStatus();
      alive_until_ = std::max(alive_until_, sent + *ttl);
      ++renewals_;
    } else {
      status_ = ttl.status();
      if (absl::IsNotFound(status_)) return;  // gone for good
    }
  }
}

}  // namespace backfill
