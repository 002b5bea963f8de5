// Executor: the pull-based, non-blocking stream operator interface, and the
// blocking NextMessage adapter for threads and tests.
//
// clang-format off
//   BoxedExecutor upstream = std::make_unique<ReceiverExecutor>(info, std::move(rx));
//   absl::StatusOr<std::optional<Message>> next = NextMessage(*upstream, clock);
//   // next: an error, nullopt (end of stream) or the next message.
// clang-format on
//
// PROTOCOL
//
// An executor is a stream of Messages that is *polled*. A driver (the actor
// runtime: one thread per actor blocking on a BlockingWaker, or a
// single-threaded deterministic scheduler that never blocks) owns the root
// executor of a task; every executor owns its inputs (BoxedExecutor) and
// polls them from inside its own PollNext, passing down the same
// PollContext, so that whatever an input waits on wakes the whole task.
//
// PollNext(cx) never blocks and returns one of:
//   * Pending: nothing can be produced now. Before returning Pending the
//     executor MUST have arranged a wake-up: some source it polled returned
//     Pending and so registered cx.waker() (an input, a channel, a storage
//     read), and/or it called cx.WakeNoLaterThan(t) (a timed wait such as
//     rate-limiter tokens), and/or it woke cx.waker() itself (to yield
//     cooperatively). The driver polls again after Wake() or at the deadline,
//     whichever is first. Spurious polls (nothing changed) are allowed and
//     must be harmless: return Pending again, re-registering the new waker.
//   * Ready(message): the next message; the driver may poll again at once.
//   * Error(status): the stream failed. Terminal. The status carries context
//     (executor identity, table, vnode, epoch as relevant).
//   * End: the stream finished normally (its input closed, or the executor
//     stopped after a Stop barrier for its actor). Terminal.
// After a terminal result the executor is fused: further polls return the
// same result again (executors in this package do so; the driver should not
// rely on it and should not poll again).
//
// The first message of every stream is a Barrier; a stream that starts with
// anything else is malformed (consumers return an error). This replaces the
// seed's `execute_with_epoch`: the epoch is learnt from that barrier.
//
// Each poll must only register the *latest* waker: a source that holds an
// older waker replaces it. Wakers are shared_ptr so a source can wake after
// the poll returned; waking a finished task is a no-op.
//
// Thread-safety: an executor is used by one task at a time: PollNext is
// never called concurrently. It may move between threads between polls.
// info() is immutable after construction and may be read from any thread.
#ifndef EXECUTOR_EXECUTOR_H_
#define EXECUTOR_EXECUTOR_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/message.h"
#include "executor/poll.h"
#include "serde/data_type.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// Static description of an executor's output.
struct ExecutorInfo {
  // Type of each output column, in order.
  std::vector<DataType> schema = {};
  // Indices into `schema` of the stream key (the columns that identify a
  // row in the change stream).
  std::vector<int> stream_key = {};
  // Human-readable identity used in errors and logs, e.g.
  // "ArrangementBackfill(actor 7, table 3)".
  std::string identity = {};
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Produces the next message, or Pending / Error / End; see PROTOCOL above.
  // REQUIRES: not called concurrently; `cx` outlives the call.
  virtual PollResult PollNext(PollContext& cx) = 0;

  // The output description. Lifetime: that of the executor.
  virtual const ExecutorInfo& info() const = 0;
};

// The owned handle of an executor (the seed's `BoxedExecutor`).
using BoxedExecutor = std::unique_ptr<Executor>;

// Polls `executor` until it is not Pending, blocking the calling thread on a
// BlockingWaker (up to each Pending poll's wake deadline, measured on
// `clock`). Returns the message, nullopt at end of stream, or the stream's
// error. For threaded drivers and tests; a deterministic scheduler polls
// directly instead.
// REQUIRES: as for PollNext; `clock` outlives the call.
absl::StatusOr<std::optional<Message>> NextMessage(Executor& executor,
                                                   Clock& clock);

}  // namespace backfill

#endif  // EXECUTOR_EXECUTOR_H_
