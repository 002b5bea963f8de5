#include "executor/cluster/grpc_keepalive.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "grpcpp/grpcpp.h"

namespace backfill {
namespace {

int Milliseconds(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, INT_MAX));
}

}  // namespace

void AddKeepaliveArguments(const Keepalive& keepalive,
                           grpc::ChannelArguments& arguments) {
  if (!keepalive.enabled()) return;
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS,
                   Milliseconds(keepalive.interval));
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                   Milliseconds(keepalive.timeout));
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // By default a transport stops pinging after two pings with no data sent
  // in between: an idle stream would then never notice its peer is gone.
  arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
}

std::shared_ptr<grpc::Channel> CreateKeepaliveChannel(
    const std::string& address, const Keepalive& keepalive) {
  grpc::ChannelArguments arguments;
  AddKeepaliveArguments(keepalive, arguments);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   arguments);
}

void ConfigureKeepalive(grpc::ServerBuilder& builder,
                        const Keepalive& keepalive) {
  if (!keepalive.enabled()) return;
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             Milliseconds(keepalive.interval));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             Milliseconds(keepalive.timeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Clients' pings: any rate, no strikes (a server otherwise answers pings
  // more often than every 5 minutes with GOAWAY "too_many_pings").
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      Milliseconds(keepalive.interval) / 2 + 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
}

}  // namespace backfill
