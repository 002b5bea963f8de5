#include "executor/poll.h"

#include <algorithm>
#include <cassert>

#include "absl/strings/str_cat.h"

namespace backfill {

PollContext::PollContext(std::shared_ptr<Waker> waker, Clock& clock)
    : waker_(std::move(waker)), clock_(clock) {
  assert(waker_ != nullptr);
}

void PollContext::WakeNoLaterThan(absl::Time deadline) {
  wake_deadline_ = std::min(wake_deadline_, deadline);
}

PollResult PollResult::Error(absl::Status status) {
  assert(!status.ok());
  return PollResult(std::move(status));
}

absl::Status PollResult::status() const {
  if (const auto* status = std::get_if<absl::Status>(&value_)) return *status;
  return absl::OkStatus();
}

std::string PollResult::DebugString() const {
  switch (kind()) {
    case Kind::kPending:
      return "Pending";
    case Kind::kEnd:
      return "End";
    case Kind::kError:
      return absl::StrCat("Error(", status().ToString(), ")");
    case Kind::kReady:
      return absl::StrCat("Ready(", MessageDebugString(message()), ")");
  }
  return "?";
}

void BlockingWaker::Wake() {
  MutexLock lock(&mu_);
  woken_ = true;
  cv_.SignalAll();
}

void BlockingWaker::Reset() {
  MutexLock lock(&mu_);
  woken_ = false;
}

bool BlockingWaker::WaitUntil(Clock& clock, absl::Time deadline) {
  MutexLock lock(&mu_);
  if (deadline == absl::InfiniteFuture()) {
    // Not a timed wait, so the clock is not involved.
    while (!woken_) cv_.Wait(&mu_);
    return true;
  }
  return clock.WaitUntil(
      mu_, cv_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return woken_; },
      deadline);
}

}  // namespace backfill
