#include "executor/cluster/blackhole_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

constexpr int kPollMillis = 20;

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

BlackholeProxy::BlackholeProxy(const std::string& target) {
  const size_t colon = target.rfind(':');
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(target.substr(colon + 1), &target_port_)) {
    status_ = absl::InvalidArgumentError(absl::StrCat(
        "BlackholeProxy: target must be host:port: '", target, "'"));
    return;
  }
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  if (listener_ < 0 ||
      bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener_, 16) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) !=
          0) {
    status_ = absl::UnavailableError(
        absl::StrCat("BlackholeProxy: cannot listen: ", std::strerror(errno)));
    return;
  }
  address_ = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  acceptor_ = std::thread([this] { Accept(); });
}

BlackholeProxy::~BlackholeProxy() { Close(); }

void BlackholeProxy::Close() {
  if (closing_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> pumps;
  {
    MutexLock lock(&mu_);
    pumps.swap(pumps_);
  }
  for (std::thread& pump : pumps) pump.join();
  MutexLock lock(&mu_);
  for (int socket : sockets_) close(socket);
  sockets_.clear();
  if (listener_ >= 0) close(listener_);
  listener_ = -1;
}

void BlackholeProxy::Accept() {
  while (!closing_.load()) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, kPollMillis) <= 0 || blackholed_.load()) continue;
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = Loopback(target_port_);
    if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&address),
                              sizeof(address)) != 0) {
      close(client);
      if (server >= 0) close(server);
      continue;
    }
    MutexLock lock(&mu_);
    sockets_.push_back(client);
    sockets_.push_back(server);
    pumps_.emplace_back([this, client, server] { Pump(client, server); });
    pumps_.emplace_back([this, client, server] { Pump(server, client); });
  }
}

// Copies `from` to `to` until either end closes; the sockets stay open
// (Close closes them). A black hole reads nothing more: the bytes wait in
// the kernel's buffers, never delivered.
void BlackholeProxy::Pump(int from, int to) {
  char buffer[16384];
  while (!closing_.load()) {
    pollfd ready{from, POLLIN, 0};
    if (poll(&ready, 1, kPollMillis) <= 0 || blackholed_.load()) continue;
    const ssize_t n = read(from, buffer, sizeof(buffer));
    if (n <= 0) {
      shutdown(to, SHUT_WR);
      return;
    }
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t written = send(to, buffer + sent, n - sent, MSG_NOSIGNAL);
      if (written <= 0) return;
      sent += written;
    }
  }
}

}  // namespace backfill
