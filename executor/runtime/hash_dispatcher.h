// HashDispatcher: the output of the upstream actor: routes each change to the
// backfill actor owning its vnode (the table's distribution: the same vnode
// function as storage and the executor), projected to S2, and broadcasts
// barriers. A U-/U+ pair whose halves go to different actors becomes a Delete
// for one and an Insert for the other. Sends block while an output channel
// is full (back-pressure).
//
//   HashDispatcher dispatcher(std::move(senders), hasher, owners, s2, clock);
//   BACKFILL_RETURN_IF_ERROR(dispatcher.Dispatch(std::move(message)));
//
// Thread-safety: one thread (the upstream actor's).
#ifndef EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
#define EXECUTOR_RUNTIME_HASH_DISPATCHER_H_

#include <atomic>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/channel.h"
#include "executor/message.h"
#include "serde/vnode_hash.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

class HashDispatcher {
 public:
  // `hasher` works on S1 rows; `vnode_owner[v]` is the index in `outputs` of
  // the actor owning vnode v; `s2_indices` are the S1 indices of S2.
  HashDispatcher(std::vector<ChannelSender> outputs, VnodeHasher hasher,
                 std::vector<int> vnode_owner, std::vector<int> s2_indices,
                 Clock& clock);

  // Routes a chunk, broadcasts a barrier or a watermark (watermarks are
  // dropped: the backfill drops them anyway until it finished). Errors: a
  // closed output (its actor is gone).
  absl::Status Dispatch(Message message);
  // Closes every output (end of stream for the actors).
  void Close();

  // The longest a single send waited for room in a full output (back-pressure
  // from a backfill actor onto the upstream). Thread-safe.
  absl::Duration max_blocked() const {
    return absl::Nanoseconds(max_blocked_ns_.load(std::memory_order_relaxed));
  }

 private:
  // Sends without waiting when there is room; otherwise waits (Send) and
  // records how long.
  absl::Status SendTo(ChannelSender& output, Message message);

  std::vector<ChannelSender> outputs_;
  VnodeHasher hasher_;
  std::vector<int> vnode_owner_;
  std::vector<int> s2_indices_;
  Clock& clock_;
  // Per-chunk scratch: the vnode of each row.
  std::vector<VirtualNode> vnodes_;
  std::atomic<int64_t> max_blocked_ns_{0};
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_HASH_DISPATCHER_H_
