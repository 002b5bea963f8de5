// Ctrl-C for the command: the first SIGINT (or SIGTERM) asks the job to stop
// at its next checkpoint; a second one exits at once.
//
//   InterruptOptions options;
//   options.first_message = "stopping at the next checkpoint\n";
//   options.second_message = "exiting now\n";
//   InstallInterruptHandler(options);
//   ... in the runtime's observer, after every barrier:
//   if (stopper.ShouldStop(progress.checkpoints, InterruptRequested())) {
//     print how to resume; std::_Exit(kInterruptedExitCode);
//   }
//
// Exiting right after a committed checkpoint leaves the data directory as
// that checkpoint wrote it (the store is crash-consistent: what `kill -9`
// leaves is resumable, and so is this). The second signal's exit is the
// same as a kill: the directory resumes from the last checkpoint.
// Thread-safety: InstallInterruptHandler once, from main, before threads;
// InterruptRequested from any thread (an atomic flag).
#ifndef TOOLS_INTERRUPT_H_
#define TOOLS_INTERRUPT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace backfill {

// 128 + SIGINT, what shells report for a command ended by Ctrl-C.
inline constexpr int kInterruptedExitCode = 130;

struct InterruptOptions {
  // Written to standard error (with write(2), from the signal handler) on
  // the first and on the second signal.
  std::string first_message;
  std::string second_message;
  // The second signal's exit code (_exit, no clean-up). Default 130.
  int exit_code = kInterruptedExitCode;
};

// Installs the SIGINT and SIGTERM handlers. Calling it again replaces the
// messages and resets the count. Errors: Internal if sigaction fails.
absl::Status InstallInterruptHandler(const InterruptOptions& options);

// True once a first signal arrived.
bool InterruptRequested();

// Decides when a requested stop happens: at the first checkpoint that
// completes after the request was first seen.
class CheckpointStopper {
 public:
  // `checkpoints`: checkpoints completed so far (monotone within a run);
  // `requested`: whether a stop is requested now. Returns true from the
  // first call whose `checkpoints` exceeds the count when `requested` was
  // first true, and on every later call.
  bool ShouldStop(uint64_t checkpoints, bool requested);

 private:
  std::optional<uint64_t> checkpoints_at_request_;
};

}  // namespace backfill

#endif  // TOOLS_INTERRUPT_H_
