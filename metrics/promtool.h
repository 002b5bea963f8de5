// Test support: validates Prometheus text exposition with Prometheus's own
// linter, `promtool check metrics` (Debian package `prometheus`).
//
//   BACKFILL_ASSERT_OK_AND_ASSIGN(PromtoolResult result,
//                                 RunPromtoolCheckMetrics(registry.ExportText()));
//   EXPECT_EQ(result.exit_code, 0) << result.output;
#ifndef METRICS_PROMTOOL_H_
#define METRICS_PROMTOOL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

struct PromtoolResult {
  // promtool's exit code: 0 valid, 1 parse error, 3 lint problems.
  int exit_code = -1;
  // Its stdout and stderr, interleaved (the parse errors and lint problems).
  std::string output;
};

// The promtool binary: /usr/bin/promtool if it exists, else the first
// `promtool` on PATH. Errors: NotFound, naming the package to install.
absl::StatusOr<std::string> FindPromtool();

// Pipes `text` into `promtool check metrics` and waits for it.
// Errors: NotFound if promtool is missing; Internal if it cannot be run.
absl::StatusOr<PromtoolResult> RunPromtoolCheckMetrics(absl::string_view text);

}  // namespace backfill

#endif  // METRICS_PROMTOOL_H_
