#include "executor/cluster/checkpoint_coordinator.h"

#include <chrono>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "executor/cluster/checkpoint.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// SilentWorkers' payload: the worker ids, one per line.
constexpr absl::string_view kSilentWorkersPayload =
    "type.googleapis.com/backfill.SilentWorkers";

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// A worker's reply: OK, or its error code and message.
absl::Status FromReply(int32_t code, const std::string& message) {
  if (code == 0) return absl::OkStatus();
  if (code < 0 ||
      code > static_cast<int32_t>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(
        absl::StrCat("(a worker sent status code ", code, ") ", message));
  }
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

}  // namespace

// One worker's stream. Writes come from the checkpointing thread; the
// handler thread reads, and closes the session before its call returns:
// the stream is gone then, the session may live on in a checkpoint's list.
struct CheckpointCoordinator::Session {
  using Stream = grpc::ServerReaderWriter<cluster::proto::CoordinatorMessage,
                                          cluster::proto::WorkerMessage>;
  Session(grpc::ServerContext* context, Stream* stream)
      : context(context), stream(stream) {}

  // Sends `message` unless the session is closed; false if not sent.
  bool Send(const cluster::proto::CoordinatorMessage& message) {
    MutexLock lock(&write_mu);
    return !closed && stream->Write(message);
  }
  void Close() {
    MutexLock lock(&write_mu);
    closed = true;
  }

  grpc::ServerContext* const context;
  Stream* const stream;
  // Set before the session is shared, constant after.
  std::string worker_id;
  int64_t lease_id = 0;
  std::map<std::string, std::string> endpoints;
  uint64_t number = 0;
  Mutex write_mu;
  bool closed ABSL_GUARDED_BY(write_mu) = false;
};

class CheckpointCoordinator::Service final
    : public cluster::proto::CheckpointService::Service {
 public:
  explicit Service(CheckpointCoordinator* coordinator)
      : coordinator_(coordinator) {}

  grpc::Status Control(grpc::ServerContext* context,
                       Session::Stream* stream) override {
    return ToGrpc(
        coordinator_->Serve(std::make_shared<Session>(context, stream)));
  }

 private:
  CheckpointCoordinator* const coordinator_;
};

absl::StatusOr<std::unique_ptr<CheckpointCoordinator>>
CheckpointCoordinator::Start(const CheckpointCoordinatorOptions& options) {
  if (options.etcd == nullptr && options.store == nullptr) {
    return absl::InvalidArgumentError(
        "CheckpointCoordinatorOptions.store is required");
  }
  if (options.etcd != nullptr) {
    if (options.store != nullptr || !options.open_store) {
      return absl::InvalidArgumentError(
          "CheckpointCoordinatorOptions: with etcd, open_store is required "
          "and store must be null");
    }
    if (options.job_prefix.empty() || options.lease_id == 0 ||
        options.num_vnodes == 0 ||
        options.poll_interval <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CheckpointCoordinatorOptions: with etcd, job_prefix, lease_id, "
          "num_vnodes and poll_interval are required: job_prefix '",
          options.job_prefix, "', lease_id ", options.lease_id, ", num_vnodes ",
          options.num_vnodes, ", poll_interval ",
          absl::FormatDuration(options.poll_interval)));
    }
  }
  if (options.reply_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CheckpointCoordinatorOptions.reply_timeout must be > 0: ",
                     absl::FormatDuration(options.reply_timeout)));
  }
  const size_t colon = options.listen_address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CheckpointCoordinatorOptions.listen_address must be "
                     "host:port: '",
                     options.listen_address, "'"));
  }
  Clock& clock = options.clock != nullptr ? *options.clock : Clock::Real();
  std::unique_ptr<CheckpointCoordinator> coordinator(
      new CheckpointCoordinator(options, clock));
  coordinator->service_ = std::make_unique<Service>(coordinator.get());
  grpc::ServerBuilder builder;
  ConfigureKeepalive(builder, options.keepalive);
  int port = 0;
  builder.AddListeningPort(options.listen_address,
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(coordinator->service_.get());
  coordinator->server_ = builder.BuildAndStart();
  if (coordinator->server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("checkpoint coordinator cannot listen on '",
                     options.listen_address, "'"));
  }
  coordinator->address_ =
      absl::StrCat(options.listen_address.substr(0, colon), ":", port);
  if (options.etcd == nullptr) {
    MutexLock lock(&coordinator->mu_);
    coordinator->role_ = Role::kLeading;
    coordinator->store_ = options.store;
    return coordinator;
  }
  coordinator->election_ = std::make_unique<EtcdElection>(
      *options.etcd, CoordinatorElectionPrefix(options.job_prefix));
  absl::StatusOr<EtcdCandidacy> candidacy =
      coordinator->election_->Campaign(options.lease_id, coordinator->address_);
  if (!candidacy.ok()) {
    return absl::Status(
        candidacy.status().code(),
        absl::StrCat("checkpoint coordinator at ", coordinator->address_,
                     ": campaign failed: ", candidacy.status().message()));
  }
  coordinator->candidacy_ = *std::move(candidacy);
  coordinator->control_thread_ =
      std::thread([raw = coordinator.get()] { raw->Control(); });
  return coordinator;
}

CheckpointCoordinator::CheckpointCoordinator(
    const CheckpointCoordinatorOptions& options, Clock& clock)
    : options_(options), clock_(clock) {}

CheckpointCoordinator::~CheckpointCoordinator() { Shutdown(); }

bool CheckpointCoordinator::IsLeading() const {
  MutexLock lock(&mu_);
  return role_ == Role::kLeading;
}

absl::StatusOr<bool> CheckpointCoordinator::PutIfLeading(EtcdPut put) {
  if (election_ == nullptr) {
    return absl::FailedPreconditionError(
        "PutIfLeading: a coordinator without etcd has no election");
  }
  if (!IsLeading()) return false;
  EtcdTxn txn;
  txn.compares = {EtcdElection::Fence(candidacy_)};
  txn.then_puts = {std::move(put)};
  BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, options_.etcd->Txn(txn));
  return result.succeeded;
}

absl::Status CheckpointCoordinator::WaitUntilLeading(absl::Time deadline) {
  MutexLock lock(&mu_);
  clock_.WaitUntil(
      mu_, changed_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return shut_down_ || role_ != Role::kStandby;
      },
      deadline);
  if (shut_down_) {
    return absl::UnavailableError("checkpoint coordinator shut down");
  }
  if (role_ == Role::kLeading) return absl::OkStatus();
  if (role_ == Role::kDeposed) return deposed_;
  return absl::DeadlineExceededError(
      absl::StrCat("checkpoint coordinator at ", address_, " does not lead at ",
                   absl::FormatTime(deadline)));
}

std::optional<ClusterJobState> CheckpointCoordinator::State() const {
  if (options_.etcd == nullptr || !IsLeading()) return std::nullopt;
  MutexLock state_lock(&state_mu_);
  return state_;
}

std::string CheckpointCoordinator::address() const { return address_; }

SharedStateStore* CheckpointCoordinator::store() const {
  MutexLock lock(&mu_);
  return store_;
}

absl::StatusOr<SharedStateStore*> CheckpointCoordinator::ReopenStore() {
  std::unique_ptr<SharedStateStore> old;
  {
    MutexLock lock(&mu_);
    if (role_ != Role::kLeading || !options_.open_store ||
        owned_store_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint coordinator at ", address_,
                       ": only a leader that opened its store can reopen it"));
    }
    old = std::move(owned_store_);
    store_ = nullptr;
  }
  // Its compactions land before the new store reads the version (the two
  // must not share the cache directory at once either).
  old->WaitForMaintenance().IgnoreError();
  old.reset();
  absl::StatusOr<std::unique_ptr<SharedStateStore>> store =
      options_.open_store();
  if (!store.ok()) {
    return absl::Status(
        store.status().code(),
        absl::StrCat("checkpoint coordinator at ", address_,
                     ": reopening the store: ", store.status().message()));
  }
  MutexLock lock(&mu_);
  owned_store_ = *std::move(store);
  store_ = owned_store_.get();
  return store_;
}

std::vector<std::string> CheckpointCoordinator::LiveWorkers() const {
  MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [number, session] : sessions_) {
    ids.push_back(session->worker_id);
  }
  return ids;
}

std::vector<CheckpointCoordinator::LiveWorker>
CheckpointCoordinator::LiveWorkerEndpoints() const {
  MutexLock lock(&mu_);
  std::vector<LiveWorker> workers;
  for (const auto& [number, session] : sessions_) {
    workers.push_back({session->worker_id, session->endpoints, number});
  }
  return workers;
}

absl::Status CheckpointCoordinator::WaitForWorkers(size_t count,
                                                   absl::Time deadline) {
  MutexLock lock(&mu_);
  clock_.WaitUntil(
      mu_, changed_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return shut_down_ || sessions_.size() >= count;
      },
      deadline);
  if (shut_down_) {
    return absl::UnavailableError("checkpoint coordinator shut down");
  }
  if (sessions_.size() >= count) return absl::OkStatus();
  std::vector<std::string> ids;
  for (const auto& [number, session] : sessions_) {
    ids.push_back(session->worker_id);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("waiting for ", count, " workers: ", sessions_.size(),
                   " live [", absl::StrJoin(ids, ", "), "] at the deadline ",
                   absl::FormatTime(deadline)));
}

absl::Status CheckpointCoordinator::Serve(std::shared_ptr<Session> session) {
  cluster::proto::WorkerMessage message;
  if (!session->stream->Read(&message)) {
    return absl::CancelledError("the stream ended before its Register");
  }
  if (message.kind_case() != cluster::proto::WorkerMessage::kRegistration) {
    return absl::InvalidArgumentError(
        absl::StrCat("the stream's first message must be a Register, not "
                     "message kind ",
                     message.kind_case()));
  }
  const std::string worker_id = message.registration().worker_id();
  if (worker_id.empty()) {
    return absl::InvalidArgumentError("Register with an empty worker_id");
  }
  const int64_t lease_id = message.registration().lease_id();
  session->lease_id = lease_id;
  session->endpoints.insert(message.registration().endpoints().begin(),
                            message.registration().endpoints().end());
  bool registered = false;
  {
    // The whole registration under state_mu_: a Leave of the worker's
    // previous session or a FenceExpired of its lease comes before it (the
    // Join below sees the result) or after the session is live (they see
    // it), never between the Join and the insertion.
    MutexLock state_lock(&state_mu_);
    if (options_.etcd != nullptr) {
      if (lease_id == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "worker '", worker_id, "' registered without a lease"));
      }
      {
        MutexLock lock(&mu_);
        BACKFILL_RETURN_IF_ERROR(CheckCanRegister(worker_id, lease_id));
      }
      BACKFILL_RETURN_IF_ERROR(JoinLocked(worker_id, lease_id));
    }
    // Registered goes out before anything a checkpoint sends: the session
    // is visible to checkpoints from the insertion on, and their sends wait
    // for this lock.
    MutexLock write_lock(&session->write_mu);
    {
      MutexLock lock(&mu_);
      // Again: the coordinator may have been deposed or shut down during
      // the Join.
      BACKFILL_RETURN_IF_ERROR(CheckCanRegister(worker_id, lease_id));
      session->worker_id = worker_id;
      session->number = next_session_++;
      sessions_[session->number] = session;
    }
    cluster::proto::CoordinatorMessage answer;
    answer.mutable_registered();
    registered = session->stream->Write(answer);
  }
  changed_.SignalAll();
  absl::Status ended = absl::OkStatus();
  if (registered) {
    while (session->stream->Read(&message)) {
      Reply reply;
      Phase phase = Phase::kIdle;
      uint64_t epoch = 0;
      if (message.kind_case() == cluster::proto::WorkerMessage::kSynced) {
        const cluster::proto::Synced& synced = message.synced();
        phase = Phase::kSync;
        epoch = synced.epoch();
        reply.status = FromReply(synced.error_code(), synced.error_message());
        reply.descriptors.assign(synced.descriptors().begin(),
                                 synced.descriptors().end());
        reply.assignment_version = synced.assignment_version();
      } else if (message.kind_case() ==
                 cluster::proto::WorkerMessage::kCollected) {
        const cluster::proto::BarrierCollected& collected = message.collected();
        {
          MutexLock lock(&mu_);
          // A fenced worker's answers are never read.
          if (!sessions_.contains(session->number)) continue;
        }
        MutexLock barrier_lock(&barrier_mu_);
        if (barrier_callback_) {
          barrier_callback_(BarrierCollection{
              .session = session->number,
              .worker_id = worker_id,
              .attempt_key = collected.attempt_key(),
              .epoch = {Epoch(collected.curr_epoch()),
                        Epoch(collected.prev_epoch())},
              .status = FromReply(collected.error_code(),
                                  collected.error_message())});
        }
        continue;
      } else if (message.kind_case() ==
                 cluster::proto::WorkerMessage::kApplied) {
        const cluster::proto::Applied& applied = message.applied();
        phase = Phase::kApply;
        epoch = applied.epoch();
        reply.status = FromReply(applied.error_code(), applied.error_message());
      } else {
        ended = absl::InvalidArgumentError(
            absl::StrCat("worker '", worker_id, "' sent message kind ",
                         message.kind_case(), " after registering"));
        break;
      }
      MutexLock lock(&mu_);
      // A late reply to an earlier checkpoint or phase is ignored, and so is
      // anything a fenced worker sends.
      if (phase == phase_ && epoch == epoch_.value() &&
          asked_.contains(session->number) &&
          sessions_.contains(session->number)) {
        replies_.emplace(session->number, std::move(reply));
        changed_.SignalAll();
      }
    }
  }
  session->Close();
  absl::Status fenced = absl::OkStatus();
  bool left = false;
  {
    MutexLock lock(&mu_);
    left = sessions_.erase(session->number) > 0;
    auto fence = fenced_.find(session->number);
    if (fence != fenced_.end()) fenced = fence->second;
  }
  changed_.SignalAll();
  if (left && options_.etcd != nullptr) {
    Leave(worker_id, lease_id);
  }
  return fenced.ok() ? ended : fenced;
}

absl::Status CheckpointCoordinator::InjectBarrier(
    uint64_t session, uint64_t attempt_key, EpochPair epoch, bool checkpoint,
    const std::vector<uint32_t>& actors) {
  std::shared_ptr<Session> target;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(session);
    if (shut_down_ || it == sessions_.end()) {
      return absl::UnavailableError(
          absl::StrCat("cannot inject barrier ", epoch.DebugString(),
                       " into registration ", session, ": it is not live",
                       shut_down_ ? " (the coordinator shut down)" : ""));
    }
    target = it->second;
  }
  cluster::proto::CoordinatorMessage message;
  cluster::proto::InjectBarrier& inject = *message.mutable_inject();
  inject.set_attempt_key(attempt_key);
  inject.set_curr_epoch(epoch.curr.value());
  inject.set_prev_epoch(epoch.prev.value());
  inject.set_checkpoint(checkpoint);
  for (uint32_t actor : actors) inject.add_actors_to_collect(actor);
  if (!target->Send(message)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot inject barrier ", epoch.DebugString(), " into worker '",
        target->worker_id, "': its stream ended"));
  }
  return absl::OkStatus();
}

void CheckpointCoordinator::SetBarrierCallback(
    std::function<void(const BarrierCollection&)> callback) {
  MutexLock lock(&barrier_mu_);
  barrier_callback_ = std::move(callback);
}

void CheckpointCoordinator::WaitForReplies(
    const std::vector<std::shared_ptr<Session>>& asked) {
  clock_.WaitUntil(
      mu_, changed_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (shut_down_) return true;
        for (const std::shared_ptr<Session>& session : asked) {
          if (!replies_.contains(session->number) &&
              sessions_.contains(session->number)) {
            return false;
          }
        }
        return true;
      },
      clock_.Now() + options_.reply_timeout);
}

absl::Status CheckpointCoordinator::MissingReply(const Session& session,
                                                 absl::string_view what) {
  if (shut_down_) {
    return absl::UnavailableError(
        absl::StrCat("worker '", session.worker_id, "': no ", what,
                     " reply: the coordinator shut down"));
  }
  auto fence = fenced_.find(session.number);
  if (fence != fenced_.end()) {
    return absl::UnavailableError(
        absl::StrCat("worker '", session.worker_id, "': no ", what,
                     " reply: ", fence->second.message()));
  }
  if (!sessions_.contains(session.number)) {
    return absl::UnavailableError(absl::StrCat("worker '", session.worker_id,
                                               "' disconnected before its ",
                                               what, " reply"));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "worker '", session.worker_id, "' sent no ", what, " reply within ",
      absl::FormatDuration(options_.reply_timeout)));
}

std::vector<std::string> SilentWorkers(const absl::Status& status) {
  const auto payload = status.GetPayload(kSilentWorkersPayload);
  if (!payload.has_value()) return {};
  return absl::StrSplit(std::string(*payload), '\n', absl::SkipEmpty());
}

absl::StatusOr<CheckpointResult> CheckpointCoordinator::Checkpoint(
    Epoch epoch, const std::set<uint64_t>& required_sessions) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  const std::string context =
      absl::StrCat("checkpoint of epoch ", epoch.value());
  // With a control plane: the state's workers, each with its vnodes.
  std::optional<ClusterJobState> state;
  if (options_.etcd != nullptr) {
    MutexLock state_lock(&state_mu_);
    state = state_;
  }
  std::vector<std::shared_ptr<Session>> asked;
  SharedStateStore* store = nullptr;
  {
    MutexLock lock(&mu_);
    if (shut_down_) {
      return absl::UnavailableError(
          absl::StrCat(context, ": the coordinator shut down"));
    }
    if (role_ != Role::kLeading) {
      return absl::FailedPreconditionError(absl::StrCat(
          context, ": the coordinator at ", address_, " does not lead"));
    }
    store = store_;
    if (state.has_value()) {
      std::vector<std::string> missing;
      for (const WorkerVnodes& worker : state->workers) {
        std::shared_ptr<Session> found;
        for (const auto& [number, session] : sessions_) {
          if (session->worker_id == worker.worker_id &&
              session->lease_id == worker.lease_id) {
            found = session;
          }
        }
        if (found == nullptr) {
          missing.push_back(worker.worker_id);
        } else {
          asked.push_back(std::move(found));
        }
      }
      if (!missing.empty()) {
        return absl::UnavailableError(absl::StrCat(
            context,
            ": live workers not connected: ", absl::StrJoin(missing, ", ")));
      }
    } else {
      for (const auto& [number, session] : sessions_) asked.push_back(session);
    }
    // Against the workers asked: with a control plane a fenced worker
    // leaves the state before its session goes.
    std::set<uint64_t> asked_numbers;
    for (const std::shared_ptr<Session>& session : asked) {
      asked_numbers.insert(session->number);
    }
    for (const uint64_t required : required_sessions) {
      if (!asked_numbers.contains(required)) {
        return absl::UnavailableError(absl::StrCat(
            context, ": nothing committed: registration ", required,
            " ran actors of these epochs but is no longer live or not asked "
            "(its "
            "sealed data went with it)"));
      }
    }
    if (asked.empty() && !options_.commit_own_data) {
      return absl::FailedPreconditionError(
          absl::StrCat(context, ": no worker is connected"));
    }
  }
  const Epoch committed = store->CommittedEpoch(/*table_id=*/0);
  if (epoch <= committed) {
    return absl::FailedPreconditionError(absl::StrCat(
        context, ": not after the committed epoch ", committed.value()));
  }
  {
    MutexLock lock(&mu_);
    phase_ = Phase::kSync;
    epoch_ = epoch;
    asked_.clear();
    for (const std::shared_ptr<Session>& session : asked) {
      asked_.insert(session->number);
    }
    replies_.clear();
  }
  // However the checkpoint ends, its replies go and late ones are ignored.
  absl::Cleanup back_to_idle = [this] {
    MutexLock lock(&mu_);
    phase_ = Phase::kIdle;
    replies_.clear();
  };
  // A send to a stream that just broke fails; its handler sees the end too
  // and removes the session, which the wait below counts as "disconnected".
  const uint64_t assignment_version =
      state.has_value() ? state->assignment_version : 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    cluster::proto::CoordinatorMessage request;
    cluster::proto::SyncRequest& sync = *request.mutable_sync();
    sync.set_epoch(epoch.value());
    if (state.has_value()) {
      sync.set_assignment_version(assignment_version);
      sync.set_first_vnode(state->workers[i].first_vnode);
      sync.set_end_vnode(state->workers[i].end_vnode);
    }
    asked[i]->Send(request);
  }

  CheckpointResult result;
  std::vector<SharedStateStore::SyncResult> syncs;
  std::vector<absl::Status> failures;
  std::vector<std::string> silent;  // No sync reply within reply_timeout.
  {
    MutexLock lock(&mu_);
    WaitForReplies(asked);
    for (const std::shared_ptr<Session>& session : asked) {
      auto reply = replies_.find(session->number);
      if (reply == replies_.end()) {
        failures.push_back(MissingReply(*session, "sync"));
        if (absl::IsDeadlineExceeded(failures.back())) {
          silent.push_back(session->worker_id);
        }
      } else if (!reply->second.status.ok()) {
        failures.push_back(absl::Status(
            reply->second.status.code(),
            absl::StrCat("worker '", session->worker_id,
                         "': sync failed: ", reply->second.status.message())));
      } else if (reply->second.assignment_version != assignment_version) {
        failures.push_back(absl::FailedPreconditionError(absl::StrCat(
            "worker '", session->worker_id, "' synced with assignment version ",
            reply->second.assignment_version, ", not ", assignment_version)));
      } else {
        syncs.push_back({epoch, std::move(reply->second.descriptors)});
        result.workers.push_back(session->worker_id);
      }
    }
    if (failures.empty()) phase_ = Phase::kApply;
    replies_.clear();
  }
  if (!failures.empty()) {
    std::vector<std::string> messages;
    for (const absl::Status& failure : failures) {
      messages.emplace_back(failure.message());
    }
    absl::Status failed(failures.front().code(),
                        absl::StrCat("checkpoint of epoch ", epoch.value(),
                                     " failed, nothing committed: ",
                                     absl::StrJoin(messages, "; ")));
    if (!silent.empty() && silent.size() < asked.size()) {
      failed.SetPayload(kSilentWorkersPayload,
                        absl::Cord(absl::StrJoin(silent, "\n")));
    }
    return failed;
  }
  if (options_.commit_own_data) {
    // Uploaded now, after every worker's, so that a failed worker costs no
    // upload here; what fails below stays sealed and is synced again.
    absl::StatusOr<SharedStateStore::SyncResult> own =
        store->SyncCheckpoint(epoch);
    if (!own.ok()) {
      return absl::Status(
          own.status().code(),
          absl::StrCat("checkpoint of epoch ", epoch.value(),
                       " failed, nothing committed: the committer's own "
                       "sync failed: ",
                       own.status().message()));
    }
    syncs.insert(syncs.begin(), *std::move(own));
  }
  if (election_ != nullptr) {
    // The store's version fence refuses a deposed committer's commit once a
    // successor committed; this refuses it as soon as the candidacy is gone.
    absl::StatusOr<bool> leading = election_->IsLeader(candidacy_);
    if (!leading.ok() || !*leading) {
      return absl::FailedPreconditionError(absl::StrCat(
          context, ": not committed: the coordinator at ", address_,
          " no longer leads",
          leading.ok() ? ""
                       : absl::StrCat(" (", leading.status().message(), ")")));
    }
  }
  absl::StatusOr<SharedStateStore::CommittedVersion> version =
      store->CommitCheckpoint(syncs, epoch);
  if (!version.ok()) {
    return absl::Status(
        version.status().code(),
        absl::StrCat("checkpoint of epoch ", epoch.value(),
                     ": commit failed: ", version.status().message()));
  }
  result.version = *version;
  cluster::proto::CoordinatorMessage committed_message;
  committed_message.mutable_committed()->set_version_id(version->id);
  committed_message.mutable_committed()->set_committed_epoch(
      version->committed_epoch.value());
  for (const std::shared_ptr<Session>& session : asked) {
    session->Send(committed_message);
  }
  MutexLock lock(&mu_);
  WaitForReplies(asked);
  for (const std::shared_ptr<Session>& session : asked) {
    auto reply = replies_.find(session->number);
    if (reply == replies_.end()) {
      result.not_applied[session->worker_id] = MissingReply(*session, "apply");
    } else if (!reply->second.status.ok()) {
      result.not_applied[session->worker_id] = reply->second.status;
    }
  }
  return result;
}

absl::Status CheckpointCoordinator::CheckCanRegister(
    const std::string& worker_id, int64_t lease_id) const {
  if (shut_down_) {
    return absl::UnavailableError("checkpoint coordinator shut down");
  }
  if (options_.etcd != nullptr) {
    if (role_ != Role::kLeading) {
      return absl::UnavailableError(absl::StrCat("checkpoint coordinator at ",
                                                 address_, " does not lead"));
    }
    if (fenced_leases_.contains(lease_id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("worker '", worker_id, "' is fenced: its lease ",
                       lease_id, " expired or was revoked"));
    }
  }
  for (const auto& [number, live] : sessions_) {
    if (live->worker_id == worker_id) {
      return absl::AlreadyExistsError(
          absl::StrCat("worker '", worker_id, "' is already registered"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckpointCoordinator::JoinLocked(const std::string& worker_id,
                                               int64_t lease_id) {
  const std::string context = absl::StrCat("registering worker '", worker_id,
                                           "' with lease ", lease_id);
  const WorkerVnodes* known = state_.Find(worker_id);
  if (known != nullptr && known->lease_id == lease_id) {
    // A reconnect (e.g. to a new leader): the lease must still be alive.
    absl::StatusOr<absl::Duration> alive =
        options_.etcd->LeaseTimeToLive(lease_id);
    if (absl::IsNotFound(alive.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat(context, ": fenced: the lease expired"));
    }
    return alive.status();
  }
  ClusterJobState next = state_;
  next.AddWorker(worker_id, lease_id);
  absl::Status written = WriteState(std::move(next),
                                    {{WorkerKey(options_.job_prefix, worker_id),
                                      absl::StrCat(lease_id), lease_id}},
                                    {});
  if (absl::IsNotFound(written)) {
    return absl::FailedPreconditionError(absl::StrCat(
        context, ": fenced: the lease is not alive: ", written.message()));
  }
  if (!written.ok()) {
    return absl::Status(written.code(),
                        absl::StrCat(context, ": ", written.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckpointCoordinator::WriteState(
    ClusterJobState next, std::vector<EtcdPut> puts,
    std::vector<std::string> deletes) {
  const std::string key = JobStateKey(options_.job_prefix);
  EtcdTxn txn;
  txn.compares = {EtcdElection::Fence(candidacy_),
                  EtcdCompare::ModRevisionEquals(key, state_revision_)};
  txn.then_puts = std::move(puts);
  txn.then_puts.push_back({key, next.Encode(), 0});
  txn.then_deletes = std::move(deletes);
  BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, options_.etcd->Txn(txn));
  if (!result.succeeded) {
    return absl::UnavailableError(absl::StrCat(
        "the job state write (assignment version ", next.assignment_version,
        ") was refused: the coordinator at ", address_,
        " no longer leads or another wrote '", key, "'"));
  }
  state_ = std::move(next);
  state_revision_ = result.revision;
  return absl::OkStatus();
}

void CheckpointCoordinator::Leave(const std::string& worker_id,
                                  int64_t lease_id) {
  MutexLock state_lock(&state_mu_);
  {
    MutexLock lock(&mu_);
    if (shut_down_ || role_ != Role::kLeading) return;
    // The worker registered again (a reconnect) since this session ended.
    for (const auto& [number, live] : sessions_) {
      if (live->worker_id == worker_id) return;
    }
  }
  const WorkerVnodes* known = state_.Find(worker_id);
  if (known == nullptr || known->lease_id != lease_id) return;
  ClusterJobState next = state_;
  next.RemoveWorker(worker_id);
  // A refused write means this coordinator no longer leads: the successor
  // sees the lease instead. Another error leaves the worker in the state
  // until its lease expires (FenceExpired).
  WriteState(std::move(next), {}, {WorkerKey(options_.job_prefix, worker_id)})
      .IgnoreError();
}

void CheckpointCoordinator::Control() {
  while (true) {
    Role role;
    {
      MutexLock lock(&mu_);
      clock_.WaitUntil(
          mu_, changed_,
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shut_down_; },
          clock_.Now() + options_.poll_interval);
      if (shut_down_) return;
      role = role_;
    }
    if (role == Role::kDeposed) return;
    absl::StatusOr<bool> leading = election_->IsLeader(candidacy_);
    if (!leading.ok()) continue;  // etcd unreachable: try again.
    if (role == Role::kStandby && *leading) {
      const absl::Status taken = TakeOver();
      if (!taken.ok()) Depose(taken);
    } else if (role == Role::kLeading && !*leading) {
      Depose(absl::FailedPreconditionError(
          absl::StrCat("the checkpoint coordinator at ", address_,
                       " lost the lead (its candidacy is gone)")));
    } else if (role == Role::kLeading) {
      // A failure (etcd unreachable, a refused write) is retried next time.
      FenceExpired().IgnoreError();
    }
  }
}

absl::Status CheckpointCoordinator::TakeOver() {
  const std::string context =
      absl::StrCat("checkpoint coordinator at ", address_, " taking over");
  absl::StatusOr<std::unique_ptr<SharedStateStore>> store =
      options_.open_store();
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat(context, ": opening the store: ",
                                     store.status().message()));
  }
  {
    MutexLock state_lock(&state_mu_);
    absl::StatusOr<std::optional<StoredJobState>> stored =
        ReadJobState(*options_.etcd, options_.job_prefix);
    if (!stored.ok()) {
      return absl::Status(
          stored.status().code(),
          absl::StrCat(context, ": ", stored.status().message()));
    }
    if (stored->has_value()) {
      state_ = std::move((*stored)->state);
      state_revision_ = (*stored)->mod_revision;
    } else {
      state_ = ClusterJobState();
      state_.num_vnodes = options_.num_vnodes;
      state_revision_ = 0;
    }
    MutexLock lock(&mu_);
    owned_store_ = *std::move(store);
    if (shut_down_) return absl::OkStatus();
    store_ = owned_store_.get();
    role_ = Role::kLeading;
  }
  changed_.SignalAll();
  // The workers of the state whose leases expired meanwhile leave it now
  // (or at the next poll, if this fails).
  FenceExpired().IgnoreError();
  return absl::OkStatus();
}

void CheckpointCoordinator::Depose(const absl::Status& why) {
  {
    MutexLock lock(&mu_);
    role_ = Role::kDeposed;
    deposed_ = why;
    // Every stream ends; the workers look for the new leader.
    for (const auto& [number, session] : sessions_)
      session->context->TryCancel();
  }
  changed_.SignalAll();
}

absl::Status CheckpointCoordinator::FenceExpired() {
  std::vector<std::pair<std::string, absl::Status>> fenced;
  const absl::Status done = [&]() -> absl::Status {
    MutexLock state_lock(&state_mu_);
    BACKFILL_ASSIGN_OR_RETURN(
        EtcdRangeResult members,
        options_.etcd->GetPrefix(WorkerKeyPrefix(options_.job_prefix)));
    std::map<std::string, int64_t> alive;  // Membership key -> its lease.
    for (const EtcdKeyValue& member : members.kvs) {
      alive[member.key] = member.lease;
    }
    ClusterJobState next = state_;
    std::vector<std::string> gone;  // Their membership keys.
    std::vector<WorkerVnodes> expired;
    for (const WorkerVnodes& worker : state_.workers) {
      const std::string key = WorkerKey(options_.job_prefix, worker.worker_id);
      auto member = alive.find(key);
      if (member != alive.end() && member->second == worker.lease_id) continue;
      next.RemoveWorker(worker.worker_id);
      gone.push_back(key);  // Harmless to delete if the lease took it.
      expired.push_back(worker);
    }
    if (expired.empty()) return absl::OkStatus();
    // One write (one assignment version) for all of them.
    BACKFILL_RETURN_IF_ERROR(WriteState(std::move(next), {}, std::move(gone)));
    MutexLock lock(&mu_);
    for (const WorkerVnodes& worker : expired) {
      fenced_leases_.insert(worker.lease_id);
      fenced.emplace_back(worker.worker_id, absl::UnavailableError(absl::StrCat(
                                                "worker '", worker.worker_id,
                                                "' was fenced: its lease ",
                                                worker.lease_id, " expired")));
      EndFencedSessionLocked(worker.worker_id, worker.lease_id,
                             fenced.back().second);
    }
    return absl::OkStatus();
  }();
  if (!done.ok()) return done;
  if (fenced.empty()) return absl::OkStatus();
  changed_.SignalAll();
  if (options_.on_fence) {
    for (const auto& [worker_id, why] : fenced)
      options_.on_fence(worker_id, why);
  }
  return absl::OkStatus();
}

void CheckpointCoordinator::EndFencedSessionLocked(const std::string& worker_id,
                                                   int64_t lease_id,
                                                   absl::Status why) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    const std::shared_ptr<Session>& session = it->second;
    if (session->worker_id != worker_id || session->lease_id != lease_id) {
      continue;
    }
    fenced_[session->number] = std::move(why);
    session->context->TryCancel();
    sessions_.erase(it);
    return;
  }
}

absl::Status CheckpointCoordinator::FenceWorker(const std::string& worker_id,
                                                absl::string_view why) {
  const absl::Status fenced = absl::UnavailableError(
      absl::StrCat("worker '", worker_id, "' was fenced: ", why));
  const absl::Status done = [&]() -> absl::Status {
    MutexLock state_lock(&state_mu_);
    int64_t lease_id = 0;
    {
      MutexLock lock(&mu_);
      if (options_.etcd != nullptr && role_ != Role::kLeading) {
        return absl::FailedPreconditionError(absl::StrCat(
            "fencing worker '", worker_id, "': the checkpoint coordinator at ",
            address_, " does not lead"));
      }
      bool live = false;
      for (const auto& [number, session] : sessions_) {
        if (session->worker_id != worker_id) continue;
        live = true;
        lease_id = session->lease_id;
        break;
      }
      if (!live) {
        return absl::NotFoundError(
            absl::StrCat("fencing worker '", worker_id, "': not live"));
      }
    }
    if (options_.etcd != nullptr) {
      const WorkerVnodes* known = state_.Find(worker_id);
      if (known != nullptr && known->lease_id == lease_id) {
        ClusterJobState next = state_;
        next.RemoveWorker(worker_id);
        BACKFILL_RETURN_IF_ERROR(WriteState(
            std::move(next), {}, {WorkerKey(options_.job_prefix, worker_id)}));
      }
      // A coordinator that takes over later must refuse it too (JoinLocked:
      // the lease is not alive). One that expired meanwhile is as good.
      const absl::Status revoked = options_.etcd->RevokeLease(lease_id);
      if (!revoked.ok() && !absl::IsNotFound(revoked)) {
        return absl::Status(revoked.code(),
                            absl::StrCat("fencing worker '", worker_id,
                                         "': revoking its lease ", lease_id,
                                         ": ", revoked.message()));
      }
    }
    {
      MutexLock lock(&mu_);
      if (options_.etcd != nullptr) fenced_leases_.insert(lease_id);
      EndFencedSessionLocked(worker_id, lease_id, fenced);
    }
    return absl::OkStatus();
  }();
  if (!done.ok()) return done;
  changed_.SignalAll();
  if (options_.on_fence) options_.on_fence(worker_id, fenced);
  return absl::OkStatus();
}

void CheckpointCoordinator::Shutdown() {
  MutexLock shutdown_lock(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  changed_.SignalAll();
  if (control_thread_.joinable()) control_thread_.join();
  // The store's last compaction commits before the lead goes: after it, a
  // successor that opened the store would find its version overtaken.
  SharedStateStore* owned = nullptr;
  {
    MutexLock lock(&mu_);
    owned = owned_store_.get();
  }
  if (owned != nullptr) owned->WaitForMaintenance().IgnoreError();
  // A standby may take over at once (else it waits for the lease).
  if (election_ != nullptr && candidacy_.create_revision != 0) {
    election_->Resign(candidacy_).IgnoreError();
  }
  // Cancels every open stream at once (their handlers' reads end), then
  // waits for the handlers. (No server: Start failed to listen.)
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  // The handlers are done; their last writes (under these locks) are
  // ordered before the destructor's through the locks, which TSan sees
  // (gRPC's own synchronization it does not: Debian's gRPC is not
  // instrumented).
  MutexLock state_lock(&state_mu_);
  MutexLock lock(&mu_);
}

}  // namespace backfill
