// The etcd leader killed during a sequence of version commits (issue 18,
// point 5): each commit is a compare-and-swap fenced by the previous
// version's revision, as the shared store's version commit is. Commits must
// resume on the new leader within the client's operation timeout, and every
// acknowledged commit must be readable afterwards from every member,
// including the old leader once it is back. A committer holding a fence from
// before the failover is refused after it.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
using ::testing::Field;
using ::testing::Optional;

constexpr char kVersionKey[] = "job/version";
constexpr int kNumCommits = 60;
constexpr int kKillLeaderBefore = 20;
constexpr int kRestartBefore = 40;

std::string VersionValue(int commit) {
  return absl::StrCat("version ", commit);
}
std::string DeltaKey(int commit) { return absl::StrCat("job/delta/", commit); }

// The committer of a version chain: version i replaces version i-1 only if
// the version key is still at the revision version i-1 was written at.
class VersionCommitter {
 public:
  explicit VersionCommitter(EtcdClient& etcd) : etcd_(etcd) {}

  // Commits version `commit`. OK once it is acknowledged, including when a
  // retried attempt was refused by this commit's own earlier, applied attempt
  // (the else-read shows our value). FailedPrecondition if someone else's
  // version is there (this committer is stale).
  absl::Status Commit(int commit) {
    EtcdTxn txn;
    txn.compares = {EtcdCompare::ModRevisionEquals(kVersionKey, fence_)};
    txn.then_puts = {{kVersionKey, VersionValue(commit), 0},
                     {DeltaKey(commit), absl::StrCat("delta of ", commit), 0}};
    txn.else_gets = {kVersionKey};
    absl::StatusOr<EtcdTxnResult> result = etcd_.Txn(txn);
    if (!result.ok()) return result.status();
    max_attempts_ = std::max(max_attempts_, result->attempts);
    if (result->succeeded) {
      fence_ = result->revision;
      return absl::OkStatus();
    }
    const std::optional<EtcdKeyValue>& current = result->else_values[0];
    if (result->attempts > 1 && current.has_value() &&
        current->value == VersionValue(commit)) {
      ++own_refusals_;
      fence_ = current->mod_revision;
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "commit ", commit, " refused: fence ", fence_, ", current ",
        current.has_value()
            ? absl::StrCat("'", current->value, "' at ", current->mod_revision)
            : std::string("absent")));
  }

  int64_t fence() const { return fence_; }
  int max_attempts() const { return max_attempts_; }
  int own_refusals() const { return own_refusals_; }

 private:
  EtcdClient& etcd_;
  int64_t fence_ = 0;  // 0: the version key does not exist yet
  int max_attempts_ = 0;
  int own_refusals_ = 0;
};

std::unique_ptr<EtcdClient> NewClient(std::vector<std::string> endpoints) {
  EtcdClientOptions options;
  options.endpoints = std::move(endpoints);
  options.call_timeout = absl::Seconds(2);
  options.operation_timeout = absl::Seconds(30);
  auto client = EtcdClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(EtcdClientEtcdFailureTest,
     LeaderKilledDuringCommitsLosesNothingAcknowledged) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdTestCluster> cluster,
                                EtcdTestCluster::Start({}));
  // The client starts at the leader, so killing it makes the client fail
  // over to another member (and not only wait out the election).
  BACKFILL_ASSERT_OK_AND_ASSIGN(int first_leader, cluster->LeaderIndex());
  std::vector<std::string> endpoints = {cluster->Endpoint(first_leader)};
  for (int member = 0; member < cluster->num_members(); ++member) {
    if (member != first_leader) endpoints.push_back(cluster->Endpoint(member));
  }
  std::unique_ptr<EtcdClient> etcd = NewClient(endpoints);
  VersionCommitter committer(*etcd);
  Clock& clock = Clock::Real();

  int killed = -1;
  int64_t fence_before_failover = 0;
  absl::Duration slowest_commit;
  int slowest_commit_index = 0;
  for (int commit = 1; commit <= kNumCommits; ++commit) {
    SCOPED_TRACE(absl::StrCat("commit ", commit));
    if (commit == kKillLeaderBefore) {
      BACKFILL_ASSERT_OK_AND_ASSIGN(killed, cluster->LeaderIndex());
      fence_before_failover = committer.fence();
      BACKFILL_ASSERT_OK(cluster->KillMember(killed));
    }
    if (commit == kRestartBefore) {
      BACKFILL_ASSERT_OK(cluster->RestartMember(killed));
    }
    const absl::Time start = clock.Now();
    // Every commit is acknowledged: the client rides out the election.
    BACKFILL_ASSERT_OK(committer.Commit(commit));
    const absl::Duration took = clock.Now() - start;
    if (took > slowest_commit) {
      slowest_commit = took;
      slowest_commit_index = commit;
    }
  }
  std::cout << "killed member " << killed
            << " (the leader; the client's first endpoint: " << first_leader
            << ") before commit " << kKillLeaderBefore << "; slowest commit "
            << slowest_commit_index << " took "
            << absl::FormatDuration(slowest_commit) << "; most attempts "
            << committer.max_attempts()
            << "; refusals by an own earlier attempt "
            << committer.own_refusals() << "\n";
  ASSERT_GE(killed, 0);
  // The commit after the kill needed another attempt: the retry path ran.
  EXPECT_GE(committer.max_attempts(), 2);

  // A new leader serves, and it is not the killed member's old term: the
  // cluster elected while it was down.
  BACKFILL_ASSERT_OK(cluster->WaitHealthy(absl::Seconds(30)));

  // Every acknowledged commit is there, read through each member alone
  // (linearizable reads: the restarted member answers only once caught up).
  for (int member = 0; member < cluster->num_members(); ++member) {
    SCOPED_TRACE(absl::StrCat("member ", member));
    std::unique_ptr<EtcdClient> only = NewClient({cluster->Endpoint(member)});
    EXPECT_THAT(only->Get(kVersionKey),
                IsOkAndHolds(Optional(
                    Field(&EtcdKeyValue::value, VersionValue(kNumCommits)))));
    BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult deltas,
                                  only->GetPrefix("job/delta/"));
    ASSERT_EQ(deltas.kvs.size(), static_cast<size_t>(kNumCommits));
    for (int commit = 1; commit <= kNumCommits; ++commit) {
      BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> delta,
                                    only->Get(DeltaKey(commit)));
      ASSERT_TRUE(delta.has_value()) << "lost commit " << commit;
      EXPECT_EQ(delta->value, absl::StrCat("delta of ", commit));
    }
  }

  // A committer fenced by a version from before the failover is refused and
  // changes nothing.
  EtcdTxn stale;
  stale.compares = {
      EtcdCompare::ModRevisionEquals(kVersionKey, fence_before_failover)};
  stale.then_puts = {{kVersionKey, "stale version", 0}};
  stale.else_gets = {kVersionKey};
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult refused, etcd->Txn(stale));
  EXPECT_FALSE(refused.succeeded);
  EXPECT_THAT(etcd->Get(kVersionKey),
              IsOkAndHolds(Optional(
                  Field(&EtcdKeyValue::value, VersionValue(kNumCommits)))));
}

// Killing a follower or two: with a majority up commits go on; with the
// majority gone they fail with UNAVAILABLE / DEADLINE_EXCEEDED naming the
// key (never a false acknowledgement), and resume once a member is back.
TEST(EtcdClientEtcdFailureTest, CommitsStopWithoutQuorumAndResumeAfter) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdTestCluster> cluster,
                                EtcdTestCluster::Start({}));
  EtcdClientOptions options;
  options.endpoints = cluster->Endpoints();
  options.call_timeout = absl::Seconds(1);
  options.operation_timeout = absl::Seconds(3);
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdClient> etcd,
                                EtcdClient::Create(options));
  VersionCommitter committer(*etcd);
  BACKFILL_ASSERT_OK(committer.Commit(1));

  BACKFILL_ASSERT_OK_AND_ASSIGN(int leader, cluster->LeaderIndex());
  const int follower = (leader + 1) % cluster->num_members();
  const int other_follower = (leader + 2) % cluster->num_members();
  BACKFILL_ASSERT_OK(cluster->KillMember(follower));
  BACKFILL_ASSERT_OK(committer.Commit(2));

  BACKFILL_ASSERT_OK(cluster->KillMember(other_follower));
  const absl::Status no_quorum = committer.Commit(3);
  EXPECT_TRUE(absl::IsUnavailable(no_quorum) ||
              absl::IsDeadlineExceeded(no_quorum))
      << no_quorum;
  EXPECT_THAT(std::string(no_quorum.message()),
              ::testing::HasSubstr("'job/version'"));

  BACKFILL_ASSERT_OK(cluster->RestartMember(follower));
  // Commit 3 may or may not have been applied by the lone leader's log
  // (it was never acknowledged); either way the chain continues from there.
  const absl::Status retried = committer.Commit(3);
  if (!retried.ok()) {
    // Refused only if the unacknowledged attempt did apply: then version 3
    // is there, written by us.
    EXPECT_THAT(
        etcd->Get(kVersionKey),
        IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, VersionValue(3)))))
        << retried;
  }
  BACKFILL_ASSERT_OK(cluster->RestartMember(other_follower));
}

}  // namespace
}  // namespace backfill
