#include "executor/cluster/remote_exchange.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "executor/cluster/exchange.grpc.pb.h"
#include "executor/poll.h"
#include "grpcpp/grpcpp.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

std::string EdgeName(ActorId upstream, ActorId downstream) {
  return absl::StrCat("exchange edge ", upstream, " -> ", downstream);
}

}  // namespace

class ExchangeServer::Service final
    : public cluster::proto::ExchangeService::Service {
 public:
  explicit Service(ExchangeServer* server) : server_(server) {}

  grpc::Status Receive(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<cluster::proto::StreamMessage,
                                                cluster::proto::ReceiveRequest>*
                           stream) override {
    cluster::proto::ReceiveRequest first;
    if (!stream->Read(&first)) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "the receiver left before naming an edge");
    }
    const std::string edge_name =
        EdgeName(first.upstream_actor(), first.downstream_actor());
    if (first.permits() == 0) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat(edge_name, ": the first request ", "grants no permit"));
    }
    absl::StatusOr<EdgePtr> edge =
        server_->Take(first.upstream_actor(), first.downstream_actor(),
                      first.attempt_key(), context);
    if (!edge.ok()) return ToGrpc(edge.status());
    absl::Cleanup release = [this, &first] {
      server_->Release(first.upstream_actor(), first.downstream_actor());
    };
    ChannelReceiver& receiver = *(*edge)->receiver;
    const MessageCodec& codec = *(*edge)->codec;
    uint64_t permits = first.permits();
    auto waker = std::make_shared<BlockingWaker>();
    Clock& clock = Clock::Real();
    PollContext cx(waker, clock);
    cluster::proto::StreamMessage wire;
    while (true) {
      if (permits == 0) {
        (*edge)->out_of_permits_since.store(absl::ToUnixNanos(absl::Now()));
        cluster::proto::ReceiveRequest more;
        const bool read = stream->Read(&more);
        (*edge)->out_of_permits_since.store(0);
        if (!read) break;  // The receiver is gone.
        permits += more.permits();
        continue;
      }
      waker->Reset();
      cx.ResetWakeDeadline();
      PollResult next = receiver.PollReceive(cx);
      if (next.is_pending()) {
        if (context->IsCancelled() || server_->shutting_down()) break;
        waker->WaitUntil(clock,
                         clock.Now() + server_->options_.cancel_check_interval);
        continue;
      }
      if (next.is_end()) return grpc::Status::OK;
      if (next.is_error()) return ToGrpc(next.status());
      codec.Encode(next.message(), &wire);
      if (!stream->Write(wire)) break;  // The receiver is gone.
      if (const auto* barrier = std::get_if<Barrier>(&next.message())) {
        (*edge)->barrier_epoch.store(barrier->epoch.curr.value());
        (*edge)->barrier_sent_at.store(absl::ToUnixNanos(absl::Now()));
      }
      --permits;
    }
    // The receiver left (or the server is going): what the upstream actor
    // sends from now on is Cancelled, as when a local receiver closes.
    receiver.Close();
    if (server_->shutting_down()) {
      return grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          absl::StrCat(edge_name, ": the exchange server shut down"));
    }
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        absl::StrCat(edge_name, ": the call ended"));
  }

 private:
  ExchangeServer* const server_;
};

absl::StatusOr<std::unique_ptr<ExchangeServer>> ExchangeServer::Start(
    ExchangeServerOptions options) {
  const size_t colon = options.listen_address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ExchangeServerOptions.listen_address must be host:port: '",
        options.listen_address, "'"));
  }
  std::unique_ptr<ExchangeServer> server(new ExchangeServer(options));
  server->service_ = std::make_unique<Service>(server.get());
  grpc::ServerBuilder builder;
  ConfigureKeepalive(builder, options.keepalive);
  int port = 0;
  builder.AddListeningPort(options.listen_address,
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "exchange server cannot listen on '", options.listen_address, "'"));
  }
  server->address_ =
      absl::StrCat(options.listen_address.substr(0, colon), ":", port);
  return server;
}

ExchangeServer::ExchangeServer(ExchangeServerOptions options)
    : options_(std::move(options)) {}

ExchangeServer::~ExchangeServer() { Shutdown(); }

absl::Status ExchangeServer::AddOutput(ActorId upstream, ActorId downstream,
                                       ChannelReceiver receiver,
                                       MessageCodec codec,
                                       uint64_t attempt_key) {
  MutexLock lock(&mu_);
  if (shutdown_) {
    return absl::FailedPreconditionError(absl::StrCat(
        EdgeName(upstream, downstream), ": the exchange server is shut down"));
  }
  auto [it, added] = edges_.try_emplace({upstream, downstream});
  if (!added) {
    return absl::AlreadyExistsError(
        absl::StrCat(EdgeName(upstream, downstream),
                     " was added before and its call has ", "not ended"));
  }
  it->second = std::make_shared<Edge>();
  it->second->receiver = std::make_unique<ChannelReceiver>(std::move(receiver));
  it->second->codec = std::make_unique<MessageCodec>(std::move(codec));
  it->second->attempt_key = attempt_key;
  edge_added_.SignalAll();
  return absl::OkStatus();
}

absl::StatusOr<ExchangeServer::EdgePtr> ExchangeServer::Take(
    ActorId upstream, ActorId downstream, uint64_t attempt_key,
    grpc::ServerContext* call) {
  const absl::Time deadline = absl::Now() + options_.edge_wait;
  MutexLock lock(&mu_);
  while (true) {
    if (shutdown_) {
      return absl::FailedPreconditionError(
          absl::StrCat(EdgeName(upstream, downstream),
                       ": the exchange server is shutting down"));
    }
    auto it = edges_.find({upstream, downstream});
    if (it != edges_.end() && it->second->attempt_key == attempt_key) {
      if (it->second->taken) {
        return absl::FailedPreconditionError(absl::StrCat(
            EdgeName(upstream, downstream), " is received already"));
      }
      it->second->taken = true;
      it->second->call = call;
      return it->second;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::NotFoundError(absl::StrCat(
          EdgeName(upstream, downstream), " was not added to the exchange ",
          "server at ", address_, " within ",
          absl::FormatDuration(options_.edge_wait),
          it != edges_.end() ? " (only another attempt's)" : ""));
    }
    edge_added_.WaitWithTimeout(&mu_, left);
  }
}

void ExchangeServer::Release(ActorId upstream, ActorId downstream) {
  EdgePtr released;  // Destroyed outside the lock.
  MutexLock lock(&mu_);
  auto it = edges_.find({upstream, downstream});
  if (it == edges_.end() || !it->second->taken) return;
  released = std::move(it->second);
  edges_.erase(it);
  edge_released_.SignalAll();
}

std::vector<std::pair<ActorId, ActorId>> ExchangeServer::EdgesOutOfPermits(
    absl::Duration at_least) const {
  const int64_t since = absl::ToUnixNanos(absl::Now() - at_least);
  std::vector<std::pair<ActorId, ActorId>> starved;
  MutexLock lock(&mu_);
  for (const auto& [key, edge] : edges_) {
    const int64_t out = edge->out_of_permits_since.load();
    if (edge->taken && out != 0 && out <= since) starved.push_back(key);
  }
  return starved;
}

std::vector<ExchangeServer::EdgeBarrier> ExchangeServer::EdgeBarriers() const {
  std::vector<EdgeBarrier> barriers;
  MutexLock lock(&mu_);
  for (const auto& [key, edge] : edges_) {
    const int64_t sent_at = edge->barrier_sent_at.load();
    barriers.push_back(
        {key.first, key.second, Epoch(edge->barrier_epoch.load()),
         sent_at == 0 ? absl::InfinitePast() : absl::FromUnixNanos(sent_at)});
  }
  return barriers;
}

bool ExchangeServer::WaitUntilNoCall(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  while (true) {
    bool receiving = false;
    for (const auto& [key, edge] : edges_) receiving |= edge->taken;
    if (!receiving) return true;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    edge_released_.WaitWithTimeout(&mu_, left);
  }
}

void ExchangeServer::CancelOutputs() {
  std::vector<EdgePtr> dropped;  // Destroyed outside the lock.
  MutexLock lock(&mu_);
  for (auto it = edges_.begin(); it != edges_.end();) {
    if (it->second->taken) {
      // Its call's reads and writes fail, and a sender waiting for data
      // sees the cancellation within cancel_check_interval; the call then
      // closes the receiver and releases the edge.
      if (it->second->call != nullptr) it->second->call->TryCancel();
      ++it;
    } else {
      dropped.push_back(std::move(it->second));
      it = edges_.erase(it);
    }
  }
}

void ExchangeServer::ClearUntaken() {
  std::vector<EdgePtr> dropped;  // Destroyed outside the lock.
  MutexLock lock(&mu_);
  for (auto it = edges_.begin(); it != edges_.end();) {
    if (it->second->taken) {
      ++it;
    } else {
      dropped.push_back(std::move(it->second));
      it = edges_.erase(it);
    }
  }
}

bool ExchangeServer::shutting_down() const {
  MutexLock lock(&mu_);
  return shutdown_;
}

void ExchangeServer::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
    edge_added_.SignalAll();
  }
  // Cancels every call and waits for the handlers, which notice within
  // cancel_check_interval.
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  std::map<std::pair<ActorId, ActorId>, EdgePtr> edges;
  {
    MutexLock lock(&mu_);
    edges.swap(edges_);
  }
  // Destroying the receivers makes the upstream actors' sends Cancelled.
}

std::unique_ptr<RemoteInput> RemoteInput::Start(RemoteInputOptions options,
                                                MessageCodec codec,
                                                ChannelSender sender) {
  std::unique_ptr<RemoteInput> input(
      new RemoteInput(std::move(options), std::move(codec), std::move(sender)));
  input->thread_ = std::thread([raw = input.get()] { raw->Run(); });
  return input;
}

RemoteInput::RemoteInput(RemoteInputOptions options, MessageCodec codec,
                         ChannelSender sender)
    : options_(std::move(options)),
      codec_(std::move(codec)),
      sender_(std::move(sender)),
      context_(std::make_unique<grpc::ClientContext>()) {}

RemoteInput::~RemoteInput() {
  Cancel();
  if (thread_.joinable()) thread_.join();
}

void RemoteInput::Cancel() {
  MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  context_->TryCancel();
}

absl::Status RemoteInput::status() const {
  MutexLock lock(&mu_);
  return status_;
}

absl::Time RemoteInput::blocked_since() const {
  const int64_t since = blocked_since_.load();
  return since == 0 ? absl::InfiniteFuture() : absl::FromUnixNanos(since);
}

void RemoteInput::Run() {
  const std::string edge =
      absl::StrCat(EdgeName(options_.upstream, options_.downstream), " from ",
                   options_.address);
  std::shared_ptr<grpc::Channel> channel =
      CreateKeepaliveChannel(options_.address, options_.keepalive);
  const absl::Status connected = WaitUntilConnected(
      *channel, kConnectTimeout,
      [this] {
        MutexLock lock(&mu_);
        return cancelled_;
      },
      edge);
  if (!connected.ok()) return Finish(connected, /*local_gone=*/false);
  std::unique_ptr<cluster::proto::ExchangeService::Stub> stub =
      cluster::proto::ExchangeService::NewStub(channel);
  std::unique_ptr<grpc::ClientReaderWriter<cluster::proto::ReceiveRequest,
                                           cluster::proto::StreamMessage>>
      stream = stub->Receive(context_.get());
  const uint32_t permits = std::max<uint32_t>(options_.permits, 1);
  const uint32_t batch = std::max<uint32_t>(permits / 2, 1);
  cluster::proto::ReceiveRequest first;
  first.set_upstream_actor(options_.upstream);
  first.set_downstream_actor(options_.downstream);
  first.set_permits(permits);
  first.set_attempt_key(options_.attempt_key);
  // A failed write shows as the end of the reads below.
  stream->Write(first);

  absl::Status failure;  // Ours: a message that does not decode.
  bool local_gone = false;
  uint32_t consumed = 0;
  auto waker = std::make_shared<BlockingWaker>();
  Clock& clock = Clock::Real();
  PollContext cx(waker, clock);
  cluster::proto::StreamMessage wire;
  while (failure.ok() && !local_gone && stream->Read(&wire)) {
    absl::StatusOr<Message> message = codec_.Decode(wire);
    if (!message.ok()) {
      failure = absl::DataLossError(
          absl::StrCat(edge, ": ", message.status().message()));
      break;
    }
    // Blocks while the local channel is full (the back-pressure), waking
    // now and then to notice a Cancel.
    absl::Cleanup unblocked = [this] { blocked_since_.store(0); };
    const Barrier* barrier = std::get_if<Barrier>(&*message);
    const uint64_t barrier_epoch =
        barrier != nullptr ? barrier->epoch.curr.value() : 0;
    while (true) {
      waker->Reset();
      const SendResult sent = sender_.PollSend(*message, cx);
      if (sent == SendResult::kSent) {
        if (barrier_epoch != 0) last_barrier_.store(barrier_epoch);
        break;
      }
      if (sent == SendResult::kClosed) {
        local_gone = true;
        break;
      }
      if (blocked_since_.load() == 0) {
        blocked_since_.store(absl::ToUnixNanos(absl::Now()));
      }
      {
        MutexLock lock(&mu_);
        if (cancelled_) break;
      }
      waker->WaitUntil(clock, clock.Now() + absl::Milliseconds(50));
    }
    {
      MutexLock lock(&mu_);
      if (cancelled_) break;
    }
    if (local_gone) break;
    if (++consumed >= batch) {
      cluster::proto::ReceiveRequest more;
      more.set_permits(consumed);
      consumed = 0;
      stream->Write(more);
    }
  }
  if (!failure.ok() || local_gone) context_->TryCancel();
  while (stream->Read(&wire)) {
  }
  const grpc::Status finished = stream->Finish();
  bool cancelled;
  {
    MutexLock lock(&mu_);
    cancelled = cancelled_;
  }
  absl::Status end;
  if (!failure.ok()) {
    end = failure;
  } else if (local_gone) {
    end = absl::CancelledError(
        absl::StrCat(edge, ": the downstream channel closed"));
  } else if (cancelled) {
    end = absl::CancelledError(absl::StrCat(edge, ": cancelled"));
  } else if (!finished.ok()) {
    end = absl::Status(static_cast<absl::StatusCode>(finished.error_code()),
                       absl::StrCat(edge, ": ", finished.error_message()));
  }
  Finish(end, local_gone);
}

void RemoteInput::Finish(const absl::Status& end, bool local_gone) {
  if (!local_gone) {
    if (end.ok()) {
      sender_.Close();
    } else {
      sender_.Fail(end);
    }
  }
  MutexLock lock(&mu_);
  status_ = end;
}

}  // namespace backfill
