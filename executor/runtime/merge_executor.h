// MergeExecutor: merges the streams of several upstream actors into one,
// aligning barriers: chunks and watermarks pass as they come; a barrier is
// emitted once every input has delivered it (an input that delivered it is
// not polled again until then).
//
//   std::vector<BoxedExecutor> inputs = ...;     // one per backfill actor
//   MergeExecutor merge(std::move(inputs), info,
//                       {view_actor, backfill_actors, &exchange});
//   PollResult r = merge.PollNext(cx);
//
// Rescheduling (an online rescale): when an input delivers a barrier whose
// UpdateMutation has a MergeUpdate for the endpoint's actor, the added
// inputs join at once (their receivers taken from the endpoint's exchange;
// each must deliver that same barrier as its first message), the barrier is
// aligned across the old and the added inputs, and when it is emitted the
// removed inputs leave (their actors stopped at it).
//
// Inputs are polled round-robin from a rotating start, so no input starves.
// Errors: an input error is returned (terminal); barriers that disagree on
// the epoch are an Internal error naming both; an added input whose first
// message is not a barrier is Internal; a MergeUpdate it cannot follow (no
// exchange, an unknown removed input) is InvalidArgument, the exchange's
// NotFound; End once every input ended.
// Thread-safety: an Executor (one poller).
#ifndef EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_
#define EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_

#include <optional>
#include <set>
#include <vector>

#include "executor/barrier.h"
#include "executor/executor.h"
#include "executor/runtime/exchange.h"

namespace backfill {

class MergeExecutor final : public Executor {
 public:
  // REQUIRES: !inputs.empty(); endpoint.peers.size() == inputs.size() when
  // endpoint.exchange is set (the upstream actor of each input).
  MergeExecutor(std::vector<BoxedExecutor> inputs, ExecutorInfo info,
                ExchangeEndpoint endpoint = {});

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

 private:
  struct Input {
    ActorId actor = 0;
    BoxedExecutor executor;
    // The barrier it delivered, waiting to be aligned.
    std::optional<Barrier> pending_barrier;
    bool ended = false;
    // Added by a rescale and has not delivered its first barrier yet.
    bool joining = false;
  };

  PollResult Terminal(absl::Status status);
  // Adds the inputs of `update` (once per barrier epoch).
  absl::Status Join(const Barrier& barrier, const MergeUpdate& update);

  std::vector<Input> inputs_;
  ExecutorInfo info_;
  ExchangeEndpoint endpoint_;
  // Inputs to remove once the barrier being aligned is emitted.
  std::set<ActorId> leaving_;
  // The epoch (curr) of the last barrier whose MergeUpdate was applied.
  std::optional<Epoch> joined_at_;
  size_t next_ = 0;
  bool terminal_ = false;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_
