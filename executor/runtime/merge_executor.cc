#include "executor/runtime/merge_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/channel.h"

namespace backfill {

MergeExecutor::MergeExecutor(std::vector<BoxedExecutor> inputs,
                             ExecutorInfo info, ExchangeEndpoint endpoint)
    : info_(std::move(info)), endpoint_(std::move(endpoint)) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input input;
    input.actor = i < endpoint_.peers.size() ? endpoint_.peers[i] : 0;
    input.executor = std::move(inputs[i]);
    inputs_.push_back(std::move(input));
  }
}

PollResult MergeExecutor::Terminal(absl::Status status) {
  terminal_ = true;
  return PollResult::Error(std::move(status));
}

absl::Status MergeExecutor::Join(const Barrier& barrier,
                                 const MergeUpdate& update) {
  if (joined_at_ == barrier.epoch.curr) return absl::OkStatus();
  joined_at_ = barrier.epoch.curr;
  const std::string context = absl::StrCat(info_.identity, " at ",
                                           barrier.epoch.DebugString(), ": ");
  if (endpoint_.exchange == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(context, "an Update reschedules it but it has no exchange"));
  }
  for (ActorId actor : update.removed_upstream_actors) {
    bool found = false;
    for (const Input& input : inputs_) found |= input.actor == actor;
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, "removed actor ", actor, " is not an input"));
    }
    leaving_.insert(actor);
  }
  for (ActorId actor : update.added_upstream_actors) {
    absl::StatusOr<ChannelReceiver> receiver =
        endpoint_.exchange->TakeReceiver(actor, endpoint_.actor);
    if (!receiver.ok()) return receiver.status();
    ExecutorInfo input_info;
    input_info.identity = absl::StrCat("Exchange(from actor ", actor, ")");
    Input input;
    input.actor = actor;
    input.executor =
        std::make_unique<ReceiverExecutor>(input_info, *std::move(receiver));
    input.joining = true;
    inputs_.push_back(std::move(input));
  }
  return absl::OkStatus();
}

PollResult MergeExecutor::PollNext(PollContext& cx) {
  if (terminal_ || inputs_.empty()) return PollResult::End();
  // Every input that is not waiting must be polled in every round that ends
  // Pending, so that each holds this poll's waker. A barrier may add inputs
  // (Join): they are polled in the same round.
  const size_t start = next_ % inputs_.size();
  for (size_t step = 0; step < inputs_.size(); ++step) {
    const size_t i = (start + step) % inputs_.size();
    Input& input = inputs_[i];
    if (input.ended || input.pending_barrier.has_value()) continue;
    PollResult result = input.executor->PollNext(cx);
    if (result.is_pending()) continue;
    if (result.is_error()) {
      terminal_ = true;
      return result;
    }
    if (result.is_end()) {
      input.ended = true;
      continue;
    }
    Message& message = result.message();
    if (Barrier* barrier = std::get_if<Barrier>(&message)) {
      input.joining = false;
      input.pending_barrier = std::move(*barrier);
      if (const auto* update =
              input.pending_barrier->MutationAs<UpdateMutation>()) {
        auto it = update->merges.find(endpoint_.actor);
        if (it != update->merges.end()) {
          // Copied: Join may grow inputs_ (and move `input`).
          const Barrier joined = *input.pending_barrier;
          const size_t before = inputs_.size();
          if (absl::Status status = Join(joined, it->second); !status.ok()) {
            return Terminal(std::move(status));
          }
          // Poll the added inputs too (once: Join applies once per epoch).
          if (inputs_.size() != before) return PollNext(cx);
        }
      }
      continue;  // this input now waits for the others
    }
    if (input.joining) {
      return Terminal(absl::InternalError(absl::StrCat(
          info_.identity, ": input from actor ", input.actor,
          " added by a rescale sent ", MessageDebugString(message),
          " before its first barrier")));
    }
    next_ = (i + 1) % inputs_.size();
    return result;
  }
  // Aligned: every live input delivered a barrier.
  bool all = true, any = false;
  const Barrier* aligned = nullptr;
  for (const Input& input : inputs_) {
    if (input.ended) continue;
    if (!input.pending_barrier.has_value()) {
      all = false;
      break;
    }
    any = true;
    if (aligned == nullptr) {
      aligned = &*input.pending_barrier;
    } else if (!(aligned->epoch == input.pending_barrier->epoch)) {
      return Terminal(absl::InternalError(absl::StrCat(
          info_.identity, ": misaligned barriers ", aligned->epoch.DebugString(),
          " and ", input.pending_barrier->epoch.DebugString())));
    }
  }
  if (all && any) {
    Barrier barrier = *aligned;
    std::vector<Input> staying;
    for (Input& input : inputs_) {
      input.pending_barrier.reset();
      if (!leaving_.contains(input.actor)) staying.push_back(std::move(input));
    }
    inputs_ = std::move(staying);
    leaving_.clear();
    return PollResult::Ready(std::move(barrier));
  }
  bool all_ended = true;
  for (const Input& input : inputs_) all_ended &= input.ended;
  if (all_ended) {
    terminal_ = true;
    return PollResult::End();
  }
  // Every input that is neither ended nor holding a barrier was polled and
  // returned Pending, so each registered the waker.
  return PollResult::Pending();
}

}  // namespace backfill
