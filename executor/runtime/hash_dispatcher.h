// HashDispatcher: the output of the upstream actor: routes each change to the
// backfill actor owning its vnode (the table's distribution: the same vnode
// function as storage and the executor), projected to S2, and broadcasts
// barriers. A U-/U+ pair whose halves go to different actors becomes a Delete
// for one and an Insert for the other. It is the upstream actor's
// ActorOutput (executor/runtime/actor.h): Push splits a message into one per
// output, PollFlush delivers them without blocking (back-pressure: Pending
// while an output channel is full). Dispatch does both, blocking.
//
//   HashDispatcher dispatcher(std::move(senders), hasher, owners, s2, clock);
//   BACKFILL_RETURN_IF_ERROR(dispatcher.Dispatch(std::move(message)));
//
// Thread-safety: one thread at a time (the upstream actor's); max_blocked()
// from any thread.
#ifndef EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
#define EXECUTOR_RUNTIME_HASH_DISPATCHER_H_

#include <atomic>
#include <deque>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/channel.h"
#include "executor/message.h"
#include "executor/runtime/actor.h"
#include "serde/vnode_hash.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

class HashDispatcher final : public ActorOutput {
 public:
  // `hasher` works on S1 rows; `vnode_owner[v]` is the index in `outputs` of
  // the actor owning vnode v; `s2_indices` are the S1 indices of S2.
  HashDispatcher(std::vector<ChannelSender> outputs, VnodeHasher hasher,
                 std::vector<int> vnode_owner, std::vector<int> s2_indices,
                 Clock& clock);

  // Push, then PollFlush until everything is delivered, blocking the
  // calling thread while an output is full. Errors: PollFlush's.
  absl::Status Dispatch(Message message);

  // ActorOutput. Push routes a chunk (its part for each actor) or
  // broadcasts a barrier; watermarks are dropped (the backfill drops them
  // anyway until it finished). PollFlush delivers, in order per output;
  // errors: Cancelled "dispatcher: ..." for a closed output (its actor is
  // gone). Close closes every output (end of stream for the actors).
  absl::Status Push(Message message) override;
  absl::StatusOr<bool> PollFlush(PollContext& cx) override;
  void Close() override;

  // The longest a single send waited for room in a full output (back-pressure
  // from a backfill actor onto the upstream). Thread-safe.
  absl::Duration max_blocked() const {
    return absl::Nanoseconds(max_blocked_ns_.load(std::memory_order_relaxed));
  }

 private:
  std::vector<ChannelSender> outputs_;
  VnodeHasher hasher_;
  std::vector<int> vnode_owner_;
  std::vector<int> s2_indices_;
  Clock& clock_;
  // Per output: the messages pushed and not yet delivered, and since when
  // the first of them waits for room (for max_blocked).
  std::vector<std::deque<Message>> pending_;
  std::vector<std::optional<absl::Time>> blocked_since_;
  // Per-chunk scratch: the vnode of each row.
  std::vector<VirtualNode> vnodes_;
  std::atomic<int64_t> max_blocked_ns_{0};
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
