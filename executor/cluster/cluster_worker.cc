#include "executor/cluster/cluster_worker.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/cluster/job_state.h"

namespace backfill {

absl::StatusOr<std::unique_ptr<ClusterWorker>> ClusterWorker::Start(
    ClusterWorkerOptions options) {
  if (options.etcd == nullptr || options.store == nullptr ||
      options.job_prefix.empty() || options.worker_id.empty() ||
      options.lease_id == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClusterWorkerOptions: etcd, job_prefix, worker_id, store and "
        "lease_id are required: job_prefix '",
        options.job_prefix, "', worker_id '", options.worker_id, "', lease_id ",
        options.lease_id));
  }
  if (options.retry_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClusterWorkerOptions.retry_interval must be > 0: ",
                     absl::FormatDuration(options.retry_interval)));
  }
  Clock& clock = options.clock != nullptr ? *options.clock : Clock::Real();
  std::unique_ptr<ClusterWorker> worker(
      new ClusterWorker(std::move(options), clock));
  worker->thread_ = std::thread([raw = worker.get()] { raw->Run(); });
  return worker;
}

ClusterWorker::ClusterWorker(ClusterWorkerOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

ClusterWorker::~ClusterWorker() { Stop(); }

absl::StatusOr<std::unique_ptr<CheckpointWorker>>
ClusterWorker::ConnectToLeader() {
  absl::StatusOr<std::string> address =
      LeadingCoordinatorAddress(*options_.etcd, options_.job_prefix);
  if (!address.ok()) return address.status();
  return CheckpointWorker::Connect({.coordinator_address = *address,
                                    .worker_id = options_.worker_id,
                                    .store = options_.store,
                                    .lease_id = options_.lease_id,
                                    .clock = options_.clock,
                                    .endpoints = options_.endpoints,
                                    .on_inject = options_.on_inject});
}

void ClusterWorker::Run() {
  absl::Status stopped = absl::OkStatus();
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) {
        stopped = absl::CancelledError(
            absl::StrCat("cluster worker '", options_.worker_id, "' stopped"));
        break;
      }
    }
    absl::StatusOr<std::unique_ptr<CheckpointWorker>> connected =
        ConnectToLeader();
    if (absl::IsFailedPrecondition(connected.status())) {
      stopped = absl::FailedPreconditionError(
          absl::StrCat("cluster worker '", options_.worker_id,
                       "': ", connected.status().message()));
      break;
    }
    if (!connected.ok()) {
      // No leader yet, a standby not leading yet, or a leader going away:
      // look again after a pause (or stop).
      MutexLock lock(&mu_);
      clock_.WaitUntil(
          mu_, changed_,
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; },
          clock_.Now() + options_.retry_interval);
      continue;
    }
    std::shared_ptr<CheckpointWorker> connection = *std::move(connected);
    bool stop_now = false;
    {
      // Stop reads connection_ under this lock: either it sees this one and
      // disconnects it, or this sees stopping_.
      MutexLock lock(&mu_);
      stop_now = stopping_;
      if (!stop_now) {
        connection_ = connection;
        ++registrations_;
      }
    }
    if (stop_now) {
      connection->Disconnect();
      continue;
    }
    changed_.SignalAll();
    // Until the stream ends: the leader went (or Stop disconnected it).
    connection->WaitUntilEnded(absl::InfiniteFuture()).IgnoreError();
    MutexLock lock(&mu_);
    last_assignment_ = connection->assignment();
    connection_.reset();
  }
  {
    MutexLock lock(&mu_);
    status_ = stopped;
    stopping_ = true;
  }
  changed_.SignalAll();
  if (options_.on_stopped) options_.on_stopped(stopped);
}

void ClusterWorker::Stop() {
  MutexLock join_lock(&join_mu_);
  std::shared_ptr<CheckpointWorker> connection;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    connection = connection_;
  }
  changed_.SignalAll();
  if (connection != nullptr) connection->Disconnect();
  if (thread_.joinable()) thread_.join();
}

absl::Status ClusterWorker::status() const {
  MutexLock lock(&mu_);
  return status_;
}

int ClusterWorker::registrations() const {
  MutexLock lock(&mu_);
  return registrations_;
}

absl::Status ClusterWorker::WaitForRegistrations(int count,
                                                 absl::Time deadline) {
  MutexLock lock(&mu_);
  clock_.WaitUntil(
      mu_, changed_,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !status_.ok() ||
               (registrations_ >= count && connection_ != nullptr);
      },
      deadline);
  if (!status_.ok()) return status_;
  if (registrations_ >= count && connection_ != nullptr) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "cluster worker '", options_.worker_id, "': ", registrations_,
      " registrations of ", count, " at ", absl::FormatTime(deadline)));
}

WorkerAssignment ClusterWorker::assignment() const {
  MutexLock lock(&mu_);
  return connection_ != nullptr ? connection_->assignment() : last_assignment_;
}

}  // namespace backfill
