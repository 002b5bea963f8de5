// MergeExecutor: merges the streams of several upstream actors into one,
// aligning barriers: chunks and watermarks pass as they come; a barrier is
// emitted once every input has delivered it (an input that delivered it is
// not polled again until then).
//
//   std::vector<BoxedExecutor> inputs = ...;     // one per backfill actor
//   MergeExecutor merge(std::move(inputs), info);
//   PollResult r = merge.PollNext(cx);
//
// Inputs are polled round-robin from a rotating start, so no input starves.
// Errors: an input error is returned (terminal); barriers that disagree on
// the epoch are an Internal error naming both; End once every input ended.
// Thread-safety: an Executor (one poller).
#ifndef EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_
#define EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_

#include <optional>
#include <vector>

#include "executor/barrier.h"
#include "executor/executor.h"

namespace backfill {

class MergeExecutor final : public Executor {
 public:
  // REQUIRES: !inputs.empty().
  MergeExecutor(std::vector<BoxedExecutor> inputs, ExecutorInfo info);

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

 private:
  std::vector<BoxedExecutor> inputs_;
  ExecutorInfo info_;
  // The barrier each input delivered and is waiting to be aligned.
  std::vector<std::optional<Barrier>> pending_barriers_;
  std::vector<bool> ended_;
  size_t next_ = 0;
  bool terminal_ = false;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_MERGE_EXECUTOR_H_
