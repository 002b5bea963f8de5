#include "metrics/promtool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "third_party/absl_extras/status_macros.h"

extern char** environ;

namespace backfill {
namespace {

absl::Status ErrnoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::string> FindPromtool() {
  const std::string system_path = "/usr/bin/promtool";
  if (access(system_path.c_str(), X_OK) == 0) return system_path;
  const char* path = std::getenv("PATH");
  if (path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':')) {
      if (dir.empty()) continue;
      std::string candidate = absl::StrCat(dir, "/promtool");
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return absl::NotFoundError(
      "promtool not found at /usr/bin/promtool or on PATH; install the "
      "Debian package `prometheus` (the set-up script does)");
}

// promtool reads stdin to EOF before it prints anything, and the output is
// small; still, the input goes through a file rather than a pipe so that no
// size of either can deadlock the two processes.
absl::StatusOr<PromtoolResult> RunPromtoolCheckMetrics(absl::string_view text) {
  BACKFILL_ASSIGN_OR_RETURN(const std::string promtool, FindPromtool());

  const char* tmpdir = std::getenv("TEST_TMPDIR");
  std::string input_path =
      absl::StrCat(tmpdir != nullptr ? tmpdir : "/tmp", "/promtool_XXXXXX");
  const int input_fd = mkstemp(input_path.data());
  if (input_fd < 0) return ErrnoError("mkstemp");
  absl::Cleanup remove_input = [&] {
    close(input_fd);
    unlink(input_path.c_str());
  };
  for (size_t written = 0; written < text.size();) {
    const ssize_t n =
        write(input_fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write");
    }
    written += static_cast<size_t>(n);
  }
  if (lseek(input_fd, 0, SEEK_SET) < 0) return ErrnoError("lseek");

  int output_pipe[2];
  if (pipe2(output_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  absl::Cleanup close_read_end = [&] { close(output_pipe[0]); };

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input_fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], STDERR_FILENO);
  std::vector<char*> argv = {const_cast<char*>(promtool.c_str()),
                             const_cast<char*>("check"),
                             const_cast<char*>("metrics"), nullptr};
  pid_t pid;
  const int spawn_error = posix_spawn(&pid, promtool.c_str(), &actions, nullptr,
                                      argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(output_pipe[1]);
  if (spawn_error != 0) {
    return absl::InternalError(absl::StrCat("posix_spawn ", promtool, ": ",
                                            std::strerror(spawn_error)));
  }

  PromtoolResult result;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(output_pipe[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<size_t>(n));
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("waitpid");
  }
  if (!WIFEXITED(wait_status)) {
    return absl::InternalError(
        absl::StrCat(promtool, " did not exit normally, status ", wait_status,
                     "; output: ", result.output));
  }
  result.exit_code = WEXITSTATUS(wait_status);
  return result;
}

}  // namespace backfill
