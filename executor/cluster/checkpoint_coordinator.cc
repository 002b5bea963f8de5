#include "executor/cluster/checkpoint_coordinator.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/cluster/checkpoint.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace backfill {
namespace {

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
  explicit Session(Stream* stream) : stream(stream) {}

  // Sends `message` unless the session is closed; false if not sent.
  bool Send(const cluster::proto::CoordinatorMessage& message) {
    MutexLock lock(&write_mu);
    return !closed && stream->Write(message);
  }
  void Close() {
    MutexLock lock(&write_mu);
    closed = true;
  }

  Stream* const stream;
  // Set before the session is shared, constant after.
  std::string worker_id;
  uint64_t number = 0;
  Mutex write_mu;
  bool closed ABSL_GUARDED_BY(write_mu) = false;
};

class CheckpointCoordinator::Service final
    : public cluster::proto::CheckpointService::Service {
 public:
  explicit Service(CheckpointCoordinator* coordinator)
      : coordinator_(coordinator) {}

  grpc::Status Control(grpc::ServerContext* /*context*/,
                       Session::Stream* stream) override {
    return ToGrpc(coordinator_->Serve(std::make_shared<Session>(stream)));
  }

 private:
  CheckpointCoordinator* const coordinator_;
};

absl::StatusOr<std::unique_ptr<CheckpointCoordinator>>
CheckpointCoordinator::Start(const CheckpointCoordinatorOptions& options) {
  if (options.store == nullptr) {
    return absl::InvalidArgumentError(
        "CheckpointCoordinatorOptions.store is required");
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
  return coordinator;
}

CheckpointCoordinator::CheckpointCoordinator(
    const CheckpointCoordinatorOptions& options, Clock& clock)
    : options_(options), clock_(clock) {}

CheckpointCoordinator::~CheckpointCoordinator() { Shutdown(); }

std::string CheckpointCoordinator::address() const { return address_; }

std::vector<std::string> CheckpointCoordinator::LiveWorkers() const {
  MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const auto& [number, session] : sessions_) {
    ids.push_back(session->worker_id);
  }
  return ids;
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
  bool registered = false;
  {
    // Registered goes out before anything a checkpoint sends: the session
    // is visible to checkpoints from the insertion on, and their sends wait
    // for this lock.
    MutexLock write_lock(&session->write_mu);
    {
      MutexLock lock(&mu_);
      if (shut_down_) {
        return absl::UnavailableError("checkpoint coordinator shut down");
      }
      for (const auto& [number, live] : sessions_) {
        if (live->worker_id == worker_id) {
          return absl::AlreadyExistsError(
              absl::StrCat("worker '", worker_id, "' is already registered"));
        }
      }
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
      // A late reply to an earlier checkpoint or phase is ignored.
      if (phase == phase_ && epoch == epoch_.value() &&
          asked_.contains(session->number)) {
        replies_.emplace(session->number, std::move(reply));
        changed_.SignalAll();
      }
    }
  }
  session->Close();
  {
    MutexLock lock(&mu_);
    sessions_.erase(session->number);
  }
  changed_.SignalAll();
  return ended;
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
  if (!sessions_.contains(session.number)) {
    return absl::UnavailableError(absl::StrCat("worker '", session.worker_id,
                                               "' disconnected before its ",
                                               what, " reply"));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "worker '", session.worker_id, "' sent no ", what, " reply within ",
      absl::FormatDuration(options_.reply_timeout)));
}

absl::StatusOr<CheckpointResult> CheckpointCoordinator::Checkpoint(
    Epoch epoch) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  const Epoch committed = options_.store->CommittedEpoch(/*table_id=*/0);
  if (epoch <= committed) {
    return absl::FailedPreconditionError(
        absl::StrCat("checkpoint of epoch ", epoch.value(),
                     ": not after the committed epoch ", committed.value()));
  }
  std::vector<std::shared_ptr<Session>> asked;
  {
    MutexLock lock(&mu_);
    if (shut_down_) {
      return absl::UnavailableError(
          absl::StrCat("checkpoint of epoch ", epoch.value(),
                       ": the coordinator shut down"));
    }
    if (sessions_.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "checkpoint of epoch ", epoch.value(), ": no worker is connected"));
    }
    for (const auto& [number, session] : sessions_) asked.push_back(session);
    phase_ = Phase::kSync;
    epoch_ = epoch;
    asked_.clear();
    for (const std::shared_ptr<Session>& session : asked) {
      asked_.insert(session->number);
    }
    replies_.clear();
  }
  // A send to a stream that just broke fails; its handler sees the end too
  // and removes the session, which the wait below counts as "disconnected".
  cluster::proto::CoordinatorMessage request;
  request.mutable_sync()->set_epoch(epoch.value());
  for (const std::shared_ptr<Session>& session : asked) session->Send(request);

  CheckpointResult result;
  std::vector<SharedStateStore::SyncResult> syncs;
  std::vector<absl::Status> failures;
  {
    MutexLock lock(&mu_);
    WaitForReplies(asked);
    for (const std::shared_ptr<Session>& session : asked) {
      auto reply = replies_.find(session->number);
      if (reply == replies_.end()) {
        failures.push_back(MissingReply(*session, "sync"));
      } else if (!reply->second.status.ok()) {
        failures.push_back(absl::Status(
            reply->second.status.code(),
            absl::StrCat("worker '", session->worker_id,
                         "': sync failed: ", reply->second.status.message())));
      } else {
        syncs.push_back({epoch, std::move(reply->second.descriptors)});
        result.workers.push_back(session->worker_id);
      }
    }
    phase_ = failures.empty() ? Phase::kApply : Phase::kIdle;
    replies_.clear();
  }
  if (!failures.empty()) {
    std::vector<std::string> messages;
    for (const absl::Status& failure : failures) {
      messages.emplace_back(failure.message());
    }
    return absl::Status(failures.front().code(),
                        absl::StrCat("checkpoint of epoch ", epoch.value(),
                                     " failed, nothing committed: ",
                                     absl::StrJoin(messages, "; ")));
  }
  absl::StatusOr<SharedStateStore::CommittedVersion> version =
      options_.store->CommitCheckpoint(syncs, epoch);
  if (!version.ok()) {
    MutexLock lock(&mu_);
    phase_ = Phase::kIdle;
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
  phase_ = Phase::kIdle;
  replies_.clear();
  return result;
}

void CheckpointCoordinator::Shutdown() {
  MutexLock shutdown_lock(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  changed_.SignalAll();
  // Cancels every open stream at once (their handlers' reads end), then
  // waits for the handlers.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

}  // namespace backfill
