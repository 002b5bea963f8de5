// The checkpoint protocol with its workers as separate processes
// (checkpoint_worker_child), the coordinator in the test process, over a
// real 3-member etcd cluster, a local-directory object store and real local
// gRPC connections:
//  * two worker processes write different rows at epoch 3; after the
//    checkpoint each reads the other's rows;
//  * a worker process SIGKILLed between its upload and its sync reply fails
//    the checkpoint (Unavailable, naming it), nothing is committed; the next
//    checkpoint, of the surviving worker, commits its rows and never the
//    dead one's, whose uploaded object no version lists.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
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
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/child_processes.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr TableId kTable = 7;  // checkpoint_worker_child's table.

// A shared store, its committer's store object and a coordinator on it.
class MultiprocessCluster {
 public:
  explicit MultiprocessCluster(const std::string& base)
      : name_(SharedStoreFixture::UniqueName(base)),
        dir_(absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name_)) {}

  void Start() {
    BACKFILL_ASSERT_OK_AND_ASSIGN(options_, SharedStoreFixture::Options(name_));
    BACKFILL_ASSERT_OK_AND_ASSIGN(committer_, SharedStateStore::Open(options_));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        coordinator_,
        CheckpointCoordinator::Start({.store = committer_.get()}));
  }

  // Starts a worker process; returns its pid (0 on failure, reported).
  pid_t SpawnWorker(const std::string& id, uint64_t epoch,
                    const std::string& rows, bool die_after_upload) {
    absl::StatusOr<EtcdTestCluster*> cluster = SharedStoreFixture::Cluster();
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    if (!cluster.ok()) return 0;
    std::vector<std::string> args = {
        "executor/cluster/checkpoint_worker_child",
        coordinator_->address(),
        id,
        absl::StrJoin((*cluster)->Endpoints(), ","),
        dir_ + "/objects",
        options_.etcd_prefix,
        absl::StrCat(dir_, "/cache-", id),
        absl::StrCat(epoch),
        rows,
        OutFile(id)};
    if (die_after_upload) args.push_back("die_after_upload");
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
  std::vector<std::string> Objects() {
    return SharedStoreFixture::ListKeys(*options_.object_store, "store/sst/");
  }

  CheckpointCoordinator& coordinator() { return *coordinator_; }
  SharedStateStore& committer() { return *committer_; }

 private:
  const std::string name_;
  const std::string dir_;
  SharedStateStoreOptions options_;
  std::unique_ptr<SharedStateStore> committer_;
  std::unique_ptr<CheckpointCoordinator> coordinator_;
  // Last: a test that failed half-way leaves no worker behind, and none
  // outlives the coordinator.
  ChildProcesses children_;
};

TEST(CheckpointClusterMultiprocessTest, EachWorkerProcessReadsTheOthersRows) {
  MultiprocessCluster cluster("processes");
  ASSERT_NO_FATAL_FAILURE(cluster.Start());
  const pid_t a = cluster.SpawnWorker("a", 3, "a1=x,a2=y", false);
  const pid_t b = cluster.SpawnWorker("b", 3, "b1=z", false);
  ASSERT_TRUE(a != 0 && b != 0);
  BACKFILL_ASSERT_OK(
      cluster.coordinator().WaitForWorkers(2, absl::Now() + absl::Seconds(30)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                cluster.coordinator().Checkpoint(Epoch(3)));
  EXPECT_THAT(result.workers, SizeIs(2));
  EXPECT_TRUE(result.not_applied.empty());
  for (pid_t pid : {a, b}) {
    const int status = cluster.WaitFor(pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "worker exit status " << status;
  }
  const std::string all = "a1=x\na2=y\nb1=z\n";
  EXPECT_EQ(cluster.ReadOutFile("a"), all);
  EXPECT_EQ(cluster.ReadOutFile("b"), all);
  EXPECT_EQ(SharedStoreFixture::Scan(cluster.committer(), kTable, 3),
            (SharedStoreFixture::Rows{{"a1", "x"}, {"a2", "y"}, {"b1", "z"}}));
}

TEST(CheckpointClusterMultiprocessTest,
     AWorkerKilledBetweenUploadAndCommitFailsTheCheckpoint) {
  MultiprocessCluster cluster("killed");
  ASSERT_NO_FATAL_FAILURE(cluster.Start());
  const pid_t a = cluster.SpawnWorker("a", 3, "a1=x", false);
  const pid_t b = cluster.SpawnWorker("b", 3, "b1=lost", true);
  ASSERT_TRUE(a != 0 && b != 0);
  BACKFILL_ASSERT_OK(
      cluster.coordinator().WaitForWorkers(2, absl::Now() + absl::Seconds(30)));
  EXPECT_THAT(cluster.coordinator().Checkpoint(Epoch(3)),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("nothing committed"),
                             HasSubstr("worker 'b' disconnected before its "
                                       "sync reply"))));
  const int b_status = cluster.WaitFor(b);
  EXPECT_TRUE(WIFSIGNALED(b_status) && WTERMSIG(b_status) == SIGKILL)
      << "worker b exit status " << b_status;
  EXPECT_EQ(cluster.committer().CommittedEpoch(kTable), Epoch::Zero());
  EXPECT_THAT(cluster.Objects(), SizeIs(2));  // Both uploaded; none listed.
  EXPECT_THAT(cluster.coordinator().LiveWorkers(), ElementsAre("a"));

  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                cluster.coordinator().Checkpoint(Epoch(4)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  const int a_status = cluster.WaitFor(a);
  EXPECT_TRUE(WIFEXITED(a_status) && WEXITSTATUS(a_status) == 0)
      << "worker a exit status " << a_status;
  EXPECT_EQ(cluster.ReadOutFile("a"), "a1=x\n");
  EXPECT_EQ(SharedStoreFixture::Scan(cluster.committer(), kTable, 4),
            (SharedStoreFixture::Rows{{"a1", "x"}}));
  EXPECT_THAT(cluster.committer().Get(TableKey{kTable, 0, "b1"}, Epoch(4)),
              IsOkAndHolds(std::nullopt));
  EXPECT_THAT(cluster.committer().SstObjects(), SizeIs(1));
  EXPECT_THAT(cluster.Objects(), SizeIs(3));
}

}  // namespace
}  // namespace backfill
