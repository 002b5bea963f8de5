#include "executor/cluster/checkpoint_worker.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/cluster/checkpoint.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace backfill {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

// Fills `reply` with the answer to `message` (a sync or an apply, done
// here with `store`); false if the message needs none.
bool Answer(SharedStateStore& store,
            const cluster::proto::CoordinatorMessage& message,
            cluster::proto::WorkerMessage& reply) {
  if (message.kind_case() == cluster::proto::CoordinatorMessage::kSync) {
    const Epoch epoch(message.sync().epoch());
    cluster::proto::Synced& synced = *reply.mutable_synced();
    synced.set_epoch(epoch.value());
    synced.set_assignment_version(message.sync().assignment_version());
    absl::StatusOr<SharedStateStore::SyncResult> result =
        store.SyncCheckpoint(epoch);
    if (result.ok()) {
      for (std::string& descriptor : result->descriptors) {
        synced.add_descriptors(std::move(descriptor));
      }
    } else {
      synced.set_error_code(static_cast<int32_t>(result.status().code()));
      synced.set_error_message(std::string(result.status().message()));
    }
    return true;
  }
  if (message.kind_case() == cluster::proto::CoordinatorMessage::kCommitted) {
    const cluster::proto::Committed& committed = message.committed();
    cluster::proto::Applied& applied = *reply.mutable_applied();
    applied.set_epoch(committed.committed_epoch());
    const absl::Status status = store.ApplyCheckpoint(
        {committed.version_id(), Epoch(committed.committed_epoch())});
    if (!status.ok()) {
      applied.set_error_code(static_cast<int32_t>(status.code()));
      applied.set_error_message(std::string(status.message()));
    }
    return true;
  }
  return false;  // Nothing else is addressed to a registered worker.
}

}  // namespace

// The writes to the stream, one at a time, from any thread, until it is
// closed (half-closed by Disconnect, or about to be finished): shared with
// the barriers' collection callbacks, which may outlive the worker.
class CheckpointWorker::Outbox {
 public:
  using Stream = grpc::ClientReaderWriter<cluster::proto::WorkerMessage,
                                          cluster::proto::CoordinatorMessage>;
  explicit Outbox(Stream* stream) : stream_(stream) {}

  // False if not written (closed, or the stream broke).
  bool Write(const cluster::proto::WorkerMessage& message)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return stream_ != nullptr && stream_->Write(message);
  }
  // Half-closes the stream (if still open for writes), then closes.
  void WritesDone() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (stream_ != nullptr) stream_->WritesDone();
    stream_ = nullptr;
  }
  void Close() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    stream_ = nullptr;
  }

 private:
  Mutex mu_;
  Stream* stream_ ABSL_GUARDED_BY(mu_);
};

// The stream and what it needs alive: the channel, the stub, the context.
class CheckpointWorker::Connection {
 public:
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<cluster::proto::CheckpointService::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<cluster::proto::WorkerMessage,
                                           cluster::proto::CoordinatorMessage>>
      stream;
};

absl::StatusOr<std::unique_ptr<CheckpointWorker>> CheckpointWorker::Connect(
    const CheckpointWorkerOptions& options) {
  if (options.store == nullptr) {
    return absl::InvalidArgumentError(
        "CheckpointWorkerOptions.store is required");
  }
  if (options.worker_id.empty()) {
    return absl::InvalidArgumentError(
        "CheckpointWorkerOptions.worker_id is required");
  }
  if (options.coordinator_address.empty()) {
    return absl::InvalidArgumentError(
        "CheckpointWorkerOptions.coordinator_address is required");
  }
  if (options.disconnect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CheckpointWorkerOptions.disconnect_timeout must be > 0: ",
                     absl::FormatDuration(options.disconnect_timeout)));
  }
  if (options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CheckpointWorkerOptions.connect_timeout must be > 0: ",
                     absl::FormatDuration(options.connect_timeout)));
  }
  const std::string context = absl::StrCat("worker '", options.worker_id,
                                           "' connecting to the checkpoint "
                                           "coordinator at ",
                                           options.coordinator_address);
  auto connection = std::make_unique<Connection>();
  connection->channel =
      CreateKeepaliveChannel(options.coordinator_address, options.keepalive);
  const auto deadline = std::chrono::system_clock::now() +
                        absl::ToChronoNanoseconds(options.connect_timeout);
  if (!connection->channel->WaitForConnected(deadline)) {
    return absl::UnavailableError(
        absl::StrCat(context, ": not reachable within ",
                     absl::FormatDuration(options.connect_timeout)));
  }
  connection->stub =
      cluster::proto::CheckpointService::NewStub(connection->channel);
  connection->stream = connection->stub->Control(&connection->context);
  cluster::proto::WorkerMessage registration;
  registration.mutable_registration()->set_worker_id(options.worker_id);
  registration.mutable_registration()->set_lease_id(options.lease_id);
  registration.mutable_registration()->mutable_endpoints()->insert(
      options.endpoints.begin(), options.endpoints.end());
  cluster::proto::CoordinatorMessage answer;
  if (!connection->stream->Write(registration) ||
      !connection->stream->Read(&answer)) {
    const absl::Status status = FromGrpc(connection->stream->Finish());
    return absl::Status(
        status.ok() ? absl::StatusCode::kUnavailable : status.code(),
        absl::StrCat(context, ": registration refused: ", status.message()));
  }
  if (answer.kind_case() != cluster::proto::CoordinatorMessage::kRegistered) {
    connection->context.TryCancel();
    connection->stream->Finish();  // Cancelled: nothing more to learn.
    return absl::InternalError(absl::StrCat(
        context, ": the coordinator answered Register with message kind ",
        answer.kind_case()));
  }
  std::unique_ptr<CheckpointWorker> worker(
      new CheckpointWorker(options, std::move(connection)));
  worker->thread_ = std::thread([raw = worker.get()] { raw->Run(); });
  return worker;
}

CheckpointWorker::CheckpointWorker(const CheckpointWorkerOptions& options,
                                   std::unique_ptr<Connection> connection)
    : options_(options),
      connection_(std::move(connection)),
      outbox_(std::make_shared<Outbox>(connection_->stream.get())) {}

CheckpointWorker::~CheckpointWorker() { Disconnect(); }

void CheckpointWorker::Run() {
  cluster::proto::CoordinatorMessage message;
  while (connection_->stream->Read(&message)) {
    {
      MutexLock lock(&mu_);
      // Half-closed by Disconnect: no more answers; the coordinator ends the
      // call once it has read everything sent before.
      if (disconnected_) continue;
      answering_ = true;
      if (message.has_sync()) {
        assignment_ = {message.sync().assignment_version(),
                       message.sync().first_vnode(),
                       message.sync().end_vnode()};
      }
    }
    bool written = true;
    if (message.has_inject()) {
      Inject(message.inject());
    } else {
      cluster::proto::WorkerMessage reply;
      written =
          !Answer(*options_.store, message, reply) || outbox_->Write(reply);
    }
    {
      MutexLock lock(&mu_);
      answering_ = false;
    }
    changed_.SignalAll();
    if (!written) break;
  }
  {
    MutexLock lock(&mu_);
    reading_ = false;
  }
  outbox_->Close();  // No write may follow Finish.
  const absl::Status finished = FromGrpc(connection_->stream->Finish());
  MutexLock lock(&mu_);
  if (disconnected_) {
    status_ = absl::CancelledError(
        absl::StrCat("worker '", options_.worker_id, "' disconnected"));
  } else {
    status_ = absl::Status(
        finished.ok() ? absl::StatusCode::kUnavailable : finished.code(),
        absl::StrCat(
            "worker '", options_.worker_id, "': the checkpoint coordinator at ",
            options_.coordinator_address,
            " ended the stream: ", finished.ok() ? "OK" : finished.message()));
  }
  ended_ = true;
  changed_.SignalAll();
}

void CheckpointWorker::Inject(const cluster::proto::InjectBarrier& inject) {
  const EpochPair epoch{Epoch(inject.curr_epoch()), Epoch(inject.prev_epoch())};
  std::function<void(const absl::Status&)> collected =
      [outbox = outbox_, attempt_key = inject.attempt_key(),
       epoch](const absl::Status& status) {
        cluster::proto::WorkerMessage reply;
        cluster::proto::BarrierCollected& done = *reply.mutable_collected();
        done.set_attempt_key(attempt_key);
        done.set_curr_epoch(epoch.curr.value());
        done.set_prev_epoch(epoch.prev.value());
        if (!status.ok()) {
          done.set_error_code(static_cast<int32_t>(status.code()));
          done.set_error_message(std::string(status.message()));
        }
        outbox->Write(reply);
      };
  if (options_.on_inject == nullptr) {
    collected(absl::FailedPreconditionError(absl::StrCat(
        "worker '", options_.worker_id,
        "' runs no actors: it cannot collect barrier ", epoch.DebugString(),
        " of attempt key ", inject.attempt_key())));
    return;
  }
  options_.on_inject(inject.attempt_key(), epoch,
                     std::vector<uint32_t>(inject.actors_to_collect().begin(),
                                           inject.actors_to_collect().end()),
                     std::move(collected));
}

void CheckpointWorker::Disconnect() {
  MutexLock join_lock(&join_mu_);
  Clock& clock = options_.clock != nullptr ? *options_.clock : Clock::Real();
  bool ended = false;
  bool half_close = false;
  {
    MutexLock lock(&mu_);
    if (!disconnected_) {
      disconnected_ = true;
      // The answer in progress is sent first (its sync or apply finishes).
      clock.WaitUntil(
          mu_, changed_,
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !answering_; },
          absl::InfiniteFuture());
      half_close = reading_;
    }
  }
  // The thread answers nothing more now; a barrier's answer being written
  // from another thread finishes first (the outbox orders the writes), and
  // none is written after.
  if (half_close) outbox_->WritesDone();
  {
    MutexLock lock(&mu_);
    clock.WaitUntil(
        mu_, changed_,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ended_; },
        clock.Now() + options_.disconnect_timeout);
    ended = ended_;
  }
  if (!ended) connection_->context.TryCancel();
  if (thread_.joinable()) thread_.join();
}

absl::Status CheckpointWorker::status() const {
  MutexLock lock(&mu_);
  return status_;
}

WorkerAssignment CheckpointWorker::assignment() const {
  MutexLock lock(&mu_);
  return assignment_;
}

absl::Status CheckpointWorker::WaitUntilEnded(absl::Time deadline) {
  Clock& clock = options_.clock != nullptr ? *options_.clock : Clock::Real();
  MutexLock lock(&mu_);
  clock.WaitUntil(
      mu_, changed_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ended_; }, deadline);
  if (!ended_) {
    return absl::DeadlineExceededError(absl::StrCat(
        "worker '", options_.worker_id, "': the stream is still open at ",
        absl::FormatTime(deadline)));
  }
  return status_;
}

}  // namespace backfill
