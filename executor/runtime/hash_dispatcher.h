// HashDispatcher: the output of the upstream actor: routes each change to the
// backfill actor owning its vnode (the table's distribution: the same vnode
// function as storage and the executor), projected to S2, and broadcasts
// barriers. A U-/U+ pair whose halves go to different actors becomes a Delete
// for one and an Insert for the other. It is the upstream actor's
// ActorOutput (executor/runtime/actor.h): Push splits a message into one per
// output, PollFlush delivers them without blocking (back-pressure: Pending
// while an output channel is full). Dispatch does both, blocking.
//
//   HashDispatcher dispatcher(std::move(senders), hasher, owners, s2, clock,
//                             {source_actor, backfill_actors, &exchange});
//   BACKFILL_RETURN_IF_ERROR(dispatcher.Dispatch(std::move(message)));
//
// Rescheduling (an online rescale): a barrier whose UpdateMutation has a
// DispatcherUpdate for the endpoint's actor is delivered to every current
// output and to the added ones (their senders taken from the endpoint's
// exchange: the barrier is their first message); the removed outputs get
// nothing after it (each is closed once it took the barrier), and the
// changes after it are routed by the update's vnode owners. The upstream
// actor itself keeps running. The time the upstream is blocked around a
// rescale is measured: max_rescale_blocked() (below).
//
// Thread-safety: one thread at a time (the upstream actor's); max_blocked()
// and max_rescale_blocked() from any thread.
#ifndef EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
#define EXECUTOR_RUNTIME_HASH_DISPATCHER_H_

#include <atomic>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/channel.h"
#include "executor/message.h"
#include "executor/runtime/actor.h"
#include "executor/runtime/exchange.h"
#include "serde/vnode_hash.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

class HashDispatcher final : public ActorOutput {
 public:
  // `hasher` works on S1 rows; `vnode_owner[v]` is the index in `outputs` of
  // the actor owning vnode v; `s2_indices` are the S1 indices of S2.
  // `endpoint` (optional): the dispatcher's actor and the actor of each
  // output, for rescheduling; REQUIRES endpoint.peers.size() ==
  // outputs.size() when endpoint.exchange is set.
  HashDispatcher(std::vector<ChannelSender> outputs, VnodeHasher hasher,
                 std::vector<int> vnode_owner, std::vector<int> s2_indices,
                 Clock& clock, ExchangeEndpoint endpoint = {});

  // Push, then PollFlush until everything is delivered, blocking the
  // calling thread while an output is full. Errors: PollFlush's.
  absl::Status Dispatch(Message message);

  // ActorOutput. Push routes a chunk (its part for each actor) or
  // broadcasts a barrier (rescheduling as the file comment says; errors:
  // InvalidArgument for a DispatcherUpdate this dispatcher cannot follow:
  // no exchange, an unknown removed actor, vnode owners that are not one
  // per vnode or name an actor without an output; the exchange's NotFound);
  // watermarks are dropped (the backfill drops them anyway until it
  // finished). PollFlush delivers, in order per output; errors: Cancelled
  // "dispatcher: ..." for a closed output (its actor is gone). Close closes
  // every output (end of stream for the actors).
  absl::Status Push(Message message) override;
  absl::StatusOr<bool> PollFlush(PollContext& cx) override;
  void Close() override;

  // The longest a single send waited for room in a full output (back-pressure
  // from a backfill actor onto the upstream). Thread-safe.
  absl::Duration max_blocked() const {
    return absl::Nanoseconds(max_blocked_ns_.load(std::memory_order_relaxed));
  }
  // The upstream's blocked time around a rescale: from the rescale barrier's
  // Push until the next barrier was delivered to every output, the total
  // time PollFlush kept returning false (the upstream actor cannot go on);
  // the largest such total over the rescales so far (back-to-back rescales
  // count as one). Thread-safe.
  absl::Duration max_rescale_blocked() const {
    return absl::Nanoseconds(
        max_rescale_blocked_ns_.load(std::memory_order_relaxed));
  }

 private:
  struct Output {
    Output(ActorId actor, ChannelSender sender)
        : actor(actor), sender(std::move(sender)) {}
    ActorId actor;
    ChannelSender sender;
    // Pushed and not yet delivered.
    std::deque<Message> pending;
    // Since when the first of `pending` waits for room (for max_blocked).
    std::optional<absl::Time> blocked_since;
    // Removed by a rescale: it gets nothing after what is pending.
    bool removed = false;
  };
  enum class Window { kNone, kOpen, kClosing };

  absl::Status ApplyUpdate(const Barrier& barrier,
                           const DispatcherUpdate& update);
  // Closes and drops the removed outputs that delivered everything.
  void DropRemovedOutputs();
  static void RaiseTo(std::atomic<int64_t>& max, int64_t value);

  std::vector<Output> outputs_;
  VnodeHasher hasher_;
  std::vector<int> vnode_owner_;
  std::vector<int> s2_indices_;
  Clock& clock_;
  ExchangeEndpoint endpoint_;
  // Per-chunk scratch: the vnode of each row.
  std::vector<VirtualNode> vnodes_;
  // Since when PollFlush keeps returning false (the upstream is blocked).
  std::optional<absl::Time> stalled_since_;
  // The rescale window (max_rescale_blocked) and its blocked time so far.
  Window window_ = Window::kNone;
  absl::Duration window_blocked_;
  std::atomic<int64_t> max_blocked_ns_{0};
  std::atomic<int64_t> max_rescale_blocked_ns_{0};
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
