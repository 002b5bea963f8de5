// EtcdTestCluster itself: members on distinct ports under the data dir, a
// leader, kill and restart, and no etcd process outliving a test process
// that dies without running the destructor.
#include "storage/shared/etcd_test_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

// Whether `pid` is a live process (not gone, not a zombie).
bool IsAlive(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return false;
  // "pid (comm) state ...": the state follows the last ')'.
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() &&
         line[paren + 2] != 'Z';
}

TEST(EtcdTestClusterTest, StartsKillsAndRestartsMembers) {
  EtcdTestClusterOptions options;
  options.data_dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/cluster");
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdTestCluster> cluster,
                                EtcdTestCluster::Start(options));
  ASSERT_EQ(cluster->num_members(), 3);
  const std::vector<std::string> endpoints = cluster->Endpoints();
  EXPECT_EQ(std::set<std::string>(endpoints.begin(), endpoints.end()).size(),
            3u);
  for (int member = 0; member < 3; ++member) {
    EXPECT_TRUE(cluster->IsRunning(member));
    EXPECT_THAT(cluster->Endpoint(member), ::testing::StartsWith("127.0.0.1:"));
  }
  EXPECT_TRUE(std::filesystem::exists(
      absl::StrCat(cluster->data_dir(), "/member0.log")));
  EXPECT_THAT(cluster->data_dir(), ::testing::StartsWith(options.data_dir));

  BACKFILL_ASSERT_OK_AND_ASSIGN(int leader, cluster->LeaderIndex());
  const int follower = (leader + 1) % 3;
  const pid_t follower_pid = cluster->pid(follower);
  BACKFILL_ASSERT_OK(cluster->KillMember(follower));
  EXPECT_FALSE(cluster->IsRunning(follower));
  EXPECT_FALSE(IsAlive(follower_pid));
  EXPECT_THAT(cluster->KillMember(follower),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // Two of three still elect and serve.
  BACKFILL_ASSERT_OK(cluster->WaitHealthy(absl::Seconds(30)));
  BACKFILL_ASSERT_OK(cluster->RestartMember(follower));
  EXPECT_TRUE(cluster->IsRunning(follower));
  EXPECT_THAT(cluster->RestartMember(follower),
              StatusIs(absl::StatusCode::kFailedPrecondition));

  // Killing the leader: the other two elect a new one.
  BACKFILL_ASSERT_OK(cluster->KillMember(leader));
  BACKFILL_ASSERT_OK_AND_ASSIGN(int new_leader, cluster->LeaderIndex());
  EXPECT_NE(new_leader, leader);
  BACKFILL_ASSERT_OK(cluster->RestartMember(leader));

  std::vector<pid_t> pids;
  for (int member = 0; member < 3; ++member)
    pids.push_back(cluster->pid(member));
  cluster.reset();
  for (pid_t pid : pids)
    EXPECT_FALSE(IsAlive(pid)) << "etcd " << pid << " outlived";
}

// Set in the environment of the child process MembersDieWithTheTestProcess
// starts: the write end of its pipe. See main().
constexpr char kChildPipeVariable[] = "ETCD_TEST_CLUSTER_CHILD_PIPE";

// The child: starts a cluster, writes its members' pids to `fd`, and exits
// without running any destructor (as after a crash or Bazel's timeout).
[[noreturn]] void RunChild(int fd) {
  auto cluster = EtcdTestCluster::Start({});
  std::string pids;
  if (cluster.ok()) {
    for (int member = 0; member < (*cluster)->num_members(); ++member) {
      absl::StrAppend(&pids, (*cluster)->pid(member), " ");
    }
  } else {
    std::fprintf(stderr, "child: %s\n", cluster.status().ToString().c_str());
  }
  (void)!write(fd, pids.data(), pids.size());
  _exit(cluster.ok() ? 0 : 1);
}

// A test process that exits without destroying its cluster still leaves no
// etcd behind: the members die with it (PR_SET_PDEATHSIG). The child is this
// binary exec'd afresh (a fork alone would inherit gRPC's threads' state).
TEST(EtcdTestClusterTest, MembersDieWithTheTestProcess) {
  int pipe_fds[2];
  // CLOEXEC on the read end; the write end is handed to the child only (its
  // etcd members must not hold it open, or the read below never ends).
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  const std::string variable =
      absl::StrCat(kChildPipeVariable, "=", pipe_fds[1]);
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string tmp_variable =
      absl::StrCat("TEST_TMPDIR=", tmp != nullptr ? tmp : "/tmp");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Clear CLOEXEC on the write end for the exec; Launch() marks its own
    // descriptors, and the child re-sets CLOEXEC before starting etcd.
    fcntl(pipe_fds[1], F_SETFD, 0);
    char* const argv[] = {const_cast<char*>("/proc/self/exe"), nullptr};
    char* const envp[] = {const_cast<char*>(variable.c_str()),
                          const_cast<char*>(tmp_variable.c_str()), nullptr};
    execve("/proc/self/exe", argv, envp);
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string pids;
  char buffer[256];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0)
    pids.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child's cluster failed";
  std::vector<pid_t> members;
  for (absl::string_view field : absl::StrSplit(pids, ' ', absl::SkipEmpty())) {
    int pid = 0;
    ASSERT_TRUE(absl::SimpleAtoi(field, &pid)) << field;
    members.push_back(pid);
  }
  ASSERT_EQ(members.size(), 3u);
  // SIGKILL is delivered at the child's exit; the kernel needs a moment.
  Clock& clock = Clock::Real();
  const absl::Time deadline = clock.Now() + absl::Seconds(10);
  for (pid_t pid : members) {
    while (IsAlive(pid) && clock.Now() < deadline) {
      clock.SleepUntil(clock.Now() + absl::Milliseconds(20));
    }
    EXPECT_FALSE(IsAlive(pid))
        << "etcd " << pid << " outlived its test process";
    if (IsAlive(pid)) kill(pid, SIGKILL);  // do not leave it behind either way
  }
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) {
  if (const char* fd = std::getenv(backfill::kChildPipeVariable);
      fd != nullptr) {
    int pipe_fd = -1;
    if (!absl::SimpleAtoi(fd, &pipe_fd)) return 2;
    fcntl(pipe_fd, F_SETFD, FD_CLOEXEC);  // not for the etcd members
    backfill::RunChild(pipe_fd);
  }
  ::testing::InitGoogleMock(&argc, argv);
  return RUN_ALL_TESTS();
}
