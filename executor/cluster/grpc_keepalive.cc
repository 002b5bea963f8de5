#include "executor/cluster/grpc_keepalive.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"

namespace backfill {
namespace {

int Milliseconds(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, INT_MAX));
}

// The arguments both ends set: ping after `interval` without traffic, also
// with no call open, and close the connection when the answer takes longer
// than `timeout`. By default a transport stops pinging after two pings with
// no data sent in between: an idle stream would then never notice its peer
// is gone. None when !keepalive.enabled().
std::vector<std::pair<const char*, int>> PingArguments(
    const Keepalive& keepalive) {
  if (!keepalive.enabled()) return {};
  return {{GRPC_ARG_KEEPALIVE_TIME_MS, Milliseconds(keepalive.interval)},
          {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Milliseconds(keepalive.timeout)},
          {GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1},
          {GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0}};
}

}  // namespace

void AddKeepaliveArguments(const Keepalive& keepalive,
                           grpc::ChannelArguments& arguments) {
  for (const auto& [name, value] : PingArguments(keepalive)) {
    arguments.SetInt(name, value);
  }
}

std::shared_ptr<grpc::Channel> CreateKeepaliveChannel(
    const std::string& address, const Keepalive& keepalive) {
  grpc::ChannelArguments arguments;
  AddKeepaliveArguments(keepalive, arguments);
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   arguments);
}

absl::Status WaitUntilConnected(grpc::Channel& channel, absl::Duration timeout,
                                const std::function<bool()>& cancelled,
                                absl::string_view what) {
  const absl::Time deadline = absl::Now() + timeout;
  // GetState(true) starts a connection attempt on an idle channel; one in
  // TRANSIENT_FAILURE tries again when its backoff ends.
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (cancelled != nullptr && cancelled()) {
      return absl::CancelledError(
          absl::StrCat(what, ": cancelled while connecting"));
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::UnavailableError(absl::StrCat(
          what, ": not connected within ", absl::FormatDuration(timeout), " (",
          state == GRPC_CHANNEL_TRANSIENT_FAILURE ? "every attempt failed"
          : state == GRPC_CHANNEL_SHUTDOWN        ? "the channel is shut down"
                                                  : "still connecting",
          ")"));
    }
    const absl::Time wake = std::min(deadline, now + absl::Milliseconds(50));
    channel.WaitForStateChange(state, absl::ToChronoTime(wake));
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

void ConfigureKeepalive(grpc::ServerBuilder& builder,
                        const Keepalive& keepalive) {
  if (!keepalive.enabled()) return;
  for (const auto& [name, value] : PingArguments(keepalive)) {
    builder.AddChannelArgument(name, value);
  }
  // Clients' pings at any rate: no strikes (a server otherwise answers a
  // client that pings more often than every 5 minutes with GOAWAY
  // "too_many_pings").
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
}

}  // namespace backfill
