// The control plane over a real 3-member etcd cluster: coordinators and
// workers as objects in one process (their stores of one shared store),
// over real local gRPC.
//  * the vnode assignment follows the live set (join, leave), is written to
//    etcd, and a coordinator taking over later reads the same;
//  * a worker whose lease expired (its keep-alive stopped: a paused
//    process) is fenced: a checkpoint waiting for it fails at once, it is
//    dropped from the live set and the assignment, its stream ends, and it
//    cannot register again with that lease;
//  * a reply with another assignment version fails the checkpoint;
//  * a standby coordinator takes over when the leader goes: the workers
//    reconnect to it, its next checkpoint commits and they read it; the
//    committed epoch never goes back; a deposed leader commits nothing.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/cluster/checkpoint.grpc.pb.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/cluster_worker.h"
#include "executor/cluster/job_state.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_lease_keeper.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "storage/state_store.h"
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
using Rows = SharedStoreFixture::Rows;

constexpr TableId kTable = 7;
constexpr uint32_t kVnodes = 16;

absl::Time Deadline() { return absl::Now() + absl::Seconds(20); }

// Waits (polling) until `done` holds; false at the deadline.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = Deadline();
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

// A lease kept alive until Pause() (a paused process) or destruction.
class Lease {
 public:
  Lease(EtcdClient& etcd, absl::Duration ttl) {
    auto lease = etcd.GrantLease(ttl);
    EXPECT_TRUE(lease.ok()) << lease.status();
    if (!lease.ok()) return;
    id_ = lease->id;
    keeper_ = EtcdLeaseKeeper::Start(etcd, *lease, {});
  }
  int64_t id() const { return id_; }
  void Pause() { keeper_->Stop(); }

 private:
  int64_t id_ = 0;
  std::unique_ptr<EtcdLeaseKeeper> keeper_;
};

// One job: its shared store, its etcd prefix, its coordinators' options.
class Job {
 public:
  explicit Job(const std::string& base)
      : name_(SharedStoreFixture::UniqueName(base)),
        prefix_(absl::StrCat("jobs/", name_, "/")) {
    auto etcd = SharedStoreFixture::NewEtcdClient();
    EXPECT_TRUE(etcd.ok()) << etcd.status();
    if (etcd.ok()) etcd_ = *std::move(etcd);
  }
  EtcdClient& etcd() { return *etcd_; }
  const std::string& prefix() const { return prefix_; }

  std::unique_ptr<SharedStateStore> OpenStore() {
    auto store = Open(name_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  CheckpointCoordinatorOptions CoordinatorOptions(const Lease& lease) {
    CheckpointCoordinatorOptions options;
    options.etcd = etcd_.get();
    options.job_prefix = prefix_;
    options.lease_id = lease.id();
    options.num_vnodes = kVnodes;
    options.open_store = [name = name_] { return Open(name); };
    options.poll_interval = absl::Milliseconds(50);
    return options;
  }
  std::unique_ptr<CheckpointCoordinator> StartLeader(const Lease& lease) {
    auto coordinator = CheckpointCoordinator::Start(CoordinatorOptions(lease));
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (!coordinator.ok()) return nullptr;
    EXPECT_THAT((*coordinator)->WaitUntilLeading(Deadline()), IsOk());
    return *std::move(coordinator);
  }

  // Connects to the leading coordinator (found through the election).
  absl::StatusOr<std::unique_ptr<CheckpointWorker>> Connect(
      const std::string& id, SharedStateStore* store, const Lease& lease) {
    auto address = LeadingCoordinatorAddress(*etcd_, prefix_);
    if (!address.ok()) return address.status();
    return CheckpointWorker::Connect({.coordinator_address = *address,
                                      .worker_id = id,
                                      .store = store,
                                      .lease_id = lease.id()});
  }

 private:
  static absl::StatusOr<std::unique_ptr<SharedStateStore>> Open(
      const std::string& name) {
    auto options = SharedStoreFixture::Options(name);
    if (!options.ok()) return options.status();
    return SharedStateStore::Open(*options);
  }

  const std::string name_;
  const std::string prefix_;
  std::shared_ptr<EtcdClient> etcd_;
};

std::unique_ptr<ClusterWorker> StartClusterWorker(
    Job& job, const std::string& id, SharedStateStore* store,
    const Lease& lease, std::map<std::string, std::string> endpoints = {}) {
  auto worker = ClusterWorker::Start({.etcd = &job.etcd(),
                                      .job_prefix = job.prefix(),
                                      .worker_id = id,
                                      .store = store,
                                      .lease_id = lease.id(),
                                      .endpoints = std::move(endpoints)});
  EXPECT_TRUE(worker.ok()) << worker.status();
  return worker.ok() ? *std::move(worker) : nullptr;
}

// Writes `rows` at the instance's current epoch and seals it.
void WriteMore(LocalStateStore& local, uint64_t epoch, const Rows& rows) {
  for (const auto& [pk, value] : rows) {
    EXPECT_TRUE(local.Insert(0, pk, value).ok());
  }
  EXPECT_TRUE(local.Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)}).ok());
}

// A worker speaking the protocol by hand: registers with `lease_id` and
// then answers nothing unless told to (a paused process).
class HandWrittenWorker {
 public:
  HandWrittenWorker(const std::string& address, const std::string& id,
                    int64_t lease_id) {
    stub_ = cluster::proto::CheckpointService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    stream_ = stub_->Control(&context_);
    cluster::proto::WorkerMessage registration;
    registration.mutable_registration()->set_worker_id(id);
    registration.mutable_registration()->set_lease_id(lease_id);
    cluster::proto::CoordinatorMessage answer;
    registered_ = stream_->Write(registration) && stream_->Read(&answer) &&
                  answer.has_registered();
  }
  ~HandWrittenWorker() {
    context_.TryCancel();
    if (!finished_) stream_->Finish();
  }
  bool registered() const { return registered_; }
  // The next request (false once the stream ended).
  bool Read(cluster::proto::CoordinatorMessage& message) {
    return stream_->Read(&message);
  }
  bool Write(const cluster::proto::WorkerMessage& message) {
    return stream_->Write(message);
  }
  // Reads to the end; the call's status.
  grpc::Status Finish() {
    cluster::proto::CoordinatorMessage ignored;
    while (stream_->Read(&ignored)) {
    }
    finished_ = true;
    return stream_->Finish();
  }

 private:
  std::unique_ptr<cluster::proto::CheckpointService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<cluster::proto::WorkerMessage,
                                           cluster::proto::CoordinatorMessage>>
      stream_;
  bool registered_ = false;
  bool finished_ = false;
};

TEST(ClusterControlTest, AssignmentFollowsTheLiveSetAndPersists) {
  Job job("assignment");
  Lease coordinator_lease(job.etcd(), absl::Seconds(10));
  Lease a_lease(job.etcd(), absl::Seconds(10));
  Lease b_lease(job.etcd(), absl::Seconds(10));
  auto a_store = job.OpenStore();
  auto b_store = job.OpenStore();
  ASSERT_TRUE(a_store && b_store);
  auto coordinator = job.StartLeader(coordinator_lease);
  ASSERT_NE(coordinator, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto a,
                                job.Connect("a", a_store.get(), a_lease));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<StoredJobState> stored,
                                ReadJobState(job.etcd(), job.prefix()));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->state.assignment_version, 1u);
  EXPECT_THAT(stored->state.workers,
              ElementsAre(WorkerVnodes{"a", a_lease.id(), 0, kVnodes}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto b,
                                job.Connect("b", b_store.get(), b_lease));
  std::optional<ClusterJobState> state = coordinator->State();
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->assignment_version, 2u);
  EXPECT_THAT(state->workers,
              ElementsAre(WorkerVnodes{"a", a_lease.id(), 0, 8},
                          WorkerVnodes{"b", b_lease.id(), 8, kVnodes}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(stored, ReadJobState(job.etcd(), job.prefix()));
  EXPECT_EQ(stored->state, *state);
  // Each membership key is bound to its worker's lease.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto key,
                                job.etcd().Get(WorkerKey(job.prefix(), "b")));
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->lease, b_lease.id());

  // The change takes effect at the next checkpoint: each worker runs with
  // its half from then on.
  EXPECT_EQ(a->assignment(), WorkerAssignment{});
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 3, {{"b1", "y"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(3)));
  EXPECT_THAT(result.workers, ElementsAre("a", "b"));
  EXPECT_EQ(a->assignment(), (WorkerAssignment{2, 0, 8}));
  EXPECT_EQ(b->assignment(), (WorkerAssignment{2, 8, kVnodes}));

  // b leaves: a gets every vnode, written at once.
  b->Disconnect();
  state = coordinator->State();
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->assignment_version, 3u);
  EXPECT_THAT(state->workers,
              ElementsAre(WorkerVnodes{"a", a_lease.id(), 0, kVnodes}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(key,
                                job.etcd().Get(WorkerKey(job.prefix(), "b")));
  EXPECT_FALSE(key.has_value());
  WriteMore(*a_rows, 4, {{"a2", "z"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(result, coordinator->Checkpoint(Epoch(4)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  EXPECT_EQ(a->assignment(), (WorkerAssignment{3, 0, kVnodes}));

  // A coordinator taking over later reads the same state (a's lease lives).
  const ClusterJobState last = *state;
  coordinator.reset();
  Lease next_lease(job.etcd(), absl::Seconds(10));
  auto next = job.StartLeader(next_lease);
  ASSERT_NE(next, nullptr);
  EXPECT_THAT(next->State(), ::testing::Optional(last));
  EXPECT_EQ(a_store->CommittedEpoch(kTable), Epoch(4));
  a_rows.reset();
  b_rows.reset();
}

TEST(ClusterControlTest, AnExpiredLeaseFencesAPausedWorker) {
  Job job("fencing");
  Lease coordinator_lease(job.etcd(), absl::Seconds(10));
  Lease a_lease(job.etcd(), absl::Seconds(10));
  Lease b_lease(job.etcd(), absl::Seconds(2));
  auto a_store = job.OpenStore();
  auto b_store = job.OpenStore();
  ASSERT_TRUE(a_store && b_store);
  CheckpointCoordinatorOptions options =
      job.CoordinatorOptions(coordinator_lease);
  // Far beyond the test's time: only the fence can end the wait for b.
  options.reply_timeout = absl::Hours(1);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto coordinator,
                                CheckpointCoordinator::Start(options));
  BACKFILL_ASSERT_OK(coordinator->WaitUntilLeading(Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto a,
                                job.Connect("a", a_store.get(), a_lease));
  HandWrittenWorker b(coordinator->address(), "b", b_lease.id());
  ASSERT_TRUE(b.registered());
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 3, {{"b1", "lost"}});

  // b is asked, then pauses: its keep-alive stops, it answers nothing.
  b_lease.Pause();
  absl::StatusOr<CheckpointResult> failed;
  std::thread checkpoint([&] { failed = coordinator->Checkpoint(Epoch(3)); });
  cluster::proto::CoordinatorMessage request;
  ASSERT_TRUE(b.Read(request));
  ASSERT_TRUE(request.has_sync());
  EXPECT_EQ(request.sync().assignment_version(), 2u);
  checkpoint.join();
  EXPECT_THAT(
      failed,
      StatusIs(absl::StatusCode::kUnavailable,
               AllOf(HasSubstr("nothing committed"),
                     HasSubstr(absl::StrCat("worker 'b' was fenced: "
                                            "its lease ",
                                            b_lease.id(), " expired")))));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a"));
  std::optional<ClusterJobState> state = coordinator->State();
  ASSERT_TRUE(state.has_value());
  EXPECT_THAT(state->workers,
              ElementsAre(WorkerVnodes{"a", a_lease.id(), 0, kVnodes}));

  // b resumes: its late Synced counts for nothing (its stream was ended),
  // and it cannot come back with its lease.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore::SyncResult late,
                                b_store->SyncCheckpoint(Epoch(3)));
  cluster::proto::WorkerMessage synced;
  synced.mutable_synced()->set_epoch(3);
  synced.mutable_synced()->set_assignment_version(2);
  for (std::string& descriptor : late.descriptors) {
    synced.mutable_synced()->add_descriptors(std::move(descriptor));
  }
  b.Write(synced);
  EXPECT_NE(b.Finish().error_code(), grpc::StatusCode::OK);
  HandWrittenWorker again(coordinator->address(), "b", b_lease.id());
  EXPECT_FALSE(again.registered());
  const grpc::Status refused = again.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("fenced"));
  EXPECT_THAT(
      job.Connect("b", b_store.get(), b_lease),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));

  // The next checkpoint commits a's rows only.
  WriteMore(*a_rows, 4, {});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(4)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  auto fresh = job.OpenStore();
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(SharedStoreFixture::Scan(*fresh, kTable, 4), (Rows{{"a1", "x"}}));
  EXPECT_EQ(a->assignment(), (WorkerAssignment{3, 0, kVnodes}));

  // A CheckpointWorker whose lease stops is fenced between checkpoints too:
  // its stream ends.
  Lease c_lease(job.etcd(), absl::Seconds(2));
  auto c_store = job.OpenStore();
  ASSERT_NE(c_store, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto c,
                                job.Connect("c", c_store.get(), c_lease));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "c"));
  c_lease.Pause();
  EXPECT_THAT(c->WaitUntilEnded(Deadline()), Not(IsOk()));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a"));
  a_rows.reset();
  b_rows.reset();
}

// A worker that keeps its lease but holds up the job (its actors hang) is
// fenced on demand: dropped from the live set and the assignment, its
// membership key deleted, its lease revoked, so that neither this
// coordinator nor a successor takes it back.
TEST(ClusterControlTest, FenceWorkerDropsALiveWorkerAndRevokesItsLease) {
  Job job("fence-worker");
  Lease coordinator_lease(job.etcd(), absl::Seconds(10));
  Lease a_lease(job.etcd(), absl::Seconds(10));
  Lease b_lease(job.etcd(), absl::Seconds(10));
  auto a_store = job.OpenStore();
  auto b_store = job.OpenStore();
  ASSERT_TRUE(a_store && b_store);
  auto coordinator = job.StartLeader(coordinator_lease);
  ASSERT_NE(coordinator, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto a,
                                job.Connect("a", a_store.get(), a_lease));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto b,
                                job.Connect("b", b_store.get(), b_lease));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a", "b"));

  BACKFILL_ASSERT_OK(coordinator->FenceWorker("b", "its actors hang"));
  EXPECT_THAT(coordinator->LiveWorkers(), ElementsAre("a"));
  EXPECT_THAT(b->WaitUntilEnded(Deadline()), Not(IsOk()));
  std::optional<ClusterJobState> state = coordinator->State();
  ASSERT_TRUE(state.has_value());
  EXPECT_THAT(state->workers,
              ElementsAre(WorkerVnodes{"a", a_lease.id(), 0, kVnodes}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> key,
                                job.etcd().Get(WorkerKey(job.prefix(), "b")));
  EXPECT_FALSE(key.has_value());
  EXPECT_THAT(job.etcd().LeaseTimeToLive(b_lease.id()),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      job.Connect("b", b_store.get(), b_lease),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
  EXPECT_THAT(coordinator->FenceWorker("b", "again"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("'b'")));

  // The next checkpoint is a's alone, with every vnode.
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                coordinator->Checkpoint(Epoch(3)));
  EXPECT_THAT(result.workers, ElementsAre("a"));
  EXPECT_EQ(a->assignment().first_vnode, 0u);
  EXPECT_EQ(a->assignment().end_vnode, kVnodes);

  // A coordinator taking over refuses it too: its lease is gone.
  coordinator.reset();
  Lease next_lease(job.etcd(), absl::Seconds(10));
  auto next = job.StartLeader(next_lease);
  ASSERT_NE(next, nullptr);
  EXPECT_THAT(
      job.Connect("b", b_store.get(), b_lease),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
  a_rows.reset();
}

TEST(ClusterControlTest, AReplyWithAnotherAssignmentVersionIsRefused) {
  Job job("stale-assignment");
  Lease coordinator_lease(job.etcd(), absl::Seconds(10));
  Lease b_lease(job.etcd(), absl::Seconds(10));
  auto b_store = job.OpenStore();
  ASSERT_NE(b_store, nullptr);
  auto coordinator = job.StartLeader(coordinator_lease);
  ASSERT_NE(coordinator, nullptr);
  HandWrittenWorker b(coordinator->address(), "b", b_lease.id());
  ASSERT_TRUE(b.registered());
  absl::StatusOr<CheckpointResult> failed;
  std::thread checkpoint([&] { failed = coordinator->Checkpoint(Epoch(2)); });
  cluster::proto::CoordinatorMessage request;
  ASSERT_TRUE(b.Read(request));
  ASSERT_EQ(request.sync().assignment_version(), 1u);
  cluster::proto::WorkerMessage synced;
  synced.mutable_synced()->set_epoch(2);
  synced.mutable_synced()->set_assignment_version(0);  // stale
  ASSERT_TRUE(b.Write(synced));
  checkpoint.join();
  EXPECT_THAT(failed, StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("worker 'b' synced with assignment "
                                         "version 0, not 1")));
  // Without a lease a registration is refused.
  HandWrittenWorker anonymous(coordinator->address(), "c", 0);
  EXPECT_FALSE(anonymous.registered());
  EXPECT_EQ(anonymous.Finish().error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(ClusterControlTest, AStandbyTakesOverAndTheWorkersFollow) {
  Job job("failover");
  Lease first_lease(job.etcd(), absl::Seconds(10));
  Lease second_lease(job.etcd(), absl::Seconds(10));
  Lease a_lease(job.etcd(), absl::Seconds(10));
  Lease b_lease(job.etcd(), absl::Seconds(10));
  auto a_store = job.OpenStore();
  auto b_store = job.OpenStore();
  ASSERT_TRUE(a_store && b_store);
  auto first = job.StartLeader(first_lease);
  ASSERT_NE(first, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto standby,
      CheckpointCoordinator::Start(job.CoordinatorOptions(second_lease)));
  EXPECT_FALSE(standby->IsLeading());
  EXPECT_EQ(standby->store(), nullptr);  // Opened when it takes over.
  EXPECT_THAT(standby->Checkpoint(Epoch(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("does not lead")));
  // A standby refuses registrations.
  HandWrittenWorker early(standby->address(), "early", a_lease.id());
  EXPECT_FALSE(early.registered());
  EXPECT_EQ(early.Finish().error_code(), grpc::StatusCode::UNAVAILABLE);

  // The workers follow the leader (found through the election).
  // a first: the registration order is the assignment's.
  // a registers with endpoints (as a worker with an actor service does).
  const std::map<std::string, std::string> a_endpoints = {
      {"actor", "a-host:1"}, {"exchange", "a-host:2"}};
  auto a = StartClusterWorker(job, "a", a_store.get(), a_lease, a_endpoints);
  ASSERT_NE(a, nullptr);
  BACKFILL_ASSERT_OK(a->WaitForRegistrations(1, Deadline()));
  auto b = StartClusterWorker(job, "b", b_store.get(), b_lease);
  ASSERT_NE(b, nullptr);
  BACKFILL_ASSERT_OK(b->WaitForRegistrations(1, Deadline()));
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  auto b_rows =
      SharedStoreFixture::SealRows(*b_store, kTable, 3, {{"b1", "y"}});
  BACKFILL_ASSERT_OK(first->Checkpoint(Epoch(3)).status());
  const ClusterJobState before = *first->State();

  // The leader goes mid-run; the standby takes over with the same state,
  // and the workers register with it, with their leases (the assignment
  // does not change).
  first.reset();
  BACKFILL_ASSERT_OK(standby->WaitUntilLeading(Deadline()));
  EXPECT_THAT(standby->State(), ::testing::Optional(before));
  BACKFILL_ASSERT_OK(a->WaitForRegistrations(2, Deadline()));
  BACKFILL_ASSERT_OK(b->WaitForRegistrations(2, Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::string leader, LeadingCoordinatorAddress(job.etcd(), job.prefix()));
  EXPECT_EQ(leader, standby->address());
  EXPECT_THAT(standby->State(), ::testing::Optional(before));
  // Its store loaded the version the first leader committed; a's
  // endpoints came with its new registration.
  ASSERT_NE(standby->store(), nullptr);
  EXPECT_EQ(standby->store()->CommittedEpoch(kTable), Epoch(3));
  std::map<std::string, std::map<std::string, std::string>> endpoints;
  for (const CheckpointCoordinator::LiveWorker& worker :
       standby->LiveWorkerEndpoints()) {
    endpoints[worker.worker_id] = worker.endpoints;
  }
  EXPECT_THAT(endpoints, ElementsAre(::testing::Pair("a", a_endpoints),
                                     ::testing::Pair("b", IsEmpty())));

  // The committed epoch never goes back; the next checkpoint commits.
  EXPECT_THAT(standby->Checkpoint(Epoch(3)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not after the committed epoch 3")));
  WriteMore(*a_rows, 4, {{"a2", "x2"}});
  WriteMore(*b_rows, 4, {{"b2", "y2"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                standby->Checkpoint(Epoch(4)));
  EXPECT_THAT(result.workers, ElementsAre("a", "b"));
  EXPECT_THAT(result.not_applied, IsEmpty());
  const Rows all = {{"a1", "x"}, {"a2", "x2"}, {"b1", "y"}, {"b2", "y2"}};
  for (SharedStateStore* store : {a_store.get(), b_store.get()}) {
    EXPECT_EQ(store->CommittedEpoch(kTable), Epoch(4));
    EXPECT_EQ(SharedStoreFixture::Scan(*store, kTable, 4), all);
  }
  EXPECT_EQ(a->assignment(), (WorkerAssignment{2, 0, 8}));
  a->Stop();
  EXPECT_THAT(a->status(), StatusIs(absl::StatusCode::kCancelled));
  BACKFILL_EXPECT_OK(b->status());
  a_rows.reset();
  b_rows.reset();
}

TEST(ClusterControlTest, ALeaderWhoseLeaseEndsIsDeposedAndCommitsNothing) {
  Job job("deposed");
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease first_lease,
                                job.etcd().GrantLease(absl::Seconds(10)));
  Lease second_lease(job.etcd(), absl::Seconds(10));
  Lease a_lease(job.etcd(), absl::Seconds(10));
  auto a_store = job.OpenStore();
  ASSERT_NE(a_store, nullptr);
  CheckpointCoordinatorOptions options = job.CoordinatorOptions(second_lease);
  options.lease_id = first_lease.id;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto first,
                                CheckpointCoordinator::Start(options));
  BACKFILL_ASSERT_OK(first->WaitUntilLeading(Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto standby,
      CheckpointCoordinator::Start(job.CoordinatorOptions(second_lease)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto a,
                                job.Connect("a", a_store.get(), a_lease));
  auto a_rows =
      SharedStoreFixture::SealRows(*a_store, kTable, 3, {{"a1", "x"}});
  BACKFILL_ASSERT_OK(first->Checkpoint(Epoch(3)).status());

  // The leader's lease ends (as when its process hangs past the TTL).
  BACKFILL_ASSERT_OK(job.etcd().RevokeLease(first_lease.id));
  BACKFILL_ASSERT_OK(standby->WaitUntilLeading(Deadline()));
  ASSERT_TRUE(Eventually([&] { return !first->IsLeading(); }));
  EXPECT_THAT(first->WaitUntilLeading(Deadline()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("lost the lead")));
  EXPECT_THAT(first->Checkpoint(Epoch(4)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("does not lead")));
  EXPECT_THAT(a->WaitUntilEnded(Deadline()), Not(IsOk()));
  EXPECT_THAT(standby->Checkpoint(Epoch(4)),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("live workers not connected: a")));
  a.reset();
  BACKFILL_ASSERT_OK_AND_ASSIGN(a, job.Connect("a", a_store.get(), a_lease));
  WriteMore(*a_rows, 4, {{"a2", "x2"}});
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                standby->Checkpoint(Epoch(4)));
  EXPECT_EQ(result.version.committed_epoch, Epoch(4));
  EXPECT_EQ(a_store->CommittedEpoch(kTable), Epoch(4));
  a_rows.reset();
}

// A version another committer wrote after the leader opened its store (a
// deposed leader's last compaction, say) fences the leader's commits, and a
// store whose commit failed refuses later ones: ReopenStore loads the
// current version and the leader commits again.
TEST(ClusterControlTest,
     ALeaderReopensItsStoreAfterAnotherCommitterOvertookIt) {
  Job job("reopen");
  Lease lease(job.etcd(), absl::Seconds(10));
  Lease standby_lease(job.etcd(), absl::Seconds(10));
  CheckpointCoordinatorOptions options = job.CoordinatorOptions(lease);
  options.commit_own_data = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto leader,
                                CheckpointCoordinator::Start(options));
  BACKFILL_ASSERT_OK(leader->WaitUntilLeading(Deadline()));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto standby,
      CheckpointCoordinator::Start(job.CoordinatorOptions(standby_lease)));
  BACKFILL_ASSERT_OK(leader->Checkpoint(Epoch(3)).status());

  auto intruder = job.OpenStore();
  ASSERT_NE(intruder, nullptr);
  BACKFILL_ASSERT_OK(intruder->Checkpoint(Epoch(4)));
  EXPECT_THAT(leader->Checkpoint(Epoch(5)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("changed by another committer")));
  // The store whose commit failed commits nothing more.
  EXPECT_THAT(leader->Checkpoint(Epoch(6)), Not(IsOk()));

  EXPECT_THAT(standby->ReopenStore(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SharedStateStore * reopened,
                                leader->ReopenStore());
  EXPECT_EQ(leader->store(), reopened);
  EXPECT_EQ(reopened->CommittedEpoch(kTable), Epoch(4));
  BACKFILL_ASSERT_OK_AND_ASSIGN(CheckpointResult result,
                                leader->Checkpoint(Epoch(5)));
  EXPECT_EQ(result.version.committed_epoch, Epoch(5));
  // Only the leader records what only the leader may.
  EXPECT_THAT(leader->PutIfLeading({job.prefix() + "done", "yes"}),
              IsOkAndHolds(true));
  EXPECT_THAT(standby->PutIfLeading({job.prefix() + "done", "no"}),
              IsOkAndHolds(false));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> done,
                                job.etcd().Get(job.prefix() + "done"));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->value, "yes");
}

}  // namespace
}  // namespace backfill
