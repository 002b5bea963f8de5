// The control plane with its workers as processes (cluster_worker_child,
// each under a 2 s etcd lease it keeps alive), the coordinators in the test
// process, over a real 3-member etcd cluster and a local-directory object
// store:
//  * a worker process SIGSTOPped past its lease is fenced: the checkpoint
//    that asked it fails at once (not at the reply timeout); resumed, it is
//    refused (it exits 3) and none of its later rows is ever committed; the
//    next checkpoint commits the other worker's;
//  * the leading coordinator goes; the standby takes over, the worker
//    processes find it through the election and register again, its
//    checkpoint commits and both read it.
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_lease_keeper.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/child_processes.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 7;  // cluster_worker_child's table.

absl::Time Deadline() { return absl::Now() + absl::Seconds(30); }

// One job: its store, its etcd prefix, coordinators and worker processes.
class MultiprocessJob {
 public:
  explicit MultiprocessJob(const std::string& base)
      : name_(SharedStoreFixture::UniqueName(base)),
        dir_(absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name_)),
        job_prefix_(absl::StrCat("jobs/", name_, "/")) {}

  void Init() {
    BACKFILL_ASSERT_OK_AND_ASSIGN(options_, SharedStoreFixture::Options(name_));
    BACKFILL_ASSERT_OK_AND_ASSIGN(etcd_, SharedStoreFixture::NewEtcdClient());
  }

  // A coordinator campaigning under a lease of its own (kept alive until the
  // coordinator goes: the keeper is destroyed with it).
  struct Coordinator {
    std::unique_ptr<CheckpointCoordinator> coordinator;
    std::unique_ptr<EtcdLeaseKeeper> keeper;
  };
  Coordinator StartCoordinator(absl::Duration reply_timeout) {
    Coordinator started;
    absl::StatusOr<EtcdLease> lease = etcd_->GrantLease(absl::Seconds(5));
    EXPECT_TRUE(lease.ok()) << lease.status();
    if (!lease.ok()) return started;
    started.keeper = EtcdLeaseKeeper::Start(*etcd_, *lease, {});
    CheckpointCoordinatorOptions options;
    options.reply_timeout = reply_timeout;
    options.etcd = etcd_.get();
    options.job_prefix = job_prefix_;
    options.lease_id = lease->id;
    options.num_vnodes = 8;
    options.open_store = [store = options_] {
      return SharedStateStore::Open(store);
    };
    options.poll_interval = absl::Milliseconds(50);
    auto coordinator = CheckpointCoordinator::Start(options);
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (coordinator.ok()) started.coordinator = *std::move(coordinator);
    return started;
  }

  // Starts a worker process writing epochs first..last; its pid (0 on
  // failure, reported).
  pid_t SpawnWorker(const std::string& id, uint64_t first, uint64_t last) {
    absl::StatusOr<EtcdTestCluster*> cluster = SharedStoreFixture::Cluster();
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    if (!cluster.ok()) return 0;
    std::vector<std::string> args = {
        "executor/cluster/cluster_worker_child",
        absl::StrJoin((*cluster)->Endpoints(), ","),
        dir_ + "/objects",
        options_.etcd_prefix,
        job_prefix_,
        absl::StrCat(dir_, "/cache-", id),
        id,
        absl::StrCat(first),
        absl::StrCat(last),
        OutFile(id)};
    return children_.Spawn(std::move(args));
  }

  // The wait status of worker `pid` (blocks until it exits).
  int WaitFor(pid_t pid) { return children_.Wait(pid); }

  std::string OutFile(const std::string& id) const {
    return absl::StrCat(dir_, "/rows-", id);
  }
  std::string ReadOutFile(const std::string& id) const {
    std::stringstream bytes;
    bytes << std::ifstream(OutFile(id)).rdbuf();
    return bytes.str();
  }
  Rows Committed(uint64_t epoch) {
    auto store = SharedStateStore::Open(options_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return {};
    return SharedStoreFixture::Scan(**store, kTable, epoch);
  }

 private:
  const std::string name_;
  const std::string dir_;
  const std::string job_prefix_;
  SharedStateStoreOptions options_;
  std::shared_ptr<EtcdClient> etcd_;
  // A test that failed half-way leaves no worker behind (stopped or not).
  ChildProcesses children_;
};

TEST(ClusterControlMultiprocessTest, AWorkerStoppedPastItsLeaseIsFenced) {
  MultiprocessJob job("sigstop");
  ASSERT_NO_FATAL_FAILURE(job.Init());
  // Far beyond the test's time: only the fence can end the wait for b.
  MultiprocessJob::Coordinator leader = job.StartCoordinator(absl::Hours(1));
  ASSERT_NE(leader.coordinator, nullptr);
  CheckpointCoordinator& coordinator = *leader.coordinator;
  BACKFILL_ASSERT_OK(coordinator.WaitUntilLeading(Deadline()));
  const pid_t a = job.SpawnWorker("a", 3, 5);
  ASSERT_NE(a, 0);
  BACKFILL_ASSERT_OK(coordinator.WaitForWorkers(1, Deadline()));
  const pid_t b = job.SpawnWorker("b", 3, 5);
  ASSERT_NE(b, 0);
  BACKFILL_ASSERT_OK(coordinator.WaitForWorkers(2, Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator.Checkpoint(Epoch(3)));
  EXPECT_THAT(result.workers, ElementsAre("a", "b"));

  ASSERT_EQ(kill(b, SIGSTOP), 0);
  int stopped = 0;  // Until it is stopped indeed (a signal is asynchronous).
  ASSERT_EQ(waitpid(b, &stopped, WUNTRACED), b);
  ASSERT_TRUE(WIFSTOPPED(stopped)) << "worker b wait status " << stopped;
  EXPECT_THAT(coordinator.Checkpoint(Epoch(4)),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("nothing committed"),
                             HasSubstr("worker 'b' was fenced"))));
  EXPECT_THAT(coordinator.LiveWorkers(), ElementsAre("a"));
  ASSERT_EQ(kill(b, SIGCONT), 0);
  const int b_status = job.WaitFor(b);
  EXPECT_TRUE(WIFEXITED(b_status) && WEXITSTATUS(b_status) == 3)
      << "worker b exit status " << b_status;

  BACKFILL_ASSERT_OK_AND_ASSIGN(result, coordinator.Checkpoint(Epoch(5)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  const int a_status = job.WaitFor(a);
  EXPECT_TRUE(WIFEXITED(a_status) && WEXITSTATUS(a_status) == 0)
      << "worker a exit status " << a_status;
  // b's rows after its pause never count.
  EXPECT_EQ(job.ReadOutFile("a"), "a-3=v\na-4=v\na-5=v\nb-3=v\n");
  EXPECT_EQ(job.Committed(5),
            (Rows{{"a-3", "v"}, {"a-4", "v"}, {"a-5", "v"}, {"b-3", "v"}}));
}

TEST(ClusterControlMultiprocessTest, WorkerProcessesFollowTheStandby) {
  MultiprocessJob job("failover");
  ASSERT_NO_FATAL_FAILURE(job.Init());
  MultiprocessJob::Coordinator first = job.StartCoordinator(absl::Seconds(30));
  ASSERT_NE(first.coordinator, nullptr);
  BACKFILL_ASSERT_OK(first.coordinator->WaitUntilLeading(Deadline()));
  MultiprocessJob::Coordinator standby =
      job.StartCoordinator(absl::Seconds(30));
  ASSERT_NE(standby.coordinator, nullptr);
  const pid_t a = job.SpawnWorker("a", 3, 4);
  const pid_t b = job.SpawnWorker("b", 3, 4);
  ASSERT_TRUE(a != 0 && b != 0);
  BACKFILL_ASSERT_OK(first.coordinator->WaitForWorkers(2, Deadline()));
  BACKFILL_ASSERT_OK(first.coordinator->Checkpoint(Epoch(3)).status());

  first = {};  // The leader goes (it resigns).
  BACKFILL_ASSERT_OK(standby.coordinator->WaitUntilLeading(Deadline()));
  BACKFILL_ASSERT_OK(standby.coordinator->WaitForWorkers(2, Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                standby.coordinator->Checkpoint(Epoch(4)));
  EXPECT_EQ(result.version.committed_epoch, Epoch(4));
  for (pid_t pid : {a, b}) {
    const int status = job.WaitFor(pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "worker exit status " << status;
  }
  const std::string all = "a-3=v\na-4=v\nb-3=v\nb-4=v\n";
  EXPECT_EQ(job.ReadOutFile("a"), all);
  EXPECT_EQ(job.ReadOutFile("b"), all);
}

}  // namespace
}  // namespace backfill
