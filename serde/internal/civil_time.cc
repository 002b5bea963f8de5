#include "serde/internal/civil_time.h"

#include <limits>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace backfill {
namespace serde_internal {
namespace {

// Consumes exactly `count` digits (count > 0) from the front of *text.
bool TakeDigits(absl::string_view* text, size_t count, int64_t* value) {
  if (text->size() < count) return false;
  int64_t result = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = (*text)[i];
    if (c < '0' || c > '9') return false;
    result = result * 10 + (c - '0');
  }
  text->remove_prefix(count);
  *value = result;
  return true;
}

size_t LeadingDigits(absl::string_view text) {
  size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  return n;
}

}  // namespace

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

CivilDate CivilFromDays(int64_t days) {
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeapYear(int64_t year) {
  return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

void AppendTimeOfDay(int64_t micros, std::string* out) {
  const int64_t seconds = micros / kMicrosPerSecond;
  absl::StrAppendFormat(out, "%02d:%02d:%02d", seconds / 3600,
                        (seconds / 60) % 60, seconds % 60);
  if (int64_t fraction = micros % kMicrosPerSecond; fraction != 0) {
    int width = 6;
    while (fraction % 10 == 0) {
      fraction /= 10;
      --width;
    }
    absl::StrAppendFormat(out, ".%0*d", width, fraction);
  }
}

void AppendTimestampText(int64_t micros, absl::string_view zone,
                         std::string* out) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  // The remainder, not micros - days * kMicrosPerDay: that product
  // overflows for the earliest timestamps.
  int64_t of_day = micros % kMicrosPerDay;
  if (of_day < 0) of_day += kMicrosPerDay;
  const CivilDate date = CivilFromDays(days);
  const bool bc = date.year <= 0;
  absl::StrAppendFormat(out, "%04d-%02d-%02d ", bc ? 1 - date.year : date.year,
                        date.month, date.day);
  AppendTimeOfDay(of_day, out);
  out->append(zone.data(), zone.size());
  if (bc) out->append(" BC");
}

absl::StatusOr<int64_t> ParseTimestampMicros(absl::string_view text,
                                             bool apply_zone) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid ", apply_zone ? "TIMESTAMPTZ" : "TIMESTAMP", " \"",
        absl::CHexEscape(text.substr(0, 100)), "\": ", why));
  };
  absl::string_view rest = text;
  // Date.
  const size_t year_digits = LeadingDigits(rest);
  int64_t year, month, day;
  if (year_digits < 1 || year_digits > 6 ||
      !TakeDigits(&rest, year_digits, &year) ||
      !absl::ConsumePrefix(&rest, "-") || !TakeDigits(&rest, 2, &month) ||
      !absl::ConsumePrefix(&rest, "-") || !TakeDigits(&rest, 2, &day)) {
    return invalid("expected YYYY-MM-DD");
  }
  if (!absl::ConsumePrefix(&rest, " ") && !absl::ConsumePrefix(&rest, "T")) {
    return invalid("expected a space or T after the date");
  }
  // Time.
  int64_t hour, minute, second = 0, fraction = 0;
  if (!TakeDigits(&rest, 2, &hour) || !absl::ConsumePrefix(&rest, ":") ||
      !TakeDigits(&rest, 2, &minute)) {
    return invalid("expected HH:MM");
  }
  if (absl::ConsumePrefix(&rest, ":")) {
    if (!TakeDigits(&rest, 2, &second)) return invalid("expected SS");
    if (absl::ConsumePrefix(&rest, ".")) {
      const size_t digits = LeadingDigits(rest);
      if (digits < 1 || digits > 6) {
        return invalid("expected 1 to 6 fraction digits");
      }
      TakeDigits(&rest, digits, &fraction);
      for (size_t i = digits; i < 6; ++i) fraction *= 10;
    }
  }
  // Zone.
  int64_t offset_seconds = 0;
  absl::string_view zone = rest;
  absl::ConsumePrefix(&zone, " ");
  if (absl::ConsumePrefix(&zone, "Z") || absl::ConsumePrefix(&zone, "UTC")) {
    rest = zone;
  } else if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    const bool negative = rest[0] == '-';
    rest.remove_prefix(1);
    int64_t offset_hours, offset_minutes = 0;
    if (!TakeDigits(&rest, 2, &offset_hours)) {
      return invalid("expected a zone offset +HH[:MM]");
    }
    if (absl::ConsumePrefix(&rest, ":")) {
      if (!TakeDigits(&rest, 2, &offset_minutes)) {
        return invalid("expected zone offset minutes");
      }
    } else if (LeadingDigits(rest) >= 2) {
      TakeDigits(&rest, 2, &offset_minutes);
    }
    if (offset_hours >= 16 || offset_minutes >= 60) {
      return invalid("zone offset out of range");
    }
    offset_seconds =
        (offset_hours * 3600 + offset_minutes * 60) * (negative ? -1 : 1);
  }
  if (!apply_zone) offset_seconds = 0;
  const bool bc = absl::ConsumePrefix(&rest, " BC");
  if (!rest.empty()) return invalid("unexpected trailing text");
  if (bc && year == 0) return invalid("year 0 BC does not exist");
  if (!bc && year == 0) return invalid("year 0 does not exist");
  if (month < 1 || month > 12) return invalid("month out of range");
  const int64_t proleptic_year = bc ? 1 - year : year;
  if (day < 1 || day > DaysInMonth(proleptic_year, static_cast<int>(month))) {
    return invalid("day out of range");
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return invalid("time out of range");
  }
  const absl::int128 micros =
      absl::int128(DaysFromCivil(proleptic_year, static_cast<int>(month),
                                 static_cast<int>(day))) *
          kMicrosPerDay +
      (hour * 3600 + minute * 60 + second - offset_seconds) * kMicrosPerSecond +
      fraction;
  if (micros < std::numeric_limits<int64_t>::min() ||
      micros > std::numeric_limits<int64_t>::max()) {
    return invalid("out of range");
  }
  return static_cast<int64_t>(micros);
}

}  // namespace serde_internal
}  // namespace backfill
