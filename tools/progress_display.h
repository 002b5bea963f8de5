// What //tools:backfill shows while it runs: a live progress line (refreshed
// in place on a terminal, plain periodic lines otherwise), and the JSON
// building blocks its result line and the bench use. (The summary table and
// the result line are rendered from tools::RunResult: tools/run_result.h.)
//
//   ProgressDisplay display(std::cout, {.mode = DetectDisplayMode(1)});
//   while (running) display.Update(SampleProgress());   // any cadence
//   display.Finish();
//
// Nothing here reads a clock: samples carry their own time. Every function
// writes to the std::ostream it is given, so tests render into strings.
// Thread-safety: ProgressDisplay is not thread-safe; the rest is pure.
#ifndef TOOLS_PROGRESS_DISPLAY_H_
#define TOOLS_PROGRESS_DISPLAY_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace backfill {

// One observation of a running backfill.
struct JobProgressSample {
  // Seconds since the command started, >= 0.
  double seconds = 0;
  // The share of the snapshot read, in [0, 100], from SnapshotProgress
  // (snapshot_progress.h: monotone, below 100 until every vnode finished):
  // the only percentage the line shows.
  double snapshot_percent = 0;
  // Seconds until the snapshot is read at the recent rate (nullopt:
  // unknown).
  std::optional<double> eta_seconds;
  // Vnodes whose snapshot is fully read, out of the table's vnode count.
  uint64_t vnodes_finished = 0;
  uint64_t vnodes_total = 0;
  // Snapshot rows read so far, and the estimated total (0 = unknown).
  uint64_t snapshot_rows = 0;
  uint64_t estimated_total_rows = 0;
  // Recent rate; NaN while unknown (shown "--", as every rate below).
  double snapshot_rows_per_second = 0;
  // The job-wide snapshot rate limit in force while the backfill reads (in
  // adaptive mode the controller's current rate): nullopt for none, 0 for
  // paused (RateLimit::ToOptionalU32's encoding). Shown after the rate.
  std::optional<uint32_t> rate_limit_rows_per_second;
  // The adaptive controller judges its target unreachable (JobProgress's
  // adaptive_target_unreachable): shown with the limit.
  bool target_unreachable = false;
  // Upstream changes applied so far and their recent rate.
  uint64_t upstream_ops = 0;
  double upstream_ops_per_second = 0;
  // Latency of a barrier from injection to collection, recent window.
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
  // Barriers (epochs) and checkpoints completed.
  uint64_t epochs = 0;
  uint64_t checkpoints = 0;
};

// What the job does before its backfill's first barrier, or between two
// attempts: a labelled line without a percentage.
struct PhaseSample {
  // Seconds since the command started, >= 0.
  double seconds = 0;
  // What the job does: "starting", "bulk load", "recovering", ...
  std::string label;
  // Rows done out of `total_rows`, shown when total_rows > 0 (the bulk
  // load's rows written of the initial rows).
  uint64_t rows = 0;
  uint64_t total_rows = 0;
};

// "1,234,567".
std::string FormatCount(uint64_t value);
// "0.4s", "12s", "3m05s", "1h02m03s"; "--" for nullopt, negative or not
// finite.
std::string FormatDuration(std::optional<double> seconds);

// The progress line, without "\r" or newline:
// "  42.6% of snapshot | vnodes 109/256 done | rows 425,000/~998,000 |
//  52,300 rows/s | ETA 11s | upstream 19,870 ops/s | barrier p50 3.1 ms
//  p99 12.0 ms | epoch 85 ckpt 42 | 8.1s" (one line).
std::string FormatProgressLine(const JobProgressSample& sample);

// The phase line: "  bulk load | rows 412,000/1,000,000 | 3.2s", or
// "  starting | 0.4s" without rows.
std::string FormatPhaseLine(const PhaseSample& sample);

enum class DisplayMode {
  kTerminal,  // one line rewritten in place ("\r" + ANSI erase-line)
  kPlain,     // a new line every `plain_interval_seconds` of sample time
};

// kTerminal iff `fd` is a terminal (isatty) and TERM is not "dumb".
DisplayMode DetectDisplayMode(int fd);
// Columns of the terminal on `fd`, or 0 when unknown.
int TerminalWidth(int fd);

struct ProgressDisplayOptions {
  DisplayMode mode = DisplayMode::kPlain;
  // kPlain: minimum sample time between two lines, in seconds (>= 0; the
  // first sample is always printed).
  double plain_interval_seconds = 5;
  // kTerminal: truncate the line to this many columns (0 = no limit) so
  // that it never wraps (a wrapped line cannot be rewritten in place).
  int width = 0;
};

class ProgressDisplay {
 public:
  ProgressDisplay(std::ostream& out, ProgressDisplayOptions options);

  // Shows `sample`: on a terminal rewrites the line; in plain mode prints a
  // line if at least plain_interval_seconds passed since the last one.
  void Update(const JobProgressSample& sample);
  // The same for a phase line.
  void UpdatePhase(const PhaseSample& sample);

  // Ends the display: a terminal's live line is completed with a newline;
  // in plain mode the last sample is printed if it was skipped. Idempotent;
  // Update after Finish starts a new display.
  void Finish();

 private:
  // Shows `line`, made at sample time `seconds`.
  void Show(double seconds, std::string line);

  std::ostream& out_;
  const ProgressDisplayOptions options_;
  std::optional<double> last_printed_seconds_;
  // The last line not printed (plain mode), for Finish.
  std::optional<std::string> unprinted_;
  bool line_open_ = false;
};

// Builds one JSON object on one line: keys in insertion order (adding a key
// again replaces its value), strings escaped (control characters, quotes,
// backslashes; invalid UTF-8 bytes become U+FFFD), non-finite doubles as
// null.
class JsonObject {
 public:
  JsonObject& Add(absl::string_view key, bool value);
  JsonObject& Add(absl::string_view key, int value);
  JsonObject& Add(absl::string_view key, unsigned value);
  JsonObject& Add(absl::string_view key, int64_t value);
  JsonObject& Add(absl::string_view key, uint64_t value);
  JsonObject& Add(absl::string_view key, double value);
  JsonObject& Add(absl::string_view key, absl::string_view value);
  JsonObject& Add(absl::string_view key, const char* value);
  JsonObject& AddNull(absl::string_view key);

  // {"key":value,...}, no newline.
  std::string ToString() const;

 private:
  JsonObject& AddRaw(absl::string_view key, std::string json);

  std::vector<std::pair<std::string, std::string>> members_;
};

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);
// A JSON number for `value` (shortest round-trip), or "null" if not finite.
std::string JsonNumber(double value);

}  // namespace backfill

#endif  // TOOLS_PROGRESS_DISPLAY_H_
