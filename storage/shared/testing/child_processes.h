// Child processes of a multi-process test: spawned from argv (the binary a
// data dependency of the test, its path relative to the runfiles directory
// the test runs in), waited for, and never left behind: whatever is still
// running when the set is destroyed (a test that failed half-way) is
// SIGKILLed and reaped.
//
//   ChildProcesses children;
//   const pid_t pid = children.Spawn({"storage/shared/some_child", "arg"});
//   EXPECT_EQ(children.Wait(pid), 0);  // The wait status.
//
// Not thread-safe.
#ifndef STORAGE_SHARED_TESTING_CHILD_PROCESSES_H_
#define STORAGE_SHARED_TESTING_CHILD_PROCESSES_H_

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace backfill {

class ChildProcesses {
 public:
  ChildProcesses() = default;
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  // SIGKILLs and reaps every child not waited for.
  ~ChildProcesses();

  // Starts argv[0] with `argv` and the test's environment; returns its pid,
  // or 0 when it could not start (a test failure is reported).
  pid_t Spawn(std::vector<std::string> argv);
  // Blocks until `pid` exits; returns its wait status (a failure is
  // reported for a pid that is not a child).
  int Wait(pid_t pid);

 private:
  std::set<pid_t> running_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_TESTING_CHILD_PROCESSES_H_
