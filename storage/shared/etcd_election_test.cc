// EtcdElection against a real 3-member etcd cluster: the oldest candidate
// leads, a standby takes over when the leader resigns or its lease ends, and
// a deposed leader's fenced writes are refused.
#include "storage/shared/etcd_election.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
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

class EtcdElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BACKFILL_ASSERT_OK_AND_ASSIGN(cluster_, EtcdTestCluster::Start({}));
    EtcdClientOptions options;
    options.endpoints = cluster_->Endpoints();
    BACKFILL_ASSERT_OK_AND_ASSIGN(etcd_, EtcdClient::Create(options));
  }

  // A write only the current leader may make.
  absl::StatusOr<bool> FencedWrite(const EtcdCandidacy& candidacy,
                                   const std::string& value) {
    EtcdTxn txn;
    txn.compares = {EtcdElection::Fence(candidacy)};
    txn.then_puts = {{"job/owner", value, 0}};
    absl::StatusOr<EtcdTxnResult> result = etcd_->Txn(txn);
    if (!result.ok()) return result.status();
    return result->succeeded;
  }

  std::unique_ptr<EtcdTestCluster> cluster_;
  std::unique_ptr<EtcdClient> etcd_;
};

TEST_F(EtcdElectionTest, OldestCandidateLeadsAndStandbyTakesOverOnResign) {
  EtcdElection election(*etcd_, "job/coordinator/");
  EXPECT_THAT(election.Leader(), IsOkAndHolds(Eq(std::nullopt)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease first_lease,
                                etcd_->GrantLease(absl::Seconds(30)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease second_lease,
                                etcd_->GrantLease(absl::Seconds(30)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdCandidacy first,
                                election.Campaign(first_lease.id, "a:1"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdCandidacy second,
                                election.Campaign(second_lease.id, "b:2"));
  EXPECT_LT(first.create_revision, second.create_revision);
  EXPECT_THAT(election.Leader(),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "a:1"))));
  EXPECT_THAT(election.IsLeader(first), IsOkAndHolds(true));
  EXPECT_THAT(election.IsLeader(second), IsOkAndHolds(false));

  // Campaigning again with the same lease keeps the original candidacy.
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdCandidacy again,
                                election.Campaign(first_lease.id, "x"));
  EXPECT_EQ(again.key, first.key);
  EXPECT_EQ(again.create_revision, first.create_revision);
  EXPECT_THAT(election.Leader(),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "a:1"))));

  EXPECT_THAT(FencedWrite(first, "a"), IsOkAndHolds(true));
  BACKFILL_ASSERT_OK(election.Resign(first));
  EXPECT_THAT(election.IsLeader(second), IsOkAndHolds(true));
  EXPECT_THAT(election.Leader(),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "b:2"))));
  // The deposed leader is fenced, even though its lease is alive.
  EXPECT_THAT(FencedWrite(first, "a again"), IsOkAndHolds(false));
  EXPECT_THAT(FencedWrite(second, "b"), IsOkAndHolds(true));
  BACKFILL_ASSERT_OK(election.Resign(first));  // already gone: OK
  EXPECT_THAT(etcd_->Get("job/owner"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "b"))));
}

// The leader stops keeping its lease alive (a dead or paused coordinator):
// when the lease expires the standby leads and the old leader is fenced.
TEST_F(EtcdElectionTest, StandbyTakesOverWhenTheLeadersLeaseExpires) {
  Clock& clock = Clock::Real();
  EtcdElection election(*etcd_, "job/coordinator/");
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease leader_lease,
                                etcd_->GrantLease(absl::Seconds(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease standby_lease,
                                etcd_->GrantLease(absl::Seconds(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdCandidacy leader,
                                election.Campaign(leader_lease.id, "a"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdCandidacy standby,
                                election.Campaign(standby_lease.id, "b"));
  EXPECT_THAT(election.IsLeader(leader), IsOkAndHolds(true));

  // The standby keeps its lease alive and polls; the leader does nothing.
  const absl::Time give_up = clock.Now() + absl::Seconds(30);
  bool took_over = false;
  while (!took_over && clock.Now() < give_up) {
    BACKFILL_ASSERT_OK(etcd_->KeepAliveLease(standby_lease.id).status());
    clock.SleepUntil(clock.Now() + absl::Milliseconds(300));
    BACKFILL_ASSERT_OK_AND_ASSIGN(took_over, election.IsLeader(standby));
  }
  ASSERT_TRUE(took_over) << "the standby did not lead within 30 s";
  EXPECT_THAT(FencedWrite(leader, "a"), IsOkAndHolds(false));
  EXPECT_THAT(FencedWrite(standby, "b"), IsOkAndHolds(true));
  // The old leader cannot come back with its expired lease.
  EXPECT_THAT(election.Campaign(leader_lease.id, "a"),
              StatusIs(absl::StatusCode::kNotFound));
  BACKFILL_ASSERT_OK(etcd_->RevokeLease(standby_lease.id));
  EXPECT_THAT(election.Leader(), IsOkAndHolds(Eq(std::nullopt)));
}

}  // namespace
}  // namespace backfill
