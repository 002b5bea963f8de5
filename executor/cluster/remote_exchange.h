// The data exchange between processes: one stream edge (upstream actor ->
// downstream actor) carried over gRPC (exchange.proto), so that actors in
// different processes stay connected by what behaves like a local channel.
//
//   upstream process                       downstream process
//   dispatcher -> channel -> ExchangeServer ==gRPC==> RemoteInput -> channel ->
//   ReceiverExecutor
//
//   // upstream: serve the far end of the dispatcher's output channel
//   auto [tx, rx] = MakeChannel();            // tx goes to the dispatcher
//   BACKFILL_RETURN_IF_ERROR(server->AddOutput(1, 101, std::move(rx)));
//   // downstream: fill a local channel that the actor reads
//   auto [in_tx, in_rx] = MakeChannel();      // in_rx goes to the actor
//   std::unique_ptr<RemoteInput> input = RemoteInput::Start(
//       {.address = server_address, .upstream = 1, .downstream = 101},
//       codec, std::move(in_tx));
//
// Order: the messages arrive in the order they were sent. Back-pressure is
// end to end, with credits as RisingWave's exchange: the receiver grants
// `permits` messages and grants one more for each message it has put into
// its local channel, so a downstream actor that stops reading stops the
// upstream actor's sends once its local channel, the permits and the
// upstream channel are full (at most capacity + permits + capacity + 2
// messages in between). Ends: the upstream channel's end (Close) ends the
// local channel (End); its error (Fail) fails it with that code and
// message; a broken connection or a server shut down fails it
// (UNAVAILABLE, naming the edge and the address), never ends it, so a
// downstream actor cannot take a lost upstream for a finished one. A
// downstream receiver that closes (its actor is gone) cancels the call and
// the upstream channel's receiver closes: the upstream's sends are
// Cancelled, as for a local channel.
//
// Thread-safety: ExchangeServer is thread-safe. RemoteInput runs on its own
// thread; its methods may be called from any thread.
#ifndef EXECUTOR_CLUSTER_REMOTE_EXCHANGE_H_
#define EXECUTOR_CLUSTER_REMOTE_EXCHANGE_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/barrier.h"
#include "executor/channel.h"
#include "executor/cluster/grpc_keepalive.h"
#include "executor/cluster/message_codec.h"
#include "third_party/absl_extras/mutex.h"

namespace grpc {
class ClientContext;
class Server;
class ServerContext;
}  // namespace grpc

namespace backfill {

struct ExchangeServerOptions {
  // host:port; port 0 picks a free one (ExchangeServer::address()).
  std::string listen_address = "127.0.0.1:0";
  // How often a sender blocked on an empty channel checks whether its call
  // was cancelled or the server is shutting down.
  absl::Duration cancel_check_interval = absl::Milliseconds(50);
  // How long a call for an edge not added yet waits for AddOutput (the
  // downstream process may connect before the upstream one built its
  // actors) before it is refused with NOT_FOUND.
  absl::Duration edge_wait = absl::Seconds(10);
  // Pings on the receivers' connections (grpc_keepalive.h): the call of a
  // receiver that vanished without closing it ends (its channel's receiver
  // closes).
  Keepalive keepalive = {};
};

// The upstream process's end: serves the edges added with AddOutput.
class ExchangeServer {
 public:
  // Errors: InvalidArgument for a listen address without a port;
  // Unavailable when it cannot listen there.
  static absl::StatusOr<std::unique_ptr<ExchangeServer>> Start(
      ExchangeServerOptions options = {});
  ~ExchangeServer();  // Shutdown()

  ExchangeServer(const ExchangeServer&) = delete;
  ExchangeServer& operator=(const ExchangeServer&) = delete;

  // host:port the server listens on.
  const std::string& address() const { return address_; }

  // Serves the edge `upstream` -> `downstream`: `receiver` is the far end
  // of the channel the upstream actor sends into; `codec` encodes its
  // messages. One receiver reads it, once; once that call ended the edge is
  // gone and may be added again (a later attempt of the job).
  // `attempt_key`: the attempt of the upstream actor (0: none); only a
  // receiver of the same attempt (RemoteInputOptions::attempt_key) takes
  // the edge. Errors: AlreadyExists if the edge is added and its call has
  // not ended; FailedPrecondition after Shutdown.
  absl::Status AddOutput(ActorId upstream, ActorId downstream,
                         ChannelReceiver receiver, MessageCodec codec,
                         uint64_t attempt_key = 0) ABSL_LOCKS_EXCLUDED(mu_);

  // Drops every edge no call has taken (their upstream actors' sends are
  // Cancelled): what an attempt that ended left unread. Edges being
  // received stay until their calls end.
  void ClearUntaken() ABSL_LOCKS_EXCLUDED(mu_);

  // The edges being received whose receivers have granted no permit for at
  // least `at_least` (every message granted was sent, and no more were
  // granted since): their downstream actors stopped reading. For a
  // coordinator to tell which downstream process holds up the job.
  std::vector<std::pair<ActorId, ActorId>> EdgesOutOfPermits(
      absl::Duration at_least) const ABSL_LOCKS_EXCLUDED(mu_);

  // What each edge added (received or not) has carried of the barriers.
  struct EdgeBarrier {
    ActorId upstream = 0;
    ActorId downstream = 0;
    // The last barrier (curr epoch) written to its call, and when; zero and
    // InfinitePast before the first.
    Epoch epoch;
    absl::Time sent_at = absl::InfinitePast();
  };
  // For a coordinator to tell whether a downstream process was sent the
  // barrier it did not emit.
  std::vector<EdgeBarrier> EdgeBarriers() const ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every call receiving an edge (the receivers' channels fail with
  // CANCELLED) and drops the edges no call has taken; either way the
  // upstream actors' sends are Cancelled from then on. For an attempt that
  // failed: its local actors must not wait on a receiver that stopped
  // reading (a worker whose actors hang) to end.
  void CancelOutputs() ABSL_LOCKS_EXCLUDED(mu_);

  // Waits up to `timeout` until no edge is being received (every call
  // ended: the receivers of an attempt that ended let go). Returns whether
  // none is.
  bool WaitUntilNoCall(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every call (the receivers' channels fail with UNAVAILABLE) and
  // stops listening; the edges not yet received are dropped (their
  // channels' senders see Cancelled). Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Service;
  struct Edge {
    std::unique_ptr<ChannelReceiver> receiver;
    std::unique_ptr<MessageCodec> codec;
    uint64_t attempt_key = 0;  // AddOutput's
    bool taken = false;
    // The call receiving it, once taken (guarded by the server's mu_).
    grpc::ServerContext* call = nullptr;
    // When the call last ran out of permits (absl::ToUnixNanos), or 0
    // while it has some.
    std::atomic<int64_t> out_of_permits_since{0};
    // The last barrier written to the call (its curr epoch), and when
    // (absl::ToUnixNanos); 0 before the first.
    std::atomic<uint64_t> barrier_epoch{0};
    std::atomic<int64_t> barrier_sent_at{0};
  };
  // Held by a call: the edge is released when the call ends.
  using EdgePtr = std::shared_ptr<Edge>;

  explicit ExchangeServer(ExchangeServerOptions options);

  // The edge's receiver and codec for a call of attempt `attempt_key`,
  // once, waiting up to `edge_wait` for it to be added for that attempt (an
  // edge of another attempt is waited past: its attempt drops it when it
  // ends). Errors: NotFound for an edge not added in time ("(only another
  // attempt's)" when one of another attempt is there); FailedPrecondition
  // for one already received or after Shutdown.
  absl::StatusOr<EdgePtr> Take(ActorId upstream, ActorId downstream,
                               uint64_t attempt_key, grpc::ServerContext* call)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets an edge whose call ended.
  void Release(ActorId upstream, ActorId downstream) ABSL_LOCKS_EXCLUDED(mu_);
  bool shutting_down() const ABSL_LOCKS_EXCLUDED(mu_);

  const ExchangeServerOptions options_;
  std::string address_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  mutable Mutex mu_;
  CondVar edge_added_;
  CondVar edge_released_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::pair<ActorId, ActorId>, EdgePtr> edges_ ABSL_GUARDED_BY(mu_);
};

struct RemoteInputOptions {
  // The upstream process's ExchangeServer.
  std::string address;
  ActorId upstream = 0;
  ActorId downstream = 0;
  // Messages granted up front (>= 1); one more is granted per message put
  // into the local channel, in batches of half of this.
  uint32_t permits = 16;
  // The attempt of the downstream actor (0: none): only the edge the
  // upstream process added for this attempt is received
  // (ExchangeServer::AddOutput), never an earlier attempt's that process
  // has not dropped yet (that one's messages are not this attempt's).
  uint64_t attempt_key = 0;
  // Pings on the connection (grpc_keepalive.h): an upstream process that
  // vanished without closing it fails the edge (UNAVAILABLE) within
  // interval + timeout.
  Keepalive keepalive = {};
};

// The downstream process's end: receives one edge into a local channel.
class RemoteInput {
 public:
  // Starts receiving into `sender` on a thread of its own, until the
  // upstream ends the edge (sender.Close()), fails it (sender.Fail with its
  // status), or the call breaks (sender.Fail(UNAVAILABLE ...)). A message
  // that does not decode fails the channel with DataLoss and ends the call.
  static std::unique_ptr<RemoteInput> Start(RemoteInputOptions options,
                                            MessageCodec codec,
                                            ChannelSender sender);
  ~RemoteInput();  // Cancel(), then joins its thread.

  RemoteInput(const RemoteInput&) = delete;
  RemoteInput& operator=(const RemoteInput&) = delete;

  // Ends the call; the local channel fails with CANCELLED unless it ended
  // before. Idempotent.
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);

  // How the call ended (OK while running or after a normal end).
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  ActorId upstream() const { return options_.upstream; }
  ActorId downstream() const { return options_.downstream; }
  // Since when a received message has waited for room in the local channel
  // (its reader stopped reading), or InfiniteFuture while none waits.
  absl::Time blocked_since() const;
  // The last barrier (curr epoch) put into the local channel; zero before
  // the first.
  Epoch last_barrier() const { return Epoch(last_barrier_.load()); }

 private:
  RemoteInput(RemoteInputOptions options, MessageCodec codec,
              ChannelSender sender);
  void Run();
  // The edge's end: the local channel is closed (OK) or failed with `end`,
  // unless its receiver is gone, and status() returns `end`.
  void Finish(const absl::Status& end, bool local_gone)
      ABSL_LOCKS_EXCLUDED(mu_);

  const RemoteInputOptions options_;
  const MessageCodec codec_;
  ChannelSender sender_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::thread thread_;
  // absl::ToUnixNanos of blocked_since(), 0 while none waits.
  std::atomic<int64_t> blocked_since_{0};
  std::atomic<uint64_t> last_barrier_{0};
  mutable Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_REMOTE_EXCHANGE_H_
