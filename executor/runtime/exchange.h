// Exchange: the channels between actors that a graph made for a rescale and
// whose ends their operators have not taken yet, by (upstream actor,
// downstream actor). Whoever builds new actors puts the far ends here; the
// hash dispatcher and the merge take them when the Update barrier that
// names the new actors reaches them (executor/barrier.h DispatcherUpdate,
// MergeUpdate), as RisingWave's actors find their new channels in the
// stream manager's shared context.
//
//   Exchange exchange;
//   auto [tx, rx] = MakeChannel(options);
//   exchange.PutSender(/*upstream=*/1, /*downstream=*/103, std::move(tx));
//   ...                                        // in the dispatcher, later:
//   BACKFILL_ASSIGN_OR_RETURN(ChannelSender out, exchange.TakeSender(1, 103));
//
// Thread-safety: thread-safe (one lock); an end is taken at most once.
#ifndef EXECUTOR_RUNTIME_EXCHANGE_H_
#define EXECUTOR_RUNTIME_EXCHANGE_H_

#include <map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "executor/barrier.h"
#include "executor/channel.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class Exchange;

// Who an operator that follows rescheduling Update barriers is, and whom it
// is connected to: the hash dispatcher (peers: the downstream actor of each
// output) and the merge (peers: the upstream actor of each input).
struct ExchangeEndpoint {
  // The operator's actor (the key of its DispatcherUpdate / MergeUpdate).
  ActorId actor = 0;
  // One per output (dispatcher) or input (merge), in order.
  std::vector<ActorId> peers;
  // Where the channels of added peers come from. Null: the operator does
  // not follow rescheduling (an Update naming its actor is an error).
  Exchange* exchange = nullptr;
};

class Exchange {
 public:
  // The sending end of the channel from `upstream` to `downstream`, for
  // `upstream` to take. Replaces an untaken one (which closes it).
  void PutSender(ActorId upstream, ActorId downstream, ChannelSender sender)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The receiving end, for `downstream` to take.
  void PutReceiver(ActorId upstream, ActorId downstream,
                   ChannelReceiver receiver) ABSL_LOCKS_EXCLUDED(mu_);

  // Takes an end put before. Errors: NotFound "no channel from actor U to
  // actor D in the exchange" (never put, or taken already).
  absl::StatusOr<ChannelSender> TakeSender(ActorId upstream,
                                           ActorId downstream)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<ChannelReceiver> TakeReceiver(ActorId upstream,
                                               ActorId downstream)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops every untaken end: an actor waiting on a channel whose other end
  // was never taken sees it end (End, or Cancelled for a sender). For a
  // driver that stops an attempt.
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Key = std::pair<ActorId, ActorId>;

  Mutex mu_;
  std::map<Key, ChannelSender> senders_ ABSL_GUARDED_BY(mu_);
  std::map<Key, ChannelReceiver> receivers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_EXCHANGE_H_
