#include "storage/shared/testing/child_processes.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "gtest/gtest.h"

extern char** environ;

namespace backfill {

ChildProcesses::~ChildProcesses() {
  for (pid_t pid : running_) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

pid_t ChildProcesses::Spawn(std::vector<std::string> argv) {
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, pointers[0], nullptr, nullptr,
                                  pointers.data(), environ);
  EXPECT_EQ(spawned, 0) << "cannot start " << argv[0];
  if (spawned != 0) return 0;
  running_.insert(pid);
  return pid;
}

int ChildProcesses::Wait(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid) << "pid " << pid;
  running_.erase(pid);
  return status;
}

}  // namespace backfill
