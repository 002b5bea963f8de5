// A job split over two store objects of one shared store (a real 3-member
// etcd cluster, a local-directory object store), as two processes would
// hold it: the coordinator's graph (source, view, actor 101) writes through
// the committer's SharedStateStore, the worker's graph (actors 100, 102)
// through its own, and they meet only at the gRPC data exchange and at the
// checkpoint protocol: every checkpoint the runtime's coordinator makes is
// CheckpointCoordinator::Checkpoint (ClusterCheckpointStore), which syncs
// the worker's store and the committer's own data and commits both as one
// version that the worker applies. The view equals the table, read by the
// independent verifier from the committer's store and again from a store
// object opened afterwards.
#include <memory>
#include <string>
#include <utility>

#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "executor/cluster/split_job_harness.h"
#include "executor/runtime/verifier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

class SplitSharedJobTest : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(SplitSharedJobTest, TheWorkersRowsAreCommittedWithTheCoordinators) {
  const std::string name = SharedStoreFixture::UniqueName("split");
  std::unique_ptr<SharedStateStore> committer = SharedStoreFixture::Open(name);
  std::unique_ptr<SharedStateStore> worker_store =
      SharedStoreFixture::Open(name);
  ASSERT_NE(committer, nullptr);
  ASSERT_NE(worker_store, nullptr);
  CheckpointCoordinatorOptions coordinator_options;
  coordinator_options.store = committer.get();
  coordinator_options.commit_own_data = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CheckpointCoordinator> coordinator,
      CheckpointCoordinator::Start(coordinator_options));
  CheckpointWorkerOptions worker_options;
  worker_options.coordinator_address = coordinator->address();
  worker_options.worker_id = "worker-1";
  worker_options.store = worker_store.get();
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CheckpointWorker> worker,
                                CheckpointWorker::Connect(worker_options));
  BACKFILL_ASSERT_OK(
      coordinator->WaitForWorkers(1, absl::Now() + absl::Seconds(30)));
  ClusterCheckpointStore store(*committer, *coordinator);

  const StreamingJobOptions options = SplitJobOptions(GetParam());
  SplitRun run = RunSplit(store, *worker_store, options);
  BACKFILL_ASSERT_OK(run.result.status());
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(run.result->recoveries, 0u);
  EXPECT_EQ(run.result->upstream_rows, run.result->view_rows);
  ASSERT_EQ(run.worker_actors.size(), 1u);
  EXPECT_EQ(run.worker_actors[0], 2u);
  EXPECT_EQ(worker_store->CommittedEpoch(options.upstream.table_id),
            committer->CommittedEpoch(options.upstream.table_id));
  worker->Disconnect();

  // A new process reads the same committed view: the worker's progress and
  // the committer's rows are in one version.
  std::unique_ptr<SharedStateStore> reader = SharedStoreFixture::Open(name);
  ASSERT_NE(reader, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*reader, options));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.view_rows, run.result->view_rows);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, SplitSharedJobTest,
    ::testing::Values(BackfillKind::kArrangement, BackfillKind::kNoShuffle,
                      BackfillKind::kSnapshot),
    [](const ::testing::TestParamInfo<BackfillKind>& info) {
      return std::string(BackfillKindName(info.param));
    });

// Without commit_own_data the committer's own sealed data cannot be
// committed: the runtime's first checkpoint is refused, naming why.
TEST(SplitSharedJobFailureTest, ACommitterWithoutItsOwnDataRefusesTheJob) {
  const std::string name = SharedStoreFixture::UniqueName("split-own");
  std::unique_ptr<SharedStateStore> committer = SharedStoreFixture::Open(name);
  ASSERT_NE(committer, nullptr);
  CheckpointCoordinatorOptions coordinator_options;
  coordinator_options.store = committer.get();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CheckpointCoordinator> coordinator,
      CheckpointCoordinator::Start(coordinator_options));
  ClusterCheckpointStore store(*committer, *coordinator);
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.max_recoveries = 0;
  SplitRun run = RunSplit(store, store, options);
  EXPECT_THAT(run.result.status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no worker is connected")));
}

}  // namespace
}  // namespace backfill
