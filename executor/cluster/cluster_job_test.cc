// A job whose backfill actors run in worker objects that a real process
// would hold, each with its own store object of one shared store (a real
// 3-member etcd cluster, a local-directory object store), reached only over
// gRPC: the coordinator's process runs the source, the view and the
// runtime's coordinator; each worker runs an ActorWorker (its share of each
// attempt's backfill actors, over the data exchange) and a CheckpointWorker
// (its share of each checkpoint). The view equals the table for every kind;
// a worker lost mid-backfill fails the attempt, and the recovery places
// every actor on the worker left and ends consistent.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "executor/cluster/actor_worker.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "executor/cluster/cluster_placement.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/cluster/split_job_harness.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/threaded_driver.h"
#include "executor/runtime/verifier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "tests/simulation/fault_injecting_state_store.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

// What one worker process holds.
struct Worker {
  std::unique_ptr<SharedStateStore> store;
  // The store its actors use: `store`, or `store` failing as a plan says.
  std::unique_ptr<simulation::FaultInjectingStateStore> faulty;
  // Before `checkpoints`, which hands it the coordinator's injects.
  std::unique_ptr<ActorWorker> actors;
  CheckpointWorkerOptions checkpoint_options;
  std::unique_ptr<CheckpointWorker> checkpoints;
  std::atomic<bool> alive{true};

  // Takes part in the coordinator's checkpoints from now on.
  bool JoinCheckpoints() {
    absl::StatusOr<std::unique_ptr<CheckpointWorker>> connected =
        CheckpointWorker::Connect(checkpoint_options);
    EXPECT_TRUE(connected.ok()) << connected.status();
    if (!connected.ok()) return false;
    checkpoints = *std::move(connected);
    return true;
  }

  // The process dies: its services stop.
  void Kill() {
    alive.store(false);
    // Both at once, as a process dies: no checkpoint is answered after its
    // actors went.
    if (checkpoints != nullptr) checkpoints->Disconnect();
    actors->Shutdown();
  }
};

// The coordinator's process and `num_workers` workers of one job.
class Cluster {
 public:
  // `late`: the last worker takes part in checkpoints only from the first
  // attempt on (it registers when that attempt's placement is made), so
  // its store has read none of the versions committed before (the bulk
  // load's): it must catch up before it builds its actors.
  Cluster(const std::string& base, const StreamingJobOptions& options,
          int num_workers, bool late = false,
          std::shared_ptr<simulation::FaultPlan> last_worker_faults = nullptr)
      : name_(SharedStoreFixture::UniqueName(base)), options_(options) {
    committer_ = SharedStoreFixture::Open(name_);
    if (committer_ == nullptr) return;
    CheckpointCoordinatorOptions coordinator_options;
    coordinator_options.store = committer_.get();
    coordinator_options.commit_own_data = true;
    coordinator_options.on_fence = [this](const std::string& worker,
                                          const absl::Status& why) {
      MutexLock lock(&fenced_mu_);
      fenced_.push_back(absl::StrCat(worker, ": ", why.message()));
    };
    absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> coordinator =
        CheckpointCoordinator::Start(coordinator_options);
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (!coordinator.ok()) return;
    coordinator_ = *std::move(coordinator);
    absl::StatusOr<std::unique_ptr<ExchangeServer>> exchange =
        ExchangeServer::Start();
    EXPECT_TRUE(exchange.ok()) << exchange.status();
    if (!exchange.ok()) return;
    exchange_ = *std::move(exchange);
    for (int i = 0; i < num_workers; ++i) {
      auto worker = std::make_unique<Worker>();
      worker->store = SharedStoreFixture::Open(name_);
      if (worker->store == nullptr) return;
      if (last_worker_faults != nullptr && i + 1 == num_workers) {
        worker->faulty = std::make_unique<simulation::FaultInjectingStateStore>(
            *worker->store, last_worker_faults);
      }
      StateStore* actor_store =
          worker->faulty != nullptr
              ? static_cast<StateStore*>(worker->faulty.get())
              : worker->store.get();
      absl::StatusOr<std::unique_ptr<ActorWorker>> actors =
          ActorWorker::Start({.store = actor_store,
                              .shared_store = worker->store.get(),
                              .options = &options_});
      EXPECT_TRUE(actors.ok()) << actors.status();
      if (!actors.ok()) return;
      worker->actors = *std::move(actors);
      worker->checkpoint_options.coordinator_address = coordinator_->address();
      worker->checkpoint_options.worker_id = absl::StrCat("worker-", i);
      worker->checkpoint_options.store = worker->store.get();
      worker->checkpoint_options.endpoints = {
          {"actor", worker->actors->address()},
          {"exchange", worker->actors->exchange_address()}};
      worker->checkpoint_options.on_inject =
          worker->actors->collector().InjectHandler();
      if (!late || i + 1 < num_workers) {
        if (!worker->JoinCheckpoints()) return;
      }
      workers_.push_back(std::move(worker));
    }
    // Only workers that take part in checkpoints may run actors.
    const absl::Status registered = coordinator_->WaitForWorkers(
        late ? workers_.size() - 1 : workers_.size(),
        absl::Now() + absl::Seconds(30));
    EXPECT_TRUE(registered.ok()) << registered;
    if (!registered.ok()) return;
    store_ =
        std::make_unique<ClusterCheckpointStore>(*committer_, *coordinator_);
  }

  ~Cluster() {
    for (std::unique_ptr<Worker>& worker : workers_) {
      if (worker->alive.load()) worker->Kill();
    }
    if (coordinator_ != nullptr) coordinator_->Shutdown();
  }

  bool ok() const { return store_ != nullptr; }
  // The late worker's committed epoch when it joined (before catching up).
  Epoch late_joined_store_epoch() const { return late_joined_store_epoch_; }
  Epoch committed_epoch() const {
    return committer_->CommittedEpoch(options_.upstream.table_id);
  }
  std::vector<std::unique_ptr<Worker>>& workers() { return workers_; }
  const std::string& name() const { return name_; }

  struct Run {
    absl::StatusOr<JobResult> result = absl::UnknownError("not run");
    // Per attempt: the workers it placed actors on.
    std::vector<size_t> workers_per_attempt;
    // The workers the coordinator fenced, "id: why".
    std::vector<std::string> fenced;
  };

  // Changes an attempt's endpoints (attempts count from 1) before they are
  // placed on.
  using EndpointRewrite =
      std::function<void(uint64_t attempt, std::vector<WorkerEndpoint>&)>;

  // Runs the job; each attempt places its actors on the workers alive.
  Run RunJob(const EndpointRewrite& rewrite = nullptr) {
    Run run;
    uint64_t attempt = 0;
    PlacementFactory factory = [&](const JobState&)
        -> absl::StatusOr<std::unique_ptr<AttemptPlacement>> {
      for (const std::unique_ptr<Worker>& worker : workers_) {
        if (worker->alive.load() && worker->checkpoints == nullptr) {
          if (!worker->JoinCheckpoints()) continue;
          BACKFILL_RETURN_IF_ERROR(coordinator_->WaitForWorkers(
              workers_.size(), absl::Now() + absl::Seconds(30)));
          late_joined_store_epoch_ =
              worker->store->CommittedEpoch(options_.upstream.table_id);
        }
      }
      // The workers that take part in the checkpoints, with the endpoints
      // they registered.
      std::vector<WorkerEndpoint> live;
      for (const CheckpointCoordinator::LiveWorker& worker :
           coordinator_->LiveWorkerEndpoints()) {
        live.push_back({worker.worker_id, worker.session,
                        worker.endpoints.at("actor"),
                        worker.endpoints.at("exchange")});
      }
      run.workers_per_attempt.push_back(live.size());
      if (rewrite != nullptr) rewrite(attempt + 1, live);
      return std::make_unique<ClusterPlacement>(
          *exchange_, *committer_, *store_, std::move(live), ++attempt);
    };
    run.result = RunStreamingJobWithDriver(
        *store_, options_, nullptr, {}, Clock::Real(),
        [&](JobGraph& graph, BarrierCoordinator& coordinator) {
          return RunThreaded(graph, coordinator, options_.barrier_interval,
                             Clock::Real());
        },
        factory);
    MutexLock lock(&fenced_mu_);
    run.fenced = fenced_;
    return run;
  }

 private:
  const std::string name_;
  const StreamingJobOptions& options_;
  std::unique_ptr<SharedStateStore> committer_;
  std::unique_ptr<CheckpointCoordinator> coordinator_;
  std::unique_ptr<ExchangeServer> exchange_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<ClusterCheckpointStore> store_;
  Epoch late_joined_store_epoch_;
  Mutex fenced_mu_;
  std::vector<std::string> fenced_ ABSL_GUARDED_BY(fenced_mu_);
};

class ClusterJobTest : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(ClusterJobTest, TheViewEqualsTheTableWithTheActorsInTwoWorkers) {
  StreamingJobOptions options = SplitJobOptions(GetParam());
  std::vector<std::string> errors;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    errors.push_back(error.ToString());
  };
  Cluster cluster("cluster-job", options, /*num_workers=*/2);
  ASSERT_TRUE(cluster.ok());
  Cluster::Run run = cluster.RunJob();
  BACKFILL_ASSERT_OK(run.result.status());
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(run.result->recoveries, 0u) << ::testing::PrintToString(errors);
  EXPECT_EQ(run.result->upstream_rows, run.result->view_rows);
  EXPECT_GE(run.result->snapshot_rows, 1u);
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u));
  // The barriers' latency through the backfill is measured from the
  // workers' reports (every backfill actor runs in a worker): adaptive
  // mode's samples.
  EXPECT_GT(run.result->backfill_barrier_latency_p99_ms, 0);

  // A process opened afterwards reads the same view.
  std::unique_ptr<SharedStateStore> reader =
      SharedStoreFixture::Open(cluster.name());
  ASSERT_NE(reader, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*reader, options));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.view_rows, run.result->view_rows);
}

// A job its deadline ended mid-backfill resumes on the same workers, and
// the rows its actors read in their first epoch count as this run's: the
// workers send each actor's persisted rows with its progress (else the
// coordinator took them all for the earlier run's, and the run reported
// 0 snapshot rows/s).
TEST_P(ClusterJobTest, AResumedJobCountsTheRowsItsWorkersReadAsItsOwn) {
  StreamingJobOptions options = SplitJobOptions(GetParam());
  options.rate_limit = RateLimit::Fixed(1000);  // 4000 rows: about 4 s
  options.max_duration = absl::Milliseconds(1500);
  Cluster cluster("cluster-resume", options, /*num_workers=*/2);
  ASSERT_TRUE(cluster.ok());
  EXPECT_THAT(cluster.RunJob().result.status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  // The cluster runs `options` as they are when it runs it.
  options.max_duration = absl::Seconds(60);
  options.overrides.rate_limit = RateLimit::Disabled();
  options.barrier_interval = absl::Milliseconds(300);  // all in one epoch
  Cluster::Run resumed = cluster.RunJob();
  BACKFILL_ASSERT_OK(resumed.result.status());
  EXPECT_TRUE(resumed.result->consistent) << resumed.result->mismatch;
  EXPECT_TRUE(resumed.result->resumed);
  ASSERT_TRUE(resumed.result->snapshot_rows_before_run.has_value());
  EXPECT_GT(*resumed.result->snapshot_rows_before_run, 0u);
  EXPECT_LT(*resumed.result->snapshot_rows_before_run,
            resumed.result->snapshot_rows / 2);
  EXPECT_GT(resumed.result->snapshot_rows_per_second, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ClusterJobTest,
    ::testing::Values(BackfillKind::kArrangement, BackfillKind::kNoShuffle,
                      BackfillKind::kSnapshot),
    [](const ::testing::TestParamInfo<BackfillKind>& info) {
      return std::string(BackfillKindName(info.param));
    });

// Worker 1 joins the checkpoints only when the first attempt is placed,
// after the bulk load was committed without it: its store has not read that
// version, and the attempt makes it read it before it builds its actors
// (else its no-shuffle writers would start from a table without the loaded
// rows).
TEST(ClusterJobFailureTest, AWorkerThatJoinedLateReadsTheVersionItStartsFrom) {
  const StreamingJobOptions options = SplitJobOptions(BackfillKind::kNoShuffle);
  Cluster cluster("cluster-late", options, /*num_workers=*/2, /*late=*/true);
  ASSERT_TRUE(cluster.ok());
  Cluster::Run run = cluster.RunJob();
  BACKFILL_ASSERT_OK(run.result.status());
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(run.result->recoveries, 0u);
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u));
  // It had read nothing of the bulk load when it joined.
  EXPECT_EQ(cluster.late_joined_store_epoch(), Epoch(0));
}

// Worker 1's actor fails on a storage fault mid-backfill while the worker
// lives on (its checkpoint stream stays open): the attempt fails, what the
// actors sealed before the fault is still checkpointed (the worker holds
// them until the coordinator ends the attempt), and the recovery on both
// workers ends consistent.
TEST(ClusterJobFailureTest, AWorkersFailedActorsAreHeldAndTheJobRecovers) {
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(10);
  std::vector<std::string> errors;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    errors.push_back(error.ToString());
  };
  auto faults = std::make_shared<simulation::FaultPlan>();
  faults->Arm(simulation::FaultOp::kIteratorMove, 400);
  Cluster cluster("cluster-fault", options, /*num_workers=*/2,
                  /*late=*/false, faults);
  ASSERT_TRUE(cluster.ok());
  Cluster::Run run = cluster.RunJob();
  BACKFILL_ASSERT_OK(run.result.status()) << ::testing::PrintToString(errors);
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(faults->num_fired(), 1u);
  ASSERT_EQ(run.result->recoveries, 1u) << ::testing::PrintToString(errors);
  EXPECT_THAT(errors[0], ::testing::HasSubstr("injected fault"));
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u, 2u));
}

// The first attempt cannot reach worker 0's exchange server (its address
// names a port nothing listens on), so the view never receives the output
// of worker 0's actors: they wait to send it and read nothing. The attempt
// fails; worker 0 must end it when the coordinator cancels its call, or the
// next attempt, which waits for it, holds its first barrier until the
// barrier timeout and worker 0 is fenced.
TEST(ClusterJobFailureTest,
     AnAttemptWhoseOutputWasNeverReceivedEndsAtItsCancel) {
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(10);
  options.barrier_timeout = absl::Seconds(20);
  std::vector<std::string> errors;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    errors.push_back(error.ToString());
  };
  Cluster cluster("cluster-unreached", options, /*num_workers=*/2);
  ASSERT_TRUE(cluster.ok());
  Cluster::Run run =
      cluster.RunJob([](uint64_t attempt, std::vector<WorkerEndpoint>& live) {
        // Port 1: privileged, nothing listens (the connection is refused).
        if (attempt == 1) live[0].exchange_address = "127.0.0.1:1";
      });
  BACKFILL_ASSERT_OK(run.result.status()) << ::testing::PrintToString(errors);
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  ASSERT_EQ(run.result->recoveries, 1u) << ::testing::PrintToString(errors);
  EXPECT_THAT(errors[0], ::testing::HasSubstr("127.0.0.1:1: not connected"));
  EXPECT_THAT(run.fenced, ::testing::IsEmpty());
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u, 2u));
}

// Worker 1 dies mid-backfill (its actor and checkpoint services stop): the
// attempt fails, the job recovers from the last checkpoint with every
// backfill actor on worker 0, and the view equals the table.
TEST(ClusterJobFailureTest, ALostWorkersActorsMoveToTheWorkerLeft) {
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.rate_limit = RateLimit::Fixed(4000);  // 4000 rows: about 1 s
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(10);
  std::vector<std::string> errors;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    errors.push_back(error.ToString());
  };
  Cluster cluster("cluster-kill", options, /*num_workers=*/2);
  ASSERT_TRUE(cluster.ok());
  std::thread killer([&] {
    absl::SleepFor(absl::Milliseconds(400));
    cluster.workers()[1]->Kill();
  });
  Cluster::Run run = cluster.RunJob();
  killer.join();
  BACKFILL_ASSERT_OK(run.result.status());
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  EXPECT_EQ(run.result->recoveries, 1u) << ::testing::PrintToString(errors);
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u, 1u));
}

// What a run whose last worker's actor hangs saw.
struct HungRun {
  Cluster::Run run;
  std::vector<std::string> errors;  // Each recovery's cause.
  uint32_t faults_fired = 0;
  bool still_hanging = false;  // When the job ended.
};

// Runs the job on `num_workers` workers whose last one's actor hangs in a
// storage call mid-backfill while its process lives on (its checkpoint
// stream stays open, its gRPC threads answer): a 5 s barrier timeout, two
// recoveries. The hang is released before the cluster goes (its worker's
// shutdown waits for the actor).
HungRun RunWithHungActor(const std::string& name, int num_workers) {
  HungRun hung;
  StreamingJobOptions options = SplitJobOptions(BackfillKind::kArrangement);
  options.rate_limit = RateLimit::Fixed(4000);
  options.barrier_timeout = absl::Seconds(5);
  options.max_recoveries = 2;
  options.recovery_backoff = absl::Milliseconds(10);
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    hung.errors.push_back(error.ToString());
  };
  auto faults = std::make_shared<simulation::FaultPlan>();
  faults->ArmHang(simulation::FaultOp::kIteratorMove, 200);
  Cluster cluster(name, options, num_workers, /*late=*/false, faults);
  absl::Cleanup release = [&] { faults->ReleaseHangs(); };
  EXPECT_TRUE(cluster.ok());
  if (!cluster.ok()) return hung;
  hung.run = cluster.RunJob();
  hung.faults_fired = faults->num_fired();
  hung.still_hanging = faults->hanging();
  return hung;
}

// Worker 1's actor hangs: a barrier is not collected within the barrier
// timeout; worker 1 did not emit it (and stopped reading its input, or the
// barrier reached it), so worker 1 is fenced (no longer live) and the
// recovery runs every actor on worker 0, consistent, while worker 1's actor
// is still hung. Without the fence the recovery placed an actor on worker 1
// again, whose attempt waits for the hung one: every attempt timed out
// until the recoveries ran out.
TEST(ClusterJobFailureTest, AWorkerWhoseActorHangsIsFencedAndItsActorsMove) {
  const HungRun hung = RunWithHungActor("cluster-hang", /*num_workers=*/2);
  const Cluster::Run& run = hung.run;
  EXPECT_EQ(hung.faults_fired, 1u);
  EXPECT_TRUE(hung.still_hanging);
  BACKFILL_ASSERT_OK(run.result.status())
      << ::testing::PrintToString(hung.errors);
  EXPECT_TRUE(run.result->consistent) << run.result->mismatch;
  ASSERT_EQ(run.result->recoveries, 1u)
      << ::testing::PrintToString(hung.errors);
  EXPECT_THAT(hung.errors[0],
              ::testing::HasSubstr("not collected within the barrier timeout"));
  // Why: it stopped reading its input (the source kept sending), or,
  // before its input filled, the barrier reached it and it did not emit it.
  EXPECT_THAT(
      run.fenced,
      ::testing::ElementsAre(::testing::AllOf(
          ::testing::StartsWith("worker-1: "),
          ::testing::HasSubstr("its actors did not emit barrier"),
          ::testing::AnyOf(::testing::HasSubstr("stopped reading their input"),
                           ::testing::HasSubstr("reached every input")))));
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(2u, 1u));
}

// The job's only worker hangs as above. The barrier reached it (or it
// stopped reading) while this process kept reading its output, so it is
// fenced though no other worker emitted the barrier: the recoveries then
// find no live worker (Unavailable) instead of placing the actor on the
// hung one again, and the job gives up naming that.
TEST(ClusterJobFailureTest, TheOnlyWorkerWhoseActorHangsIsFenced) {
  const HungRun hung = RunWithHungActor("cluster-hang-one", /*num_workers=*/1);
  const Cluster::Run& run = hung.run;
  EXPECT_EQ(hung.faults_fired, 1u);
  EXPECT_THAT(run.result.status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       ::testing::HasSubstr("no live worker")))
      << ::testing::PrintToString(hung.errors);
  ASSERT_FALSE(hung.errors.empty());
  EXPECT_THAT(hung.errors[0],
              ::testing::HasSubstr("not collected within the barrier timeout"));
  EXPECT_THAT(run.fenced,
              ::testing::ElementsAre(::testing::AllOf(
                  ::testing::StartsWith("worker-0: "),
                  ::testing::HasSubstr("its actors did not emit barrier"))));
  EXPECT_THAT(run.workers_per_attempt, ::testing::ElementsAre(1u, 0u, 0u));
}

}  // namespace
}  // namespace backfill
