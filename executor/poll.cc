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
  std::lock_guard<std::mutex> lock(mu_);
  woken_ = true;
  cv_.notify_all();
}

void BlockingWaker::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  woken_ = false;
}

bool BlockingWaker::WaitUntil(Clock& clock, absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (deadline == absl::InfiniteFuture()) {
    // Not a timed wait, so the clock is not involved (and a real clock's
    // conversion of an infinite deadline would overflow).
    cv_.wait(lock,
             [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return woken_; });
    return true;
  }
  return clock.WaitUntil(
      lock, cv_, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return woken_; },
      deadline);
}

}  // namespace backfill
