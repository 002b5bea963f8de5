#include "executor/cluster/grpc_remote_actors.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

GrpcRemoteActors::GrpcRemoteActors(
    std::function<bool(ActorId)> is_local, ExchangeServer& server,
    std::function<std::string(ActorId)> address_of, uint32_t permits,
    uint64_t attempt_key)
    : is_local_(std::move(is_local)),
      server_(server),
      address_of_(std::move(address_of)),
      permits_(permits),
      attempt_key_(attempt_key) {}

GrpcRemoteActors::~GrpcRemoteActors() { CancelInputs(); }

bool GrpcRemoteActors::IsLocal(ActorId actor) const { return is_local_(actor); }

absl::Status GrpcRemoteActors::Serve(ActorId upstream, ActorId downstream,
                                     const Schema& schema,
                                     ChannelReceiver receiver) {
  BACKFILL_ASSIGN_OR_RETURN(MessageCodec codec, MessageCodec::Create(schema));
  return server_.AddOutput(upstream, downstream, std::move(receiver),
                           std::move(codec), attempt_key_);
}

absl::Status GrpcRemoteActors::Receive(ActorId upstream, ActorId downstream,
                                       const Schema& schema,
                                       ChannelSender sender) {
  BACKFILL_ASSIGN_OR_RETURN(MessageCodec codec, MessageCodec::Create(schema));
  std::string address = address_of_(upstream);
  if (address.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no exchange address for actor ", upstream,
                     " (the upstream of local actor ", downstream, ")"));
  }
  MutexLock lock(&mu_);
  inputs_.push_back(RemoteInput::Start({.address = std::move(address),
                                        .upstream = upstream,
                                        .downstream = downstream,
                                        .permits = permits_,
                                        .attempt_key = attempt_key_},
                                       std::move(codec), std::move(sender)));
  return absl::OkStatus();
}

std::vector<std::pair<ActorId, ActorId>> GrpcRemoteActors::InputsBlockedBefore(
    Epoch epoch, absl::Duration at_least) const {
  const absl::Time since = absl::Now() - at_least;
  std::vector<std::pair<ActorId, ActorId>> blocked;
  MutexLock lock(&mu_);
  for (const std::unique_ptr<RemoteInput>& input : inputs_) {
    if (input->blocked_since() <= since && input->last_barrier() < epoch) {
      blocked.emplace_back(input->upstream(), input->downstream());
    }
  }
  return blocked;
}

void GrpcRemoteActors::CancelInputs() {
  std::vector<std::unique_ptr<RemoteInput>> inputs;
  {
    MutexLock lock(&mu_);
    inputs.swap(inputs_);
  }
  // Destroying an input cancels it and joins its thread.
}

}  // namespace backfill
