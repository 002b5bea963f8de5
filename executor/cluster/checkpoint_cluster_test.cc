// The checkpoint protocol in one process: a CheckpointCoordinator and
// workers as objects, each with its own SharedStateStore of one shared store
// (a real 3-member etcd cluster, a local-directory object store), talking
// over a real local gRPC port.
//  * two workers write different rows at epoch 3; after the checkpoint each
//    reads the other's rows at 3 and its committed epoch is 3;
//  * a worker whose stream ends after its upload and before its sync reply
//    fails the checkpoint (Unavailable, naming it); nothing is committed, and
//    none of its rows ever becomes visible, also after the next checkpoint
//    of the remaining worker commits;
//  * a worker silent past the reply timeout (simulated time) fails it;
//  * a worker whose sync fails fails the checkpoint with its error;
//  * bad options, registrations and checkpoints are refused.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/cluster/barrier_collector.h"
#include "executor/cluster/checkpoint.grpc.pb.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 7;

// One shared store and the store objects of its processes.
class Cluster {
 public:
  explicit Cluster(const std::string& base)
      : name_(SharedStoreFixture::UniqueName(base)) {}

  // A store object as a new process would open it (own cache directory).
  std::unique_ptr<SharedStateStore> OpenStore(
      const std::function<void(SharedStateStoreOptions&)>& adjust = {}) {
    auto options = SharedStoreFixture::Options(name_);
    EXPECT_TRUE(options.ok()) << options.status();
    if (!options.ok()) return nullptr;
    if (adjust) adjust(*options);
    objects_ = options->object_store;
    auto store = SharedStateStore::Open(*options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  std::vector<std::string> Objects() {
    return SharedStoreFixture::ListKeys(*objects_, "store/sst/");
  }

 private:
  const std::string name_;
  std::shared_ptr<ObjectStore> objects_;
};

std::unique_ptr<CheckpointCoordinator> StartCoordinator(
    SharedStateStore* store) {
  auto coordinator = CheckpointCoordinator::Start({.store = store});
  EXPECT_TRUE(coordinator.ok()) << coordinator.status();
  return coordinator.ok() ? *std::move(coordinator) : nullptr;
}

std::unique_ptr<CheckpointWorker> ConnectWorker(
    const CheckpointCoordinator& coordinator, const std::string& id,
    SharedStateStore* store,
    decltype(CheckpointWorkerOptions::on_inject) on_inject = nullptr) {
  auto worker =
      CheckpointWorker::Connect({.coordinator_address = coordinator.address(),
                                 .worker_id = id,
                                 .store = store,
                                 .on_inject = std::move(on_inject)});
  EXPECT_TRUE(worker.ok()) << worker.status();
  return worker.ok() ? *std::move(worker) : nullptr;
}

TEST(CheckpointClusterTest, EachWorkerReadsTheOthersRowsAfterACheckpoint) {
  Cluster cluster("two-workers");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store && b_store);
  auto coordinator = StartCoordinator(committer.get());
  ASSERT_NE(coordinator, nullptr);
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  auto b = ConnectWorker(*coordinator, "b", b_store.get());
  ASSERT_TRUE(a && b);
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "b"));

  auto a_rows = SharedStoreFixture::SealRows(*a_store, kTable, 3,
                                             {{"a1", "x"}, {"a2", "y"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 3, {{"b1", "z"}});
  EXPECT_THAT(a_store->Get(TableKey{kTable, 0, "b1"}, Epoch(3)),
              IsOkAndHolds(std::nullopt));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(3)));
  EXPECT_EQ(result.version.committed_epoch, Epoch(3));
  EXPECT_THAT(result.workers, ElementsAre("a", "b"));
  EXPECT_THAT(result.not_applied, IsEmpty());
  // Applied before the checkpoint returned: each reads both workers' rows.
  const Rows all = {{"a1", "x"}, {"a2", "y"}, {"b1", "z"}};
  for (SharedStateStore* store :
       {a_store.get(), b_store.get(), committer.get()}) {
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(3));
    EXPECT_EQ(store->VersionId(), result.version.id);
    EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 3), all);
  }
  EXPECT_THAT(committer->SstObjects(), SizeIs(2));

  // A second checkpoint with nothing new commits an empty delta.
  BACKFILL_ASSERT_OK(a_rows->Seal(EpochPair{Epoch(5), Epoch(4)}));
  BACKFILL_ASSERT_OK(b_rows->Seal(EpochPair{Epoch(5), Epoch(4)}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(result, coordinator->Checkpoint(Epoch(4)));
  EXPECT_EQ(b_store->CommittedEpoch(kTable), Epoch(4));
  EXPECT_THAT(committer->SstObjects(), SizeIs(2));
  a_rows.reset();
  b_rows.reset();
  a->Disconnect();
  EXPECT_THAT(a->status(), StatusIs(absl::StatusCode::kCancelled));
  BACKFILL_EXPECT_OK(b->status());
}

// A worker speaking the protocol by hand: it registers and, asked to sync,
// either uploads its sync and closes its stream instead of replying (as a
// process that dies between its upload and its reply), or never answers
// (as a process that hangs).
class HandWrittenWorker {
 public:
  enum class Behaviour { kVanishAfterUpload, kNeverAnswer };

  HandWrittenWorker(const std::string& address, const std::string& id,
                    SharedStateStore* store, Behaviour behaviour)
      : store_(store), behaviour_(behaviour) {
    auto channel =
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    stub_ = cluster::proto::CheckpointService::NewStub(channel);
    stream_ = stub_->Control(&context_);
    cluster::proto::WorkerMessage registration;
    registration.mutable_registration()->set_worker_id(id);
    cluster::proto::CoordinatorMessage answer;
    registered_ = stream_->Write(registration) && stream_->Read(&answer) &&
                  answer.has_registered();
    if (registered_) thread_ = std::thread([this] { Run(); });
  }
  ~HandWrittenWorker() {
    context_.TryCancel();
    if (thread_.joinable()) thread_.join();
  }
  bool registered() const { return registered_; }
  // Valid after the stream ended: its sync's status.
  absl::Status synced() {
    if (thread_.joinable()) thread_.join();
    return synced_;
  }

 private:
  void Run() {
    cluster::proto::CoordinatorMessage message;
    if (behaviour_ == Behaviour::kNeverAnswer) {
      while (stream_->Read(&message)) {
      }
    } else if (stream_->Read(&message) && message.has_sync()) {
      synced_ = store_->SyncCheckpoint(Epoch(message.sync().epoch())).status();
      context_.TryCancel();
    }
    stream_->Finish();
  }

  SharedStateStore* const store_;
  const Behaviour behaviour_;
  std::unique_ptr<cluster::proto::CheckpointService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<cluster::proto::WorkerMessage,
                                           cluster::proto::CoordinatorMessage>>
      stream_;
  bool registered_ = false;
  absl::Status synced_ = absl::UnknownError("never asked to sync");
  std::thread thread_;
};

// commit_own_data: the committer's own sealed rows are synced and
// committed in the same version as the worker's (and alone when no worker
// is connected); without it, the committer's sealed rows make the commit
// fail, nothing committed.
TEST(CheckpointClusterTest, TheCommittersOwnDataCommitsWithTheWorkers) {
  Cluster cluster("own-data");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CheckpointCoordinator> coordinator,
      CheckpointCoordinator::Start(
          {.store = committer.get(), .commit_own_data = true}));
  auto own_rows =
      SharedStoreFixture::SealRows(*committer, kTable, 2, {{"c1", "own"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult alone,
                                coordinator->Checkpoint(Epoch(2)));
  EXPECT_THAT(alone.workers, IsEmpty());
  EXPECT_EQ(SharedStoreFixture::Scan(*committer, kTable, 2),
            (Rows{{"c1", "own"}}));

  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  ASSERT_NE(a, nullptr);
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  BACKFILL_ASSERT_OK(own_rows->Seal(EpochPair{Epoch(4), Epoch(3)}));
  auto more_own =
      SharedStoreFixture::SealRows(*committer, kTable, 3, {{"c2", "more"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult both,
                                coordinator->Checkpoint(Epoch(3)));
  EXPECT_THAT(both.workers, ElementsAre("a"));
  const Rows all = {{"a1", "x"}, {"c1", "own"}, {"c2", "more"}};
  EXPECT_EQ(SharedStoreFixture::Scan(*committer, kTable, 3), all);
  EXPECT_EQ(SharedStoreFixture::Scan(*a_store, kTable, 3), all);
  a->Disconnect();
  coordinator->Shutdown();

  // The default coordinator does not sync its committer's data.
  auto other = cluster.OpenStore();
  ASSERT_NE(other, nullptr);
  auto plain = StartCoordinator(other.get());
  ASSERT_NE(plain, nullptr);
  auto b_store = cluster.OpenStore();
  auto b = ConnectWorker(*plain, "b", b_store.get());
  ASSERT_NE(b, nullptr);
  auto unsynced =
      SharedStoreFixture::SealRows(*other, kTable, 5, {{"c3", "lost"}});
  EXPECT_THAT(plain->Checkpoint(Epoch(5)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("commit failed")));
}

// A checkpoint that must hold a registration's data fails, nothing
// committed, once that registration is gone, also when the same worker
// registered again (its sealed data went with the old one); the endpoints a
// worker registered with are listed with its registration.
TEST(CheckpointClusterTest, ARequiredRegistrationThatIsGoneFailsTheCheckpoint) {
  Cluster cluster("required");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CheckpointCoordinator> coordinator,
      CheckpointCoordinator::Start(
          {.store = committer.get(), .commit_own_data = true}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CheckpointWorker> a,
      CheckpointWorker::Connect({.coordinator_address = coordinator->address(),
                                 .worker_id = "a",
                                 .store = a_store.get(),
                                 .endpoints = {{"actor", "host:1"}}}));
  std::vector<CheckpointCoordinator::LiveWorker> live =
      coordinator->LiveWorkerEndpoints();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].worker_id, "a");
  EXPECT_EQ(live[0].endpoints.at("actor"), "host:1");
  const uint64_t first = live[0].session;
  BACKFILL_ASSERT_OK(coordinator->Checkpoint(Epoch(2), {first}).status());

  a->Disconnect();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      a,
      CheckpointWorker::Connect({.coordinator_address = coordinator->address(),
                                 .worker_id = "a",
                                 .store = a_store.get()}));
  BACKFILL_ASSERT_OK(
      coordinator->WaitForWorkers(1, absl::Now() + absl::Seconds(30)));
  ASSERT_NE(coordinator->LiveWorkerEndpoints()[0].session, first);
  EXPECT_THAT(coordinator->Checkpoint(Epoch(3), {first}),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("nothing committed"),
                             HasSubstr("no longer live"))));
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch(2));
  // Without the requirement the same checkpoint commits.
  BACKFILL_ASSERT_OK(coordinator->Checkpoint(Epoch(3)).status());
}

TEST(CheckpointClusterTest, AWorkerGoneBeforeItsSyncReplyFailsTheCheckpoint) {
  Cluster cluster("vanishing");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store && b_store);
  auto coordinator = StartCoordinator(committer.get());
  ASSERT_NE(coordinator, nullptr);
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  ASSERT_NE(a, nullptr);
  auto b = std::make_unique<HandWrittenWorker>(
      coordinator->address(), "b", b_store.get(),
      HandWrittenWorker::Behaviour::kVanishAfterUpload);
  ASSERT_TRUE(b->registered());
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 3, {{"b1", "lost"}});

  EXPECT_THAT(coordinator->Checkpoint(Epoch(3)),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("checkpoint of epoch 3 failed, "
                                       "nothing committed"),
                             HasSubstr("worker 'b' disconnected before its "
                                       "sync reply"))));
  BACKFILL_ASSERT_OK(b->synced());            // It did upload.
  EXPECT_THAT(cluster.Objects(), SizeIs(2));  // a's and b's, in no version.
  EXPECT_THAT(committer->SstObjects(), IsEmpty());
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch::Zero());
  EXPECT_EQ(a_store->CommittedEpoch(kTable), Epoch::Zero());
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a"));

  // The next checkpoint, of the live worker only: its epoch-3 rows are synced
  // again with epoch 4; b's are never committed.
  BACKFILL_ASSERT_OK(a_rows->Seal(EpochPair{Epoch(5), Epoch(4)}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(4)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  for (SharedStateStore* store : {a_store.get(), committer.get()}) {
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(4));
    EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 4), (Rows{{"a1", "x"}}));
  }
  auto fresh = cluster.OpenStore();
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 4), (Rows{{"a1", "x"}}));
  EXPECT_THAT(fresh->Get(TableKey{kTable, 0, "b1"}, Epoch(4)),
              IsOkAndHolds(std::nullopt));
  // The lost uploads (b's, and a's of epoch 3) are in no version, and the
  // vacuum removes them.
  const std::vector<std::string> listed = committer->SstObjects();
  ASSERT_THAT(listed, SizeIs(1));
  EXPECT_THAT(cluster.Objects(), SizeIs(3));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VacuumStats stats, committer->Vacuum());
  EXPECT_EQ(stats.deleted, 2u);
  EXPECT_EQ(cluster.Objects(), listed);
  a_rows.reset();
  b_rows.reset();
}

TEST(CheckpointClusterTest, AWorkerSilentPastTheReplyTimeoutFailsIt) {
  Cluster cluster("silent");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store && b_store);
  SimulatedClock clock(absl::Now());
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto coordinator,
      CheckpointCoordinator::Start({.store = committer.get(),
                                    .reply_timeout = absl::Seconds(30),
                                    .clock = &clock}));
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  ASSERT_NE(a, nullptr);
  HandWrittenWorker b(coordinator->address(), "b", b_store.get(),
                      HandWrittenWorker::Behaviour::kNeverAnswer);
  ASSERT_TRUE(b.registered());
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 2, {{"a1", "x"}});
  absl::StatusOr<CheckpointResult> result;
  std::thread checkpoint([&] { result = coordinator->Checkpoint(Epoch(2)); });
  clock.BlockUntilWaiters(1);  // Waiting for the replies.
  clock.AdvanceTime(absl::Seconds(30));
  checkpoint.join();
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kDeadlineExceeded,
                               AllOf(HasSubstr("nothing committed"),
                                     HasSubstr("worker 'b' sent no sync reply "
                                               "within 30s"))));
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch::Zero());
  // Still connected: a late worker is not dropped, only its checkpoint fails.
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "b"));

  // Through the job's store the same failure is Unavailable: the runtime
  // recovers from it (a DeadlineExceeded would end the job).
  ClusterCheckpointStore store(*committer, *coordinator);
  absl::Status through_store;
  std::thread job_checkpoint(
      [&] { through_store = store.Checkpoint(Epoch(2)); });
  clock.BlockUntilWaiters(1);
  clock.AdvanceTime(absl::Seconds(30));
  job_checkpoint.join();
  EXPECT_THAT(through_store,
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("nothing committed"),
                             HasSubstr("worker 'b' sent no sync reply "
                                       "within 30s"))));
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch::Zero());
  a_rows.reset();
}

// A worker silent past the reply timeout while another replied is named
// by the failure (SilentWorkers); the job's store fences it, so that the
// next checkpoint commits without waiting for it. (Real time: a's reply
// must arrive before the timeout.)
TEST(CheckpointClusterTest,
     TheJobsStoreFencesAWorkerSilentWhileAnotherReplied) {
  Cluster cluster("silent-fenced");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store && b_store);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto coordinator,
      CheckpointCoordinator::Start(
          {.store = committer.get(), .reply_timeout = absl::Seconds(5)}));
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  ASSERT_NE(a, nullptr);
  HandWrittenWorker b(coordinator->address(), "b", b_store.get(),
                      HandWrittenWorker::Behaviour::kNeverAnswer);
  ASSERT_TRUE(b.registered());
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 2, {{"a1", "x"}});
  absl::StatusOr<CheckpointResult> failed = coordinator->Checkpoint(Epoch(2));
  EXPECT_THAT(failed, StatusIs(absl::StatusCode::kDeadlineExceeded,
                               HasSubstr("worker 'b' sent no sync reply")));
  EXPECT_THAT(SilentWorkers(failed.status()), ElementsAre("b"));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "b"));

  ClusterCheckpointStore store(*committer, *coordinator);
  EXPECT_THAT(store.Checkpoint(Epoch(2)),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("worker 'b' sent no sync reply"),
                             HasSubstr("(fenced: 'b')"))));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a"));
  BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(2)));
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch(2));
  a_rows.reset();
}

TEST(CheckpointClusterTest, AWorkersSyncErrorFailsTheCheckpoint) {
  Cluster cluster("sync-error");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore([](SharedStateStoreOptions& options) {
    options.after_upload_for_test = [](absl::string_view key) {
      return absl::ResourceExhaustedError(
          absl::StrCat("injected after uploading ", key));
    };
  });
  ASSERT_TRUE(committer && a_store && b_store);
  auto coordinator = StartCoordinator(committer.get());
  ASSERT_NE(coordinator, nullptr);
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  auto b = ConnectWorker(*coordinator, "b", b_store.get());
  ASSERT_TRUE(a && b);
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 2, {{"a1", "x"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 2, {{"b1", "y"}});
  EXPECT_THAT(coordinator->Checkpoint(Epoch(2)),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("worker 'b': sync failed"),
                             HasSubstr("injected after uploading"))));
  EXPECT_EQ(committer->CommittedEpoch(kTable), Epoch::Zero());
  // b stays connected: the failure was its store's, not its stream's.
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "b"));
  a_rows.reset();
  b_rows.reset();
}

// Barriers over the control stream: the coordinator's inject reaches the
// worker's collector, whose answer (once the actors emitted the barrier, in
// either order) reaches the coordinator's barrier callback, naming the
// registration; a worker without actors answers with an error; an inject
// into a registration that is not live is refused.
TEST(CheckpointClusterTest, BarriersAreInjectedAndCollectedOverTheStream) {
  Cluster cluster("barriers");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  auto b_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store && b_store);
  auto coordinator = StartCoordinator(committer.get());
  ASSERT_NE(coordinator, nullptr);
  BarrierCollector collector;
  collector.Begin(4, {100, 101});
  auto a = ConnectWorker(*coordinator, "a", a_store.get(),
                         collector.InjectHandler());
  ASSERT_NE(a, nullptr);
  auto b = ConnectWorker(*coordinator, "b", b_store.get());  // No actors.
  ASSERT_NE(b, nullptr);
  const std::vector<CheckpointCoordinator::LiveWorker> live =
      coordinator->LiveWorkerEndpoints();
  ASSERT_EQ(live.size(), 2u);

  Mutex mu;
  CondVar changed;
  std::vector<CheckpointCoordinator::BarrierCollection> answers;
  coordinator->SetBarrierCallback(
      [&](const CheckpointCoordinator::BarrierCollection& answer) {
        MutexLock lock(&mu);
        answers.push_back(answer);
        changed.SignalAll();
      });
  auto wait_for = [&](size_t count) {
    MutexLock lock(&mu);
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (answers.size() < count && absl::Now() < deadline) {
      changed.WaitWithTimeout(&mu, absl::Milliseconds(50));
    }
    return answers.size();
  };
  const EpochPair first{Epoch(5), Epoch(4)};
  const EpochPair second{Epoch(6), Epoch(5)};
  // Inject first, then the emissions.
  BACKFILL_ASSERT_OK(coordinator->InjectBarrier(live[0].session, 4, first,
                                                /*checkpoint=*/true,
                                                {100, 101}));
  collector.Emitted(4, 100, first);
  absl::SleepFor(absl::Milliseconds(200));
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(answers.empty()) << "answered before actor 101 emitted it";
  }
  collector.Emitted(4, 101, first);
  ASSERT_EQ(wait_for(1), 1u);
  // The emissions first, then the inject.
  collector.Emitted(4, 100, second);
  collector.Emitted(4, 101, second);
  BACKFILL_ASSERT_OK(coordinator->InjectBarrier(live[0].session, 4, second,
                                                /*checkpoint=*/false,
                                                {100, 101}));
  ASSERT_EQ(wait_for(2), 2u);
  // The worker without actors cannot collect.
  BACKFILL_ASSERT_OK(
      coordinator->InjectBarrier(live[1].session, 4, first, true, {102}));
  ASSERT_EQ(wait_for(3), 3u);
  {
    MutexLock lock(&mu);
    EXPECT_EQ(answers[0].session, live[0].session);
    EXPECT_EQ(answers[0].worker_id, "a");
    EXPECT_EQ(answers[0].attempt_key, 4u);
    EXPECT_EQ(answers[0].epoch, first);
    BACKFILL_EXPECT_OK(answers[0].status);
    EXPECT_EQ(answers[1].epoch, second);
    BACKFILL_EXPECT_OK(answers[1].status);
    EXPECT_EQ(answers[2].worker_id, "b");
    EXPECT_THAT(answers[2].status,
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("runs no actors")));
  }
  // Checkpoints go on beside the barriers on the same stream.
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(5)));
  EXPECT_THAT(result.workers, ElementsAre("a", "b"));
  // No callback: answers are dropped; a gone registration is refused.
  coordinator->SetBarrierCallback(nullptr);
  b->Disconnect();
  ASSERT_TRUE(coordinator->WaitForWorkers(1, absl::Now()).ok());
  for (int i = 0; i < 300 && coordinator->LiveWorkers().size() > 1; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_THAT(
      coordinator->InjectBarrier(live[1].session, 4, second, false, {102}),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("not live")));
}

TEST(CheckpointClusterTest, MisuseIsRefused) {
  Cluster cluster("misuse");
  auto committer = cluster.OpenStore();
  auto a_store = cluster.OpenStore();
  ASSERT_TRUE(committer && a_store);
  EXPECT_THAT(CheckpointCoordinator::Start({}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("store is required")));
  EXPECT_THAT(
      CheckpointCoordinator::Start(
          {.store = committer.get(), .listen_address = "nowhere"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("host:port")));
  auto coordinator = StartCoordinator(committer.get());
  ASSERT_NE(coordinator, nullptr);
  EXPECT_THAT(coordinator->Checkpoint(Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no worker is connected")));
  EXPECT_THAT(coordinator->WaitForWorkers(1, absl::Now()),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  auto a = ConnectWorker(*coordinator, "a", a_store.get());
  ASSERT_NE(a, nullptr);
  BACKFILL_EXPECT_OK(coordinator->WaitForWorkers(1, absl::Now()));
  EXPECT_THAT(
      CheckpointWorker::Connect({.coordinator_address = coordinator->address(),
                                 .worker_id = "a",
                                 .store = a_store.get()}),
      StatusIs(absl::StatusCode::kAlreadyExists,
               HasSubstr("worker 'a' is already registered")));
  CheckpointWorkerOptions anonymous;
  anonymous.coordinator_address = coordinator->address();
  anonymous.store = a_store.get();
  EXPECT_THAT(
      CheckpointWorker::Connect(anonymous),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("worker_id")));
  {
    // A stream whose first message is not a Register is refused.
    auto stub = cluster::proto::CheckpointService::NewStub(grpc::CreateChannel(
        coordinator->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    auto stream = stub->Control(&context);
    cluster::proto::WorkerMessage synced;
    synced.mutable_synced()->set_epoch(2);
    cluster::proto::CoordinatorMessage answer;
    EXPECT_TRUE(stream->Write(synced));
    EXPECT_FALSE(stream->Read(&answer));
    const grpc::Status refused = stream->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(refused.error_message(), HasSubstr("must be a Register"));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(2)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  EXPECT_THAT(coordinator->Checkpoint(Epoch(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not after the committed epoch 2")));
  const std::string address = coordinator->address();
  coordinator->Shutdown();
  const absl::Status ended = a->WaitUntilEnded(absl::Now() + absl::Seconds(30));
  EXPECT_THAT(ended, Not(IsOk()));
  EXPECT_THAT(ended.message(),
              AllOf(HasSubstr("worker 'a'"), HasSubstr("ended the stream")));
  a->Disconnect();
  EXPECT_EQ(a->status(), ended);
  EXPECT_THAT(
      CheckpointWorker::Connect({.coordinator_address = address,
                                 .worker_id = "late",
                                 .store = a_store.get(),
                                 .connect_timeout = absl::Seconds(1)}),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("not reachable")));
}

}  // namespace
}  // namespace backfill
