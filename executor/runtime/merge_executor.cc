#include "executor/runtime/merge_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {

MergeExecutor::MergeExecutor(std::vector<BoxedExecutor> inputs,
                             ExecutorInfo info)
    : inputs_(std::move(inputs)),
      info_(std::move(info)),
      pending_barriers_(inputs_.size()),
      ended_(inputs_.size(), false) {}

PollResult MergeExecutor::PollNext(PollContext& cx) {
  if (terminal_) return PollResult::End();
  const size_t n = inputs_.size();
  // Every input that is not waiting must be polled in every round that ends
  // Pending, so that each holds this poll's waker.
  const size_t start = next_;
  for (size_t step = 0; step < n; ++step) {
    const size_t i = (start + step) % n;
    if (ended_[i] || pending_barriers_[i].has_value()) continue;
    PollResult result = inputs_[i]->PollNext(cx);
    if (result.is_pending()) continue;
    if (result.is_error()) {
      terminal_ = true;
      return result;
    }
    if (result.is_end()) {
      ended_[i] = true;
      continue;
    }
    Message& message = result.message();
    if (Barrier* barrier = std::get_if<Barrier>(&message)) {
      pending_barriers_[i] = std::move(*barrier);
      continue;  // this input now waits for the others
    }
    next_ = (i + 1) % n;
    return result;
  }
  // Aligned: every live input delivered a barrier.
  bool all = true, any = false;
  std::optional<Barrier> aligned;
  for (size_t i = 0; i < n; ++i) {
    if (ended_[i]) continue;
    if (!pending_barriers_[i].has_value()) {
      all = false;
      break;
    }
    any = true;
    if (!aligned.has_value()) {
      aligned = pending_barriers_[i];
    } else if (!(aligned->epoch == pending_barriers_[i]->epoch)) {
      terminal_ = true;
      return PollResult::Error(absl::InternalError(absl::StrCat(
          info_.identity, ": misaligned barriers ", aligned->epoch.DebugString(),
          " and ", pending_barriers_[i]->epoch.DebugString())));
    }
  }
  if (all && any) {
    for (auto& pending : pending_barriers_) pending.reset();
    return PollResult::Ready(std::move(*aligned));
  }
  bool all_ended = true;
  for (bool e : ended_) all_ended &= e;
  if (all_ended) {
    terminal_ = true;
    return PollResult::End();
  }
  // Every input that is neither ended nor holding a barrier was polled and
  // returned Pending, so each registered the waker.
  return PollResult::Pending();
}

}  // namespace backfill
