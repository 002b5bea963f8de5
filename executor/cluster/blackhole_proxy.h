// BlackholeProxy (tests only): a TCP proxy on 127.0.0.1 in front of one
// address that can turn into a black hole: from Blackhole() on it forwards
// nothing more in either direction but keeps every connection open, as a
// peer behaves whose machine lost power or whose network is partitioned
// (no FIN, no RST; the bytes just stop). Close() then closes every
// connection, as the kernel does for a process that died.
//
//   BlackholeProxy proxy("127.0.0.1:1234");
//   // connect the client to proxy.address()
//   proxy.Blackhole();
//
// Thread-safety: thread-safe.
#ifndef EXECUTOR_CLUSTER_BLACKHOLE_PROXY_H_
#define EXECUTOR_CLUSTER_BLACKHOLE_PROXY_H_

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class BlackholeProxy {
 public:
  // Listens on 127.0.0.1, a free port, and forwards each connection to
  // `target` (host:port, IPv4). status() says whether it could listen.
  explicit BlackholeProxy(const std::string& target);
  ~BlackholeProxy();  // Close()

  BlackholeProxy(const BlackholeProxy&) = delete;
  BlackholeProxy& operator=(const BlackholeProxy&) = delete;

  absl::Status status() const { return status_; }
  // 127.0.0.1:port.
  const std::string& address() const { return address_; }
  // Forwards nothing more and accepts no more connections; keeps them open.
  void Blackhole() { blackholed_.store(true); }
  // Closes every connection and the listener. Idempotent.
  void Close();

 private:
  void Accept();
  void Pump(int from, int to);

  absl::Status status_;
  std::string address_;
  int listener_ = -1;
  int target_port_ = 0;
  std::atomic<bool> blackholed_{false};
  std::atomic<bool> closing_{false};
  std::thread acceptor_;
  Mutex mu_;
  std::vector<int> sockets_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_BLACKHOLE_PROXY_H_
