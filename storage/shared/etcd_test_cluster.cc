#include "storage/shared/etcd_test_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/etcd/etcdserverpb/rpc.grpc.pb.h"

namespace backfill {
namespace {

constexpr int kStartAttempts = 3;
constexpr int kLogTailLines = 15;
// Between two probes of a member that is not ready yet.
constexpr absl::Duration kPollInterval = absl::Milliseconds(50);

// `count` distinct free TCP ports on 127.0.0.1: all bound at once (so they
// differ), then released for etcd to bind. Another process may take one in
// between; Start() then retries with new ports.
absl::StatusOr<std::vector<int>> PickFreePorts(int count) {
  std::vector<int> sockets;
  std::vector<int> ports;
  absl::Status status;
  for (int i = 0; i < count && status.ok(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status =
          absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
      break;
    }
    sockets.push_back(fd);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      status = absl::InternalError(absl::StrCat(
          "binding a free port on 127.0.0.1: ", std::strerror(errno)));
      break;
    }
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : sockets) close(fd);
  if (!status.ok()) return status;
  return ports;
}

std::string DefaultDataDir() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/etcd-", getpid(), "-",
                      counter.fetch_add(1));
}

std::chrono::system_clock::time_point GrpcDeadline(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout);
}

std::shared_ptr<grpc::Channel> MemberChannel(int client_port) {
  // A fresh channel per probe: no reconnect back-off carried over from the
  // time the member was down.
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", client_port),
                             grpc::InsecureChannelCredentials());
}

}  // namespace

EtcdTestCluster::EtcdTestCluster(EtcdTestClusterOptions options)
    : options_(std::move(options)) {}

EtcdTestCluster::~EtcdTestCluster() { StopAll(); }

void EtcdTestCluster::StopAll() {
  for (int i = 0; i < num_members(); ++i) {
    if (members_[i].pid > 0) {
      kill(members_[i].pid, SIGKILL);
      waitpid(members_[i].pid, nullptr, 0);
      members_[i].pid = -1;
    }
  }
}

absl::StatusOr<std::unique_ptr<EtcdTestCluster>> EtcdTestCluster::Start(
    EtcdTestClusterOptions options) {
  if (options.num_members < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdTestClusterOptions.num_members must be >= 1, got ",
                     options.num_members));
  }
  if (options.start_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "EtcdTestClusterOptions.start_timeout must be > 0");
  }
  if (access(options.etcd_binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "etcd server binary ", options.etcd_binary,
        " is not executable (install etcd-server: tools/setup.sh)"));
  }
  if (options.data_dir.empty()) options.data_dir = DefaultDataDir();
  absl::Status last_error;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    EtcdTestClusterOptions attempt_options = options;
    // A fresh directory per attempt: a half-started cluster's data would
    // make the members of the next attempt think they are restarting.
    attempt_options.data_dir =
        absl::StrCat(options.data_dir, "/attempt", attempt);
    std::error_code error;
    std::filesystem::create_directories(attempt_options.data_dir, error);
    if (error) {
      return absl::InternalError(absl::StrCat(
          "creating ", attempt_options.data_dir, ": ", error.message()));
    }
    std::unique_ptr<EtcdTestCluster> cluster(
        new EtcdTestCluster(attempt_options));
    BACKFILL_ASSIGN_OR_RETURN(std::vector<int> ports,
                              PickFreePorts(2 * options.num_members));
    for (int i = 0; i < options.num_members; ++i) {
      Member member;
      member.name = absl::StrCat("member", i);
      member.client_port = ports[2 * i];
      member.peer_port = ports[2 * i + 1];
      cluster->members_.push_back(member);
    }
    absl::Status status;
    for (int i = 0; i < options.num_members && status.ok(); ++i) {
      status = cluster->Launch(i);
    }
    if (status.ok()) status = cluster->WaitHealthy(options.start_timeout);
    if (status.ok()) return cluster;
    last_error = status;
    // Only a member that exited (most likely: a port taken in between) is
    // worth new ports; a cluster that is just slow would be slow again.
    if (status.code() != absl::StatusCode::kUnavailable) return status;
    // The destructor stops whatever did start before the next attempt.
  }
  return absl::Status(
      last_error.code(),
      absl::StrCat("starting a ", options.num_members,
                   "-member etcd cluster failed ", kStartAttempts,
                   " times; last: ", last_error.message()));
}

std::string EtcdTestCluster::LogPath(int member) const {
  return absl::StrCat(options_.data_dir, "/", members_[member].name, ".log");
}

std::string EtcdTestCluster::LogTail(int member) const {
  std::ifstream file(LogPath(member));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(file, line)) {
    lines.push_back(line);
    if (lines.size() > kLogTailLines) lines.erase(lines.begin());
  }
  return absl::StrCat("last lines of ", LogPath(member), ":\n",
                      absl::StrJoin(lines, "\n"));
}

absl::Status EtcdTestCluster::Launch(int member_index) {
  Member& member = members_[member_index];
  std::vector<std::string> initial_cluster;
  for (const Member& peer : members_) {
    initial_cluster.push_back(
        absl::StrCat(peer.name, "=http://127.0.0.1:", peer.peer_port));
  }
  const std::string client_url =
      absl::StrCat("http://127.0.0.1:", member.client_port);
  const std::string peer_url =
      absl::StrCat("http://127.0.0.1:", member.peer_port);
  // On a restart etcd finds its data directory and ignores the --initial-*
  // flags, so the same command line serves both.
  std::vector<std::string> arguments = {
      options_.etcd_binary,
      "--name",
      member.name,
      "--data-dir",
      absl::StrCat(options_.data_dir, "/", member.name),
      "--listen-client-urls",
      client_url,
      "--advertise-client-urls",
      client_url,
      "--listen-peer-urls",
      peer_url,
      "--initial-advertise-peer-urls",
      peer_url,
      "--initial-cluster",
      absl::StrJoin(initial_cluster, ","),
      "--initial-cluster-state",
      "new",
      "--initial-cluster-token",
      options_.data_dir,
      "--heartbeat-interval",
      absl::StrCat(options_.heartbeat_interval_ms),
      "--election-timeout",
      absl::StrCat(options_.election_timeout_ms),
      "--logger",
      "zap",
      "--log-outputs",
      "stderr",
  };
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const std::string log_path = LogPath(member_index);
  const int log_fd =
      open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(
        absl::StrCat("opening ", log_path, ": ", std::strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the test died before prctl
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  member.pid = pid;
  return absl::OkStatus();
}

bool EtcdTestCluster::CheckAlive(int member) {
  Member& m = members_[member];
  if (m.pid <= 0) return false;
  int wait_status = 0;
  if (waitpid(m.pid, &wait_status, WNOHANG) == m.pid) {
    m.pid = -1;
    return false;
  }
  return true;
}

bool EtcdTestCluster::IsRunning(int member) const {
  return members_[member].pid > 0;
}

absl::Status EtcdTestCluster::ProbeMember(int member, absl::Duration timeout) {
  const absl::Time deadline = Clock::Real().Now() + timeout;
  std::string last_error = "no answer yet";
  while (true) {
    if (!CheckAlive(member)) {
      return absl::UnavailableError(absl::StrCat("etcd ", members_[member].name,
                                                 " exited; ", LogTail(member)));
    }
    auto kv =
        etcdserverpb::KV::NewStub(MemberChannel(members_[member].client_port));
    etcdserverpb::RangeRequest request;
    request.set_key("etcd_test_cluster/health");
    etcdserverpb::RangeResponse response;
    grpc::ClientContext context;
    context.set_deadline(GrpcDeadline(absl::Seconds(2)));
    // wait_for_ready: while the member is still starting, wait for it to
    // listen rather than failing at once.
    context.set_wait_for_ready(true);
    const grpc::Status status = kv->Range(&context, request, &response);
    if (status.ok()) return absl::OkStatus();
    last_error = status.error_message();
    if (Clock::Real().Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("etcd ", members_[member].name, " (", Endpoint(member),
                       ") served no linearizable read within ",
                       absl::FormatDuration(timeout),
                       "; last error: ", last_error, "; ", LogTail(member)));
    }
    Clock::Real().SleepUntil(Clock::Real().Now() + kPollInterval);
  }
}

absl::Status EtcdTestCluster::WaitHealthy(absl::Duration timeout) {
  const absl::Time deadline = Clock::Real().Now() + timeout;
  for (int i = 0; i < num_members(); ++i) {
    if (!IsRunning(i)) continue;
    BACKFILL_RETURN_IF_ERROR(ProbeMember(
        i, std::max(deadline - Clock::Real().Now(), absl::Milliseconds(1))));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> EtcdTestCluster::LeaderIndex(absl::Duration timeout) {
  const absl::Time deadline = Clock::Real().Now() + timeout;
  while (true) {
    // Member id -> index, and each running member's view of the leader.
    std::map<uint64_t, int> index_of;
    std::map<uint64_t, int> votes;
    int answered = 0;
    for (int i = 0; i < num_members(); ++i) {
      if (!CheckAlive(i)) continue;
      auto maintenance = etcdserverpb::Maintenance::NewStub(
          MemberChannel(members_[i].client_port));
      grpc::ClientContext context;
      context.set_deadline(GrpcDeadline(absl::Seconds(1)));
      etcdserverpb::StatusResponse response;
      if (!maintenance
               ->Status(&context, etcdserverpb::StatusRequest(), &response)
               .ok()) {
        continue;
      }
      ++answered;
      index_of[response.header().member_id()] = i;
      if (response.leader() != 0) ++votes[response.leader()];
    }
    for (const auto& [leader, count] : votes) {
      // A leader all answering members agree on, which is itself running.
      if (count == answered && index_of.contains(leader))
        return index_of[leader];
    }
    if (Clock::Real().Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no etcd leader agreed on by the running members within ",
          absl::FormatDuration(timeout), " (", answered, " answered)"));
    }
    Clock::Real().SleepUntil(Clock::Real().Now() + kPollInterval);
  }
}

absl::Status EtcdTestCluster::KillMember(int member) {
  if (!CheckAlive(member)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "KillMember: etcd ", members_[member].name, " is not running"));
  }
  kill(members_[member].pid, SIGKILL);
  waitpid(members_[member].pid, nullptr, 0);
  members_[member].pid = -1;
  return absl::OkStatus();
}

absl::Status EtcdTestCluster::RestartMember(int member) {
  if (CheckAlive(member)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "RestartMember: etcd ", members_[member].name, " is running"));
  }
  BACKFILL_RETURN_IF_ERROR(Launch(member));
  return ProbeMember(member, options_.start_timeout);
}

std::vector<std::string> EtcdTestCluster::Endpoints() const {
  std::vector<std::string> endpoints;
  for (int i = 0; i < num_members(); ++i) endpoints.push_back(Endpoint(i));
  return endpoints;
}

std::string EtcdTestCluster::Endpoint(int member) const {
  return absl::StrCat("127.0.0.1:", members_[member].client_port);
}

}  // namespace backfill
