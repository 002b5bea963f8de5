// WaitUntilConnected (grpc_keepalive.h): a connection attempt that fails is
// tried again until the deadline, so a call made after it does not fail on
// a peer that was not reachable for a moment (the gRPC of Debian 12 fails
// some attempts that would succeed); a peer that stays away is an
// Unavailable error naming the call, and a cancellation ends the wait.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "executor/cluster/exchange.grpc.pb.h"
#include "executor/cluster/grpc_keepalive.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

// A port on 127.0.0.1 that nothing listens on yet, kept from other
// processes: a socket bound with SO_REUSEPORT and not listening (a connect
// to it is refused), which a gRPC server (SO_REUSEPORT too) can still bind.
class ReservedPort {
 public:
  ReservedPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) ==
            0) {
      address_ = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
    }
  }
  ~ReservedPort() { close(fd_); }
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

// Answers nothing (every method UNIMPLEMENTED): a connection is all the
// tests need.
class Silent final : public cluster::proto::ExchangeService::Service {};

std::unique_ptr<grpc::Server> Listen(const std::string& address,
                                     Silent& service) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  EXPECT_NE(port, 0) << "cannot listen on " << address;
  return server;
}

// A call on the channel: its status code.
grpc::StatusCode Call(grpc::Channel& channel) {
  auto stub = cluster::proto::ExchangeService::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  auto stream = stub->Receive(&context);
  stream->WritesDone();
  cluster::proto::StreamMessage message;
  while (stream->Read(&message)) {
  }
  return stream->Finish().error_code();
}

TEST(WaitUntilConnectedTest, APeerThatStartsListeningLateIsReached) {
  ReservedPort port;
  ASSERT_FALSE(port.address().empty());
  std::shared_ptr<grpc::Channel> channel =
      CreateKeepaliveChannel(port.address(), Keepalive{});
  // What the wait is for: a call made now fails at once.
  EXPECT_EQ(Call(*channel), grpc::StatusCode::UNAVAILABLE);

  Silent service;
  std::unique_ptr<grpc::Server> server;
  std::thread late([&] {
    absl::SleepFor(absl::Milliseconds(300));
    server = Listen(port.address(), service);
  });
  const absl::Time start = absl::Now();
  const absl::Status connected = WaitUntilConnected(
      *channel, absl::Seconds(20), nullptr, "the test's call");
  late.join();
  EXPECT_THAT(connected, IsOk());
  // Retried after at most 1 s of backoff, not gRPC's default 120 s.
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // The server answers (UNIMPLEMENTED): the call reached it.
  EXPECT_EQ(Call(*channel), grpc::StatusCode::UNIMPLEMENTED);
  server->Shutdown();
}

TEST(WaitUntilConnectedTest, APeerThatNeverListensIsUnavailableAfterTheTimeout) {
  ReservedPort port;
  ASSERT_FALSE(port.address().empty());
  std::shared_ptr<grpc::Channel> channel =
      CreateKeepaliveChannel(port.address(), Keepalive{});
  const absl::Time start = absl::Now();
  EXPECT_THAT(
      WaitUntilConnected(*channel, absl::Milliseconds(500), nullptr,
                         "worker 1 at here"),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr("worker 1 at here: not connected within 500ms")));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
}

TEST(WaitUntilConnectedTest, ACancellationEndsTheWait) {
  ReservedPort port;
  ASSERT_FALSE(port.address().empty());
  std::shared_ptr<grpc::Channel> channel =
      CreateKeepaliveChannel(port.address(), Keepalive{});
  std::atomic<bool> cancelled{false};
  std::thread cancel([&] {
    absl::SleepFor(absl::Milliseconds(200));
    cancelled.store(true);
  });
  const absl::Time start = absl::Now();
  EXPECT_THAT(WaitUntilConnected(
                  *channel, absl::Seconds(60),
                  [&] { return cancelled.load(); }, "edge 1 -> 2"),
              StatusIs(absl::StatusCode::kCancelled,
                       HasSubstr("edge 1 -> 2: cancelled while connecting")));
  cancel.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

TEST(WaitUntilConnectedTest, AConnectedChannelReturnsAtOnce) {
  Silent service;
  ReservedPort port;
  ASSERT_FALSE(port.address().empty());
  std::unique_ptr<grpc::Server> server = Listen(port.address(), service);
  std::shared_ptr<grpc::Channel> channel =
      CreateKeepaliveChannel(port.address(), Keepalive{});
  EXPECT_THAT(WaitUntilConnected(*channel, absl::Seconds(20), nullptr, "x"),
              IsOk());
  EXPECT_EQ(channel->GetState(false), GRPC_CHANNEL_READY);
  server->Shutdown();
}

}  // namespace
}  // namespace backfill
