// EtcdLeaseKeeper against a real 3-member etcd cluster: it keeps a short
// lease (and its key) alive past several TTLs, reports NOT_FOUND once the
// lease is revoked behind its back, and the lease expires after Stop().
// Real time: etcd's leases run on etcd's clock.
#include "storage/shared/etcd_lease_keeper.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_test_cluster.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::Eq;
using ::testing::Field;
using ::testing::Optional;

class EtcdLeaseKeeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BACKFILL_ASSERT_OK_AND_ASSIGN(cluster_, EtcdTestCluster::Start({}));
    EtcdClientOptions options;
    options.endpoints = cluster_->Endpoints();
    BACKFILL_ASSERT_OK_AND_ASSIGN(etcd_, EtcdClient::Create(options));
  }

  // Polls `done` every 100 ms until it holds or `timeout` passes.
  template <typename Predicate>
  bool Eventually(Predicate done, absl::Duration timeout) {
    Clock& clock = Clock::Real();
    const absl::Time deadline = clock.Now() + timeout;
    while (!done()) {
      if (clock.Now() >= deadline) return false;
      clock.SleepUntil(clock.Now() + absl::Milliseconds(100));
    }
    return true;
  }

  std::unique_ptr<EtcdTestCluster> cluster_;
  std::unique_ptr<EtcdClient> etcd_;
};

TEST_F(EtcdLeaseKeeperTest, KeepsALeaseAlivePastItsTtlAndLetsItGoAfterStop) {
  Clock& clock = Clock::Real();
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease lease,
                                etcd_->GrantLease(absl::Seconds(2)));
  BACKFILL_ASSERT_OK(etcd_->Put({"workers/1", "addr", lease.id}).status());
  std::unique_ptr<EtcdLeaseKeeper> keeper =
      EtcdLeaseKeeper::Start(*etcd_, lease, {});

  // Three TTLs later the key is still there.
  const absl::Time start = clock.Now();
  ASSERT_FALSE(Eventually(
      [&] {
        auto kv = etcd_->Get("workers/1");
        return !kv.ok() || !kv->has_value();
      },
      3 * lease.ttl))
      << "the kept lease's key disappeared";
  EXPECT_GE(clock.Now() - start, 3 * lease.ttl);
  BACKFILL_EXPECT_OK(keeper->status());
  EXPECT_GE(keeper->renewals(), 5);
  EXPECT_GT(keeper->alive_until(), clock.Now());
  EXPECT_LE(keeper->alive_until(), clock.Now() + lease.ttl);

  keeper->Stop();
  const int renewals = keeper->renewals();
  ASSERT_TRUE(Eventually(
      [&] {
        auto kv = etcd_->Get("workers/1");
        return kv.ok() && !kv->has_value();
      },
      absl::Seconds(30)))
      << "the lease did not expire after Stop()";
  EXPECT_EQ(keeper->renewals(), renewals);
  EXPECT_THAT(etcd_->LeaseTimeToLive(lease.id),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(EtcdLeaseKeeperTest, ReportsALeaseRevokedBehindItsBack) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease lease,
                                etcd_->GrantLease(absl::Seconds(3)));
  EtcdLeaseKeeperOptions options;
  options.interval = absl::Milliseconds(200);
  std::unique_ptr<EtcdLeaseKeeper> keeper =
      EtcdLeaseKeeper::Start(*etcd_, lease, options);
  ASSERT_TRUE(
      Eventually([&] { return keeper->renewals() >= 1; }, absl::Seconds(10)));
  BACKFILL_ASSERT_OK(etcd_->RevokeLease(lease.id));
  ASSERT_TRUE(Eventually([&] { return absl::IsNotFound(keeper->status()); },
                         absl::Seconds(10)))
      << keeper->status();
  EXPECT_THAT(keeper->status(), StatusIs(absl::StatusCode::kNotFound,
                                         ::testing::HasSubstr("revoked")));
}

// Destroying a keeper mid-wait returns promptly (the thread wakes on Stop).
TEST_F(EtcdLeaseKeeperTest, StopWakesTheThread) {
  Clock& clock = Clock::Real();
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease lease,
                                etcd_->GrantLease(absl::Seconds(60)));
  std::unique_ptr<EtcdLeaseKeeper> keeper =
      EtcdLeaseKeeper::Start(*etcd_, lease, {});
  const absl::Time start = clock.Now();
  keeper.reset();  // the interval is 20 s
  EXPECT_LT(clock.Now() - start, absl::Seconds(5));
  BACKFILL_ASSERT_OK(etcd_->RevokeLease(lease.id));
}

}  // namespace
}  // namespace backfill
