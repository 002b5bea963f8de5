// BackfillOutput: a backfill executor's messages ready to emit, in order,
// with the barrier latency metric: each barrier's time from its arrival
// (BarrierArrived) to its emission (Pop) is observed as it leaves. Every
// backfill executor (arrangement, no-shuffle, snapshot) emits through one.
//
// clang-format off
//   BackfillOutput output(metrics.barrier_latency_seconds);
//   output.BarrierArrived(cx.clock().Now());   // a barrier came from upstream
//   output.Push(std::move(barrier));
//   if (!output.empty()) return PollResult::Ready(output.Pop(cx.clock().Now()));
// clang-format on
//
// Thread-safety: not thread-safe (one executor's state).
#ifndef EXECUTOR_BACKFILL_BACKFILL_OUTPUT_H_
#define EXECUTOR_BACKFILL_BACKFILL_OUTPUT_H_

#include <deque>

#include "absl/time/time.h"
#include "executor/message.h"
#include "metrics/registry.h"

namespace backfill {

class BackfillOutput {
 public:
  explicit BackfillOutput(Histogram barrier_latency_seconds)
      : barrier_latency_seconds_(barrier_latency_seconds) {}

  void Push(Message message) { messages_.push_back(std::move(message)); }
  // A barrier arrived from upstream at `now`. Each popped barrier is
  // measured from the oldest arrival not yet used, if there is one (the
  // first barrier, queued without an arrival, is popped before any).
  void BarrierArrived(absl::Time now) { arrivals_.push_back(now); }
  bool empty() const { return messages_.empty(); }
  // The first message; for a barrier, its latency observed.
  // REQUIRES: !empty().
  Message Pop(absl::Time now);
  // Drops the queued messages (the stream ends with an error).
  void Clear() { messages_.clear(); }

 private:
  Histogram barrier_latency_seconds_;
  std::deque<Message> messages_;
  std::deque<absl::Time> arrivals_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_BACKFILL_OUTPUT_H_
