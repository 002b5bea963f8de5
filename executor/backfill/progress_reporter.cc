#include "executor/backfill/progress_reporter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace backfill {

absl::StatusOr<std::unique_ptr<JobProgressTracker>> JobProgressTracker::Create(
    std::vector<TrackedActor> actors) {
  std::map<ActorId, ActorProgress> tracked;
  for (const TrackedActor& actor : actors) {
    ActorProgress progress;
    progress.num_vnodes = actor.num_vnodes;
    if (!tracked.emplace(actor.actor, progress).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("actor registered twice: actor ", actor.actor));
    }
  }
  return std::unique_ptr<JobProgressTracker>(
      new JobProgressTracker(std::move(tracked)));
}

absl::Status JobProgressTracker::Report(const ProgressEvent& event) {
  MutexLock lock(&mu_);
  auto it = actors_.find(event.actor);
  if (it == actors_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "progress of an actor that is not tracked: actor ", event.actor));
  }
  ActorProgress& progress = it->second;
  if (progress.state == ActorProgress::State::kDone) {
    return absl::FailedPreconditionError(
        absl::StrCat("progress reported after Done: actor ", event.actor,
                     ", epoch ", event.epoch.DebugString()));
  }
  consumed_rows_ =
      consumed_rows_ - progress.consumed_rows + event.consumed_rows;
  progress.consumed_rows = event.consumed_rows;
  persisted_rows_ =
      persisted_rows_ - progress.persisted_rows + event.persisted_rows;
  progress.persisted_rows = event.persisted_rows;
  progress.consumed_epoch = event.consumed_epoch;
  progress.last_epoch = event.epoch;
  if (event.done) {
    progress.state = ActorProgress::State::kDone;
    ++num_done_;
  } else {
    progress.state = ActorProgress::State::kConsumingUpstream;
  }
  return absl::OkStatus();
}

bool JobProgressTracker::IsDone() const {
  MutexLock lock(&mu_);
  return num_done_ == actors_.size();
}

size_t JobProgressTracker::num_actors() const {
  MutexLock lock(&mu_);
  return actors_.size();
}

size_t JobProgressTracker::num_done() const {
  MutexLock lock(&mu_);
  return num_done_;
}

uint64_t JobProgressTracker::consumed_rows() const {
  MutexLock lock(&mu_);
  return consumed_rows_;
}

uint64_t JobProgressTracker::persisted_rows() const {
  MutexLock lock(&mu_);
  return persisted_rows_;
}

uint64_t JobProgressTracker::total_vnodes() const {
  MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& entry : actors_) total += entry.second.num_vnodes;
  return total;
}

std::optional<ActorProgress> JobProgressTracker::GetActorProgress(
    ActorId actor) const {
  MutexLock lock(&mu_);
  auto it = actors_.find(actor);
  if (it == actors_.end()) return std::nullopt;
  return it->second;
}

double JobProgressTracker::PercentEstimate(uint64_t total_rows) const {
  constexpr double kCap = 99.99;
  if (IsDone()) return 100.0;
  if (total_rows == 0) return kCap;
  const double percent = 100.0 * static_cast<double>(consumed_rows()) /
                         static_cast<double>(total_rows);
  return std::min(kCap, percent);
}

std::string JobProgressTracker::ProgressString(uint64_t total_rows) const {
  if (IsDone()) return "100%";
  return absl::StrFormat("%.2f%% (%d/%d)", PercentEstimate(total_rows),
                         consumed_rows(), total_rows);
}

absl::Status ProgressReporter::Update(EpochPair epoch, Epoch consumed_epoch,
                                      uint64_t consumed_rows) {
  if (finished_) {
    return absl::FailedPreconditionError(
        absl::StrCat("progress Update after Finish: actor ", actor_, ", epoch ",
                     epoch.DebugString()));
  }
  if (last_consumed_epoch_.has_value() &&
      consumed_epoch < *last_consumed_epoch_) {
    return absl::FailedPreconditionError(
        absl::StrCat("consumed epoch went backwards: actor ", actor_, ", ",
                     consumed_epoch.DebugString(), " after ",
                     last_consumed_epoch_->DebugString()));
  }
  if (consumed_rows < last_consumed_rows_) {
    return absl::FailedPreconditionError(
        absl::StrCat("consumed rows went backwards: actor ", actor_, ", ",
                     consumed_rows, " after ", last_consumed_rows_));
  }
  ProgressEvent event;
  event.actor = actor_;
  event.epoch = epoch;
  event.done = false;
  event.consumed_epoch = consumed_epoch;
  event.consumed_rows = consumed_rows;
  event.persisted_rows = persisted_rows_;
  absl::Status status = sink_.Report(event);
  if (!status.ok()) return status;
  last_consumed_epoch_ = consumed_epoch;
  last_consumed_rows_ = consumed_rows;
  return absl::OkStatus();
}

absl::Status ProgressReporter::Finish(EpochPair epoch, uint64_t consumed_rows) {
  if (finished_) return absl::OkStatus();
  if (consumed_rows < last_consumed_rows_) {
    return absl::FailedPreconditionError(
        absl::StrCat("consumed rows went backwards at Finish: actor ", actor_,
                     ", ", consumed_rows, " after ", last_consumed_rows_));
  }
  ProgressEvent event;
  event.actor = actor_;
  event.epoch = epoch;
  event.done = true;
  event.consumed_epoch = last_consumed_epoch_.value_or(epoch.prev);
  event.consumed_rows = consumed_rows;
  event.persisted_rows = persisted_rows_;
  absl::Status status = sink_.Report(event);
  if (!status.ok()) return status;
  finished_ = true;
  last_consumed_rows_ = consumed_rows;
  return absl::OkStatus();
}

}  // namespace backfill
