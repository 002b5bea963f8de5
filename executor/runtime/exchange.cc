#include "executor/runtime/exchange.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

absl::Status Missing(ActorId upstream, ActorId downstream) {
  return absl::NotFoundError(absl::StrCat("no channel from actor ", upstream,
                                          " to actor ", downstream,
                                          " in the exchange"));
}

}  // namespace

void Exchange::PutSender(ActorId upstream, ActorId downstream,
                         ChannelSender sender) {
  MutexLock lock(&mu_);
  senders_.insert_or_assign(Key{upstream, downstream}, std::move(sender));
}

void Exchange::PutReceiver(ActorId upstream, ActorId downstream,
                           ChannelReceiver receiver) {
  MutexLock lock(&mu_);
  receivers_.insert_or_assign(Key{upstream, downstream}, std::move(receiver));
}

absl::StatusOr<ChannelSender> Exchange::TakeSender(ActorId upstream,
                                                   ActorId downstream) {
  MutexLock lock(&mu_);
  auto it = senders_.find(Key{upstream, downstream});
  if (it == senders_.end()) return Missing(upstream, downstream);
  ChannelSender sender = std::move(it->second);
  senders_.erase(it);
  return sender;
}

absl::StatusOr<ChannelReceiver> Exchange::TakeReceiver(ActorId upstream,
                                                       ActorId downstream) {
  MutexLock lock(&mu_);
  auto it = receivers_.find(Key{upstream, downstream});
  if (it == receivers_.end()) return Missing(upstream, downstream);
  ChannelReceiver receiver = std::move(it->second);
  receivers_.erase(it);
  return receiver;
}

void Exchange::Clear() {
  std::map<Key, ChannelSender> senders;
  std::map<Key, ChannelReceiver> receivers;
  {
    MutexLock lock(&mu_);
    senders.swap(senders_);
    receivers.swap(receivers_);
  }
  // Closed outside the lock: closing wakes the other ends' actors.
}

}  // namespace backfill
