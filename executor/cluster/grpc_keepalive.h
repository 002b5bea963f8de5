// Keepalive: HTTP/2 pings on the cluster's gRPC connections, so that a peer
// that vanished without closing its connections (a machine that lost power,
// a network partition, a process stopped with SIGSTOP) breaks the calls on
// them within `interval + timeout`, as a closed connection does at once.
// Without it such a call waits forever: e.g. a worker's control stream to a
// coordinator whose machine died would never end, so the worker would never
// register with the standby that took over.
//
//   auto channel = CreateKeepaliveChannel(address, Keepalive{});
//   grpc::ServerBuilder builder;
//   ConfigureKeepalive(builder, Keepalive{});
//
// Both ends must be configured: gRPC's default server closes a connection
// whose client pings more often than every 5 minutes. The etcd client is
// left alone: etcd's server refuses pings more often than every 5 s and
// pings without a call open.
//
// Connecting: WaitUntilConnected, before a call whose failure fails an
// attempt, lets a connection attempt that failed be retried instead.
#ifndef EXECUTOR_CLUSTER_GRPC_KEEPALIVE_H_
#define EXECUTOR_CLUSTER_GRPC_KEEPALIVE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace grpc {
class Channel;
class ChannelArguments;
class ServerBuilder;
}  // namespace grpc

namespace backfill {

struct Keepalive {
  // How long a connection may carry nothing before its end sends a ping.
  // absl::InfiniteDuration(): no pings (Off()).
  absl::Duration interval = absl::Seconds(2);
  // How long the ping's answer may take before the connection is closed as
  // dead: its calls fail with UNAVAILABLE. Generous, so that a loaded
  // machine is not taken for a dead one.
  absl::Duration timeout = absl::Seconds(10);

  static Keepalive Off() {
    return {absl::InfiniteDuration(), absl::Seconds(10)};
  }
  bool enabled() const {
    return interval > absl::ZeroDuration() &&
           interval < absl::InfiniteDuration();
  }
};

// The client's channel arguments: ping per `keepalive`, also with no call
// open and no data sent (the idle control stream of a worker is what must
// notice a dead coordinator). Nothing when !keepalive.enabled().
void AddKeepaliveArguments(const Keepalive& keepalive,
                           grpc::ChannelArguments& arguments);

// An insecure channel to `address` with AddKeepaliveArguments, whose failed
// connection attempts are retried after 100 ms, backing off to 1 s (gRPC's
// defaults: 1 s to 120 s, made for servers far away; ours are on one
// cluster's network).
std::shared_ptr<grpc::Channel> CreateKeepaliveChannel(
    const std::string& address, const Keepalive& keepalive);

// How long a cluster call waits for its channel's connection
// (WaitUntilConnected) before it fails: far more than a few retries, far
// less than a barrier timeout.
inline constexpr absl::Duration kConnectTimeout = absl::Seconds(5);

// Waits until `channel` is connected, trying again after each failed
// attempt, for at most `timeout`; checks `cancelled` every 50 ms. Call it
// before a call whose failure would fail an attempt: a call on a channel
// whose last connection attempt failed fails at once, and the gRPC of
// Debian 12 (1.51) fails some attempts that would succeed (it reads
// connect()'s errno after calls that may change it, and reports e.g. "No
// such file or directory"; gRPC pull request 35064). A peer that is gone
// still fails the call, `timeout` later.
// Errors: Unavailable "<what>: not connected within <timeout> (<state>)";
// Cancelled "<what>: cancelled while connecting" once `cancelled()`.
absl::Status WaitUntilConnected(grpc::Channel& channel, absl::Duration timeout,
                                const std::function<bool()>& cancelled,
                                absl::string_view what);

// The server's side: accepts its clients' pings however often they come
// (they are ours), and pings its clients per `keepalive` itself, so that a
// server call whose client vanished ends (it is cancelled). Nothing when
// !keepalive.enabled().
void ConfigureKeepalive(grpc::ServerBuilder& builder,
                        const Keepalive& keepalive);

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_GRPC_KEEPALIVE_H_
