#include "tools/progress_display.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "serde/utf8.h"

namespace backfill {
namespace {

// Erase the whole current line, then go to its start.
constexpr char kClearLine[] = "\r\033[2K";

std::string FormatRate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "--";
  return FormatCount(static_cast<uint64_t>(std::llround(per_second)));
}

std::string FormatMs(double ms) {
  if (!std::isfinite(ms) || ms < 0) return "--";
  return absl::StrFormat("%.1f ms", ms);
}

}  // namespace

std::string FormatCount(uint64_t value) {
  std::string digits = absl::StrCat(value);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatDuration(std::optional<double> seconds) {
  if (!seconds.has_value() || !std::isfinite(*seconds) || *seconds < 0) {
    return "--";
  }
  if (*seconds < 10) return absl::StrFormat("%.1fs", *seconds);
  const uint64_t total = static_cast<uint64_t>(std::llround(*seconds));
  const uint64_t hours = total / 3600;
  const uint64_t minutes = (total / 60) % 60;
  const uint64_t secs = total % 60;
  if (hours > 0) return absl::StrFormat("%dh%02dm%02ds", hours, minutes, secs);
  if (minutes > 0) return absl::StrFormat("%dm%02ds", minutes, secs);
  return absl::StrFormat("%ds", secs);
}

std::string FormatProgressLine(const JobProgressSample& sample) {
  const bool done = sample.snapshot_percent >= 100;
  std::string rows = FormatCount(sample.snapshot_rows);
  if (sample.estimated_total_rows > 0) {
    absl::StrAppend(&rows, "/", done ? "" : "~",
                    FormatCount(sample.estimated_total_rows));
  }
  std::string limit;
  const char* unreachable =
      sample.target_unreachable ? ", target unreachable" : "";
  if (sample.rate_limit_rows_per_second == 0) {
    limit = absl::StrCat(" (paused", unreachable, ")");
  } else if (sample.rate_limit_rows_per_second.has_value()) {
    limit = absl::StrCat(" (limit ",
                         FormatCount(*sample.rate_limit_rows_per_second),
                         unreachable, ")");
  }
  return absl::StrFormat(
      "%6.1f%% of snapshot | vnodes %d/%d done | rows %s | %s rows/s%s | ETA "
      "%s | upstream %s ops/s | barrier p50 %s p99 %s | epoch %d ckpt %d | %s",
      sample.snapshot_percent, sample.vnodes_finished, sample.vnodes_total,
      rows, FormatRate(sample.snapshot_rows_per_second), limit,
      FormatDuration(sample.eta_seconds),
      FormatRate(sample.upstream_ops_per_second),
      FormatMs(sample.barrier_latency_p50_ms),
      FormatMs(sample.barrier_latency_p99_ms), sample.epochs,
      sample.checkpoints, FormatDuration(sample.seconds));
}

std::string FormatPhaseLine(const PhaseSample& sample) {
  std::string line = absl::StrCat("  ", sample.label, " | ");
  if (sample.total_rows > 0) {
    absl::StrAppend(&line, "rows ", FormatCount(sample.rows), "/",
                    FormatCount(sample.total_rows), " | ");
  }
  absl::StrAppend(&line, FormatDuration(sample.seconds));
  return line;
}

DisplayMode DetectDisplayMode(int fd) {
  if (isatty(fd) == 0) return DisplayMode::kPlain;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) {
    return DisplayMode::kPlain;
  }
  return DisplayMode::kTerminal;
}

int TerminalWidth(int fd) {
  struct winsize size;
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

ProgressDisplay::ProgressDisplay(std::ostream& out,
                                 ProgressDisplayOptions options)
    : out_(out), options_(options) {}

void ProgressDisplay::Update(const JobProgressSample& sample) {
  Show(sample.seconds, FormatProgressLine(sample));
}

void ProgressDisplay::UpdatePhase(const PhaseSample& sample) {
  Show(sample.seconds, FormatPhaseLine(sample));
}

void ProgressDisplay::Show(double seconds, std::string line) {
  if (options_.mode == DisplayMode::kTerminal) {
    // Keep the last column free: some terminals wrap when it is written.
    if (options_.width > 1 &&
        line.size() >= static_cast<size_t>(options_.width)) {
      line.resize(static_cast<size_t>(options_.width) - 1);
    }
    out_ << kClearLine << line << std::flush;
    line_open_ = true;
    return;
  }
  if (last_printed_seconds_.has_value() &&
      seconds - *last_printed_seconds_ < options_.plain_interval_seconds) {
    unprinted_ = std::move(line);
    return;
  }
  out_ << line << "\n" << std::flush;
  last_printed_seconds_ = seconds;
  unprinted_.reset();
}

void ProgressDisplay::Finish() {
  if (options_.mode == DisplayMode::kTerminal) {
    if (line_open_) out_ << "\n" << std::flush;
    line_open_ = false;
    return;
  }
  if (unprinted_.has_value()) out_ << *unprinted_ << "\n" << std::flush;
  unprinted_.reset();
  last_printed_seconds_.reset();
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text.substr(i));
      if (length == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text.data() + i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  assert(result.ec == std::errc());
  return std::string(buffer, result.ptr);
}

JsonObject& JsonObject::AddRaw(absl::string_view key, std::string json) {
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(json);
      return *this;
    }
  }
  members_.emplace_back(std::string(key), std::move(json));
  return *this;
}

JsonObject& JsonObject::Add(absl::string_view key, bool value) {
  return AddRaw(key, value ? "true" : "false");
}
JsonObject& JsonObject::Add(absl::string_view key, int value) {
  return AddRaw(key, absl::StrCat(value));
}
JsonObject& JsonObject::Add(absl::string_view key, unsigned value) {
  return AddRaw(key, absl::StrCat(value));
}
JsonObject& JsonObject::Add(absl::string_view key, int64_t value) {
  return AddRaw(key, absl::StrCat(value));
}
JsonObject& JsonObject::Add(absl::string_view key, uint64_t value) {
  return AddRaw(key, absl::StrCat(value));
}
JsonObject& JsonObject::Add(absl::string_view key, double value) {
  return AddRaw(key, JsonNumber(value));
}
JsonObject& JsonObject::Add(absl::string_view key, absl::string_view value) {
  return AddRaw(key, JsonQuote(value));
}
JsonObject& JsonObject::Add(absl::string_view key, const char* value) {
  return AddRaw(key, JsonQuote(value));
}
JsonObject& JsonObject::AddNull(absl::string_view key) {
  return AddRaw(key, "null");
}

std::string JsonObject::ToString() const {
  std::string out = "{";
  for (size_t i = 0; i < members_.size(); ++i) {
    if (i > 0) out += ',';
    out += JsonQuote(members_[i].first);
    out += ':';
    out += members_[i].second;
  }
  out += '}';
  return out;
}

}  // namespace backfill
