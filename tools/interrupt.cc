#include "tools/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

// Read by the signal handler: set before the handler is installed, never
// changed while it is (InstallInterruptHandler blocks the signals first).
std::string* first_message = nullptr;
std::string* second_message = nullptr;
int exit_code = kInterruptedExitCode;
std::atomic<int> signals_seen{0};
static_assert(std::atomic<int>::is_always_lock_free);

void WriteAll(const std::string* text) {
  if (text == nullptr) return;
  const char* data = text->data();
  size_t left = text->size();
  while (left > 0) {
    const ssize_t written = write(STDERR_FILENO, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    data += written;
    left -= static_cast<size_t>(written);
  }
}

void OnSignal(int) {
  const int saved_errno = errno;
  if (signals_seen.fetch_add(1) == 0) {
    WriteAll(first_message);
  } else {
    WriteAll(second_message);
    _exit(exit_code);
  }
  errno = saved_errno;
}

}  // namespace

absl::Status InstallInterruptHandler(const InterruptOptions& options) {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  delete first_message;
  delete second_message;
  first_message = new std::string(options.first_message);
  second_message = new std::string(options.second_message);
  exit_code = options.exit_code;
  signals_seen.store(0);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  absl::Status status;
  for (int signal : {SIGINT, SIGTERM}) {
    if (sigaction(signal, &action, nullptr) != 0) {
      status = absl::InternalError(
          absl::StrCat("sigaction(", signal, "): ", std::strerror(errno)));
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return status;
}

bool InterruptRequested() { return signals_seen.load() > 0; }

bool CheckpointStopper::ShouldStop(uint64_t checkpoints, bool requested) {
  if (!checkpoints_at_request_.has_value()) {
    if (!requested) return false;
    checkpoints_at_request_ = checkpoints;
    return false;
  }
  return checkpoints > *checkpoints_at_request_;
}

}  // namespace backfill
