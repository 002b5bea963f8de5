// The exit codes of //tools:backfill (also in tools/README.md). Scripts and
// the crash test rely on them: never change a value.
//
//   return static_cast<int>(consistent ? ExitCode::kConsistent
//                                      : ExitCode::kInconsistent);
#ifndef TOOLS_EXIT_CODES_H_
#define TOOLS_EXIT_CODES_H_

#include "absl/status/status.h"

namespace backfill {

enum class ExitCode : int {
  // The run finished and the view equals the upstream table.
  kConsistent = 0,
  // The run finished and the view differs from the upstream table.
  kInconsistent = 1,
  // The run could not start or finish: bad flags, a bad scenario, I/O or
  // storage errors, the safety timeout (runtime.max_seconds).
  kError = 2,
  // Stopped by Ctrl-C (SIGINT or SIGTERM) before the end: 128 + SIGINT, as
  // shells report a command ended by Ctrl-C. The data directory resumes.
  kInterrupted = 130,
};

// kConsistent for OK, kError for any other status (a verdict is never an
// error status: the caller maps an inconsistency to kInconsistent itself).
inline int ExitCodeForStatus(const absl::Status& status) {
  return static_cast<int>(status.ok() ? ExitCode::kConsistent
                                      : ExitCode::kError);
}

}  // namespace backfill

#endif  // TOOLS_EXIT_CODES_H_
