#include "executor/testing/scripted_executor.h"

#include <cassert>
#include <utility>

namespace backfill {
namespace testing {

ScriptedExecutor::ScriptedExecutor(ExecutorInfo info,
                                   ScriptedExecutorOptions options)
    : info_(std::move(info)), options_(options) {}

void ScriptedExecutor::Push(Message message) { PushStep(std::move(message)); }
void ScriptedExecutor::PushPending() { PushStep(PendingOnce{}); }
void ScriptedExecutor::PushPendingUntil(absl::Time deadline) {
  PushStep(PendingUntil{deadline});
}
void ScriptedExecutor::PushError(absl::Status error) {
  assert(!error.ok());
  PushStep(std::move(error));
}

void ScriptedExecutor::PushStep(Step step) {
  std::shared_ptr<Waker> to_wake;
  {
    MutexLock lock(&mu_);
    steps_.push_back(std::move(step));
    to_wake = std::move(waker_);
    waker_ = nullptr;
  }
  if (to_wake != nullptr) to_wake->Wake();
}

void ScriptedExecutor::Close() {
  std::shared_ptr<Waker> to_wake;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    to_wake = std::move(waker_);
    waker_ = nullptr;
  }
  if (to_wake != nullptr) to_wake->Wake();
}

size_t ScriptedExecutor::num_remaining() const {
  MutexLock lock(&mu_);
  return steps_.size();
}

size_t ScriptedExecutor::num_polls() const {
  MutexLock lock(&mu_);
  return num_polls_;
}

PollResult ScriptedExecutor::PollNext(PollContext& cx) {
  std::shared_ptr<Waker> to_wake;
  PollResult result = PollResult::Pending();
  {
    MutexLock lock(&mu_);
    result = PollLocked(cx, &to_wake);
  }
  if (to_wake != nullptr) to_wake->Wake();
  return result;
}

PollResult ScriptedExecutor::PollLocked(PollContext& cx,
                                        std::shared_ptr<Waker>* to_wake) {
  ++num_polls_;
  while (true) {
    if (terminal_.has_value()) {
      return terminal_->ok() ? PollResult::End()
                             : PollResult::Error(*terminal_);
    }
    if (steps_.empty()) {
      if (closed_ || options_.when_exhausted ==
                         ScriptedExecutorOptions::WhenExhausted::kEnd) {
        terminal_ = absl::OkStatus();
        continue;
      }
      waker_ = cx.waker();
      return PollResult::Pending();
    }
    Step& step = steps_.front();
    if (auto* message = std::get_if<Message>(&step)) {
      PollResult result = PollResult::Ready(std::move(*message));
      steps_.pop_front();
      return result;
    }
    if (std::holds_alternative<PendingOnce>(step)) {
      steps_.pop_front();
      *to_wake = cx.waker();
      return PollResult::Pending();
    }
    if (auto* until = std::get_if<PendingUntil>(&step)) {
      if (cx.clock().Now() < until->deadline) {
        cx.WakeNoLaterThan(until->deadline);
        return PollResult::Pending();
      }
      steps_.pop_front();
      continue;
    }
    terminal_ = std::get<absl::Status>(std::move(step));
    steps_.clear();
  }
}

}  // namespace testing
}  // namespace backfill
