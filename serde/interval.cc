#include "serde/interval.h"

#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace backfill {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;

using Int32Limits = std::numeric_limits<int32_t>;
using Int64Limits = std::numeric_limits<int64_t>;

absl::int128 Clamp(absl::int128 value, absl::int128 low, absl::int128 high) {
  return value < low ? low : (value > high ? high : value);
}

// PostgreSQL's AddPostgresIntPart: " [+]N unit[s]".
void AppendPart(int64_t value, absl::string_view unit, bool& is_zero,
                bool& is_before, std::string* out) {
  if (value == 0) return;
  absl::StrAppend(out, is_zero ? "" : " ", is_before && value > 0 ? "+" : "",
                  value, " ", unit, value != 1 ? "s" : "");
  is_before = value < 0;
  is_zero = false;
}

// The unit of a "N unit" part, as microseconds per unit, or months per unit
// (months == true). nullopt for an unknown unit.
struct Unit {
  bool months = false;
  bool days = false;
  int64_t scale = 1;  // months, days or microseconds per unit
};

std::optional<Unit> UnitOf(absl::string_view word) {
  std::string unit = absl::AsciiStrToLower(word);
  if (unit.size() > 1 && unit.back() == 's' && unit != "ms" && unit != "us") {
    unit.pop_back();
  }
  if (unit == "year") return Unit{true, false, 12};
  if (unit == "mon" || unit == "month") return Unit{true, false, 1};
  if (unit == "week") return Unit{false, true, 7};
  if (unit == "day") return Unit{false, true, 1};
  if (unit == "hour") return Unit{false, false, kMicrosPerHour};
  if (unit == "min" || unit == "minute") {
    return Unit{false, false, kMicrosPerMinute};
  }
  if (unit == "sec" || unit == "second") {
    return Unit{false, false, kMicrosPerSecond};
  }
  if (unit == "ms" || unit == "millisecond") return Unit{false, false, 1000};
  if (unit == "us" || unit == "microsecond") return Unit{false, false, 1};
  return std::nullopt;
}

// "[+-]digits" to an int128 (at most 20 digits, so that a value times any
// unit's scale fits); false on anything else.
bool ParseInteger(absl::string_view text, absl::int128* value) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 20) return false;
  absl::int128 result = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    result = result * 10 + (c - '0');
  }
  *value = negative ? -result : result;
  return true;
}

// "digits[.f{1,6}]" (no sign) to microseconds; false on anything else.
bool ParseSeconds(absl::string_view text, absl::int128* micros) {
  const size_t dot = text.find('.');
  absl::int128 whole;
  if (!ParseInteger(text.substr(0, dot), &whole) || text[0] == '+' ||
      text[0] == '-') {
    return false;
  }
  absl::int128 fraction = 0;
  if (dot != absl::string_view::npos) {
    const absl::string_view digits = text.substr(dot + 1);
    if (digits.empty() || digits.size() > 6) return false;
    for (size_t i = 0; i < 6; ++i) {
      const char c = i < digits.size() ? digits[i] : '0';
      if (c < '0' || c > '9') return false;
      fraction = fraction * 10 + (c - '0');
    }
  }
  *micros = whole * kMicrosPerSecond + fraction;
  return true;
}

// "[+-]H:MM[:SS[.ffffff]]" to signed microseconds; false if it is not one.
bool ParseTimePart(absl::string_view text, absl::int128* micros) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(text, ':');
  if (fields.size() < 2 || fields.size() > 3) return false;
  absl::int128 hours, minutes, seconds = 0;
  if (fields[0].empty() || fields[1].size() != 2 ||
      !ParseInteger(fields[0], &hours) || !ParseInteger(fields[1], &minutes) ||
      fields[0][0] == '+' || fields[0][0] == '-' || fields[1][0] == '+' ||
      fields[1][0] == '-' || minutes > 59) {
    return false;
  }
  if (fields.size() == 3) {
    const absl::string_view s = fields[2];  // "SS" or "SS.f..."
    if (s.size() < 2 || (s.size() > 2 && s[2] != '.') ||
        !ParseSeconds(s, &seconds) || seconds >= 60 * kMicrosPerSecond) {
      return false;
    }
  }
  const absl::int128 total =
      hours * kMicrosPerHour + minutes * kMicrosPerMinute + seconds;
  *micros = negative ? -total : total;
  return true;
}

}  // namespace

absl::int128 IntervalSpan(const Interval& value) {
  return absl::int128(value.months) * kIntervalMicrosPerMonth +
         absl::int128(value.days) * kIntervalMicrosPerDay + value.micros;
}

bool operator==(const Interval& a, const Interval& b) {
  return IntervalSpan(a) == IntervalSpan(b);
}

bool operator<(const Interval& a, const Interval& b) {
  return IntervalSpan(a) < IntervalSpan(b);
}

int CompareIntervals(const Interval& a, const Interval& b) {
  const absl::int128 x = IntervalSpan(a), y = IntervalSpan(b);
  return x < y ? -1 : (y < x ? 1 : 0);
}

bool IdenticalIntervals(const Interval& a, const Interval& b) {
  return a.months == b.months && a.days == b.days && a.micros == b.micros;
}

absl::int128 MinIntervalSpan() {
  return IntervalSpan(
      {Int32Limits::min(), Int32Limits::min(), Int64Limits::min()});
}

absl::int128 MaxIntervalSpan() {
  return IntervalSpan(
      {Int32Limits::max(), Int32Limits::max(), Int64Limits::max()});
}

std::optional<Interval> IntervalFromSpan(absl::int128 span) {
  if (span < MinIntervalSpan() || span > MaxIntervalSpan()) {
    return std::nullopt;
  }
  // Truncating division keeps every field's sign that of the span; clamping
  // a field leaves more for the next one, and the range check above
  // guarantees the microseconds then fit.
  const absl::int128 months = Clamp(span / kIntervalMicrosPerMonth,
                                    Int32Limits::min(), Int32Limits::max());
  absl::int128 rest = span - months * kIntervalMicrosPerMonth;
  const absl::int128 days = Clamp(rest / kIntervalMicrosPerDay,
                                  Int32Limits::min(), Int32Limits::max());
  rest -= days * kIntervalMicrosPerDay;
  return Interval{static_cast<int32_t>(months), static_cast<int32_t>(days),
                  static_cast<int64_t>(rest)};
}

std::string FormatInterval(const Interval& value) {
  std::string out;
  bool is_zero = true, is_before = false;
  AppendPart(value.months / 12, "year", is_zero, is_before, &out);
  AppendPart(value.months % 12, "mon", is_zero, is_before, &out);
  AppendPart(value.days, "day", is_zero, is_before, &out);
  const int64_t time = value.micros;
  if (is_zero || time != 0) {
    // Truncating division: every component has the sign of `time`.
    const int64_t hours = time / kMicrosPerHour;
    const int64_t minutes = time / kMicrosPerMinute % 60;
    const int64_t seconds = time / kMicrosPerSecond % 60;
    const int64_t fraction = time % kMicrosPerSecond;
    const bool minus = time < 0;
    // |hours| fits: |INT64_MIN| / kMicrosPerHour is far below INT64_MAX.
    absl::StrAppendFormat(&out, "%s%s%02d:%02d:%02d", is_zero ? "" : " ",
                          minus ? "-" : (is_before ? "+" : ""), std::abs(hours),
                          std::abs(minutes), std::abs(seconds));
    if (fraction != 0) {
      std::string digits = absl::StrFormat("%06d", std::abs(fraction));
      while (digits.back() == '0') digits.pop_back();
      absl::StrAppend(&out, ".", digits);
    }
  }
  return out;
}

absl::StatusOr<Interval> ParseInterval(absl::string_view text) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid INTERVAL \"", absl::CHexEscape(text), "\": ", why));
  };
  const std::vector<absl::string_view> words =
      absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (words.empty()) return invalid("no parts");
  absl::int128 months = 0, days = 0, micros = 0;
  // Each part adds less than 2^100; stopping far below 2^127 keeps the sums
  // of arbitrarily many parts from overflowing.
  auto too_large = [&] {
    const absl::int128 limit = absl::int128(1) << 110;
    return months > limit || months < -limit || days > limit || days < -limit ||
           micros > limit || micros < -limit;
  };
  bool seen_time = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const absl::string_view word = words[i];
    if (word.find(':') != absl::string_view::npos) {
      absl::int128 time;
      if (seen_time || !ParseTimePart(word, &time)) {
        return invalid(absl::StrCat("bad time part \"", word, "\""));
      }
      seen_time = true;
      micros += time;
      if (too_large()) return invalid("out of range");
      continue;
    }
    if (i + 1 == words.size()) {
      return invalid(absl::StrCat("\"", word, "\" has no unit"));
    }
    const absl::string_view unit_word = words[++i];
    const std::optional<Unit> unit = UnitOf(unit_word);
    if (!unit.has_value()) {
      return invalid(absl::StrCat("unknown unit \"", unit_word, "\""));
    }
    absl::int128 amount;
    if (unit->scale == kMicrosPerSecond && !unit->months && !unit->days) {
      // Seconds may carry a fraction.
      const bool negative = !word.empty() && word[0] == '-';
      const absl::string_view digits =
          !word.empty() && (word[0] == '-' || word[0] == '+') ? word.substr(1)
                                                              : word;
      if (digits.empty() || !ParseSeconds(digits, &amount)) {
        return invalid(absl::StrCat("bad number \"", word, "\""));
      }
      micros += negative ? -amount : amount;
      if (too_large()) return invalid("out of range");
      continue;
    }
    if (!ParseInteger(word, &amount)) {
      return invalid(absl::StrCat("bad number \"", word, "\""));
    }
    if (unit->months) {
      months += amount * unit->scale;
    } else if (unit->days) {
      days += amount * unit->scale;
    } else {
      micros += amount * unit->scale;
    }
    if (too_large()) return invalid("out of range");
  }
  if (months < Int32Limits::min() || months > Int32Limits::max() ||
      days < Int32Limits::min() || days > Int32Limits::max() ||
      micros < Int64Limits::min() || micros > Int64Limits::max()) {
    return invalid("out of range");
  }
  return Interval{static_cast<int32_t>(months), static_cast<int32_t>(days),
                  static_cast<int64_t>(micros)};
}

}  // namespace backfill
