// EtcdTestCluster: a real etcd cluster of separate `etcd` processes on free
// 127.0.0.1 ports, with its data under TEST_TMPDIR (or a given directory),
// for tests of code that talks to etcd, and for the local cluster of a
// command run without an etcd of its own (shared_store_backend.h).
//
//   BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdTestCluster> cluster,
//                                 EtcdTestCluster::Start({}));
//   EtcdClientOptions options;
//   options.endpoints = cluster->Endpoints();
//   ...
//   BACKFILL_ASSERT_OK_AND_ASSIGN(int leader, cluster->LeaderIndex());
//   BACKFILL_ASSERT_OK(cluster->KillMember(leader));   // SIGKILL
//   BACKFILL_ASSERT_OK(cluster->RestartMember(leader));
//
// Every member is stopped (SIGKILL, then reaped) by the destructor, and also
// when the test process dies without running it (a crash, an abort, Bazel's
// timeout): each member is started with PR_SET_PDEATHSIG = SIGKILL, tied to
// the thread that started it, so start, restart and destroy a cluster from
// the same thread (the test's main thread). Member logs are
// <data_dir>/member<i>.log; errors quote their last lines.
//
// Not thread-safe: use one cluster from one thread.
#ifndef STORAGE_SHARED_ETCD_TEST_CLUSTER_H_
#define STORAGE_SHARED_ETCD_TEST_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace backfill {

struct EtcdTestClusterOptions {
  // Members. Default 3; >= 1.
  int num_members = 3;
  // Where the members keep their data and logs; created if missing. Default
  // "": a fresh directory under $TEST_TMPDIR (or /tmp outside Bazel).
  std::string data_dir;
  // The etcd server binary. Default Debian's /usr/bin/etcd (etcd-server).
  std::string etcd_binary = "/usr/bin/etcd";
  // etcd's --heartbeat-interval and --election-timeout, in ms (etcd's
  // defaults). A killed leader is replaced after about one election timeout.
  int heartbeat_interval_ms = 100;
  int election_timeout_ms = 1000;
  // How long Start and RestartMember wait for the members to answer. Default
  // 60 s (a loaded CI machine); > 0.
  absl::Duration start_timeout = absl::Seconds(60);
};

class EtcdTestCluster {
 public:
  // Picks free ports, starts the members and waits until every member serves
  // a linearizable read (so a leader is elected). Retries with new ports if a
  // member exits at once (a port taken in between). On error, nothing is left
  // running.
  static absl::StatusOr<std::unique_ptr<EtcdTestCluster>> Start(
      EtcdTestClusterOptions options);

  // Stops every member (SIGKILL) and waits for them to exit.
  ~EtcdTestCluster();
  EtcdTestCluster(const EtcdTestCluster&) = delete;
  EtcdTestCluster& operator=(const EtcdTestCluster&) = delete;

  int num_members() const { return static_cast<int>(members_.size()); }

  // "127.0.0.1:<client port>" of every member (running or not), in member
  // order / of one member. REQUIRES: 0 <= member < num_members().
  std::vector<std::string> Endpoints() const;
  std::string Endpoint(int member) const;

  bool IsRunning(int member) const;

  // The member's process id; -1 if it is not running.
  pid_t pid(int member) const { return members_[member].pid; }

  // The running member the running members agree is the raft leader, once
  // there is one (waits up to `timeout`).
  absl::StatusOr<int> LeaderIndex(absl::Duration timeout = absl::Seconds(30));

  // SIGKILLs one member and reaps it. FailedPrecondition if it is not running.
  absl::Status KillMember(int member);

  // Starts a killed member again with its data and ports, and waits until it
  // serves a linearizable read (it has caught up with the leader's commits).
  absl::Status RestartMember(int member);

  // Waits until every running member serves a linearizable read.
  absl::Status WaitHealthy(absl::Duration timeout);

  const std::string& data_dir() const { return options_.data_dir; }

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;  // -1: not running
  };

  explicit EtcdTestCluster(EtcdTestClusterOptions options);

  absl::Status Launch(int member);
  // OK once `member` answers a linearizable read; an error if it exited.
  absl::Status ProbeMember(int member, absl::Duration timeout);
  // Reaps `member` if it exited; returns whether it is still running.
  bool CheckAlive(int member);
  std::string LogTail(int member) const;
  std::string LogPath(int member) const;
  void StopAll();

  EtcdTestClusterOptions options_;
  std::vector<Member> members_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_ETCD_TEST_CLUSTER_H_
