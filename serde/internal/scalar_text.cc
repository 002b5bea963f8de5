#include "serde/internal/scalar_text.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "serde/internal/civil_time.h"
#include "serde/interval.h"
#include "serde/jsonb.h"
#include "serde/timestamptz.h"

namespace backfill {
namespace serde_internal {
namespace {

// ---- Scalar output ------------------------------------------------------

// PostgreSQL's layout of the shortest round-trip digits: fixed notation iff
// -4 <= exponent < max_fixed_exponent.
template <typename T>
std::string FormatFloat(T value, int max_fixed_exponent) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[64];
  const std::to_chars_result result = std::to_chars(
      buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  assert(result.ec == std::errc());
  const std::string scientific(buffer, result.ptr);
  // "[-]d[.ddd]e[+-]XX"
  const size_t e_pos = scientific.find('e');
  int exponent = 0;
  std::from_chars(scientific.data() + e_pos + 1 +
                      (scientific[e_pos + 1] == '+' ? 1 : 0),
                  scientific.data() + scientific.size(), exponent);
  if (exponent < -4 || exponent >= max_fixed_exponent) return scientific;
  const bool negative = scientific[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e_pos; ++i) {
    if (scientific[i] != '.') digits.push_back(scientific[i]);
  }
  const int num_digits = static_cast<int>(digits.size());
  const int point = exponent + 1;  // digits before the decimal point
  std::string out = negative ? "-" : "";
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-point), '0');
    out += digits;
  } else if (point >= num_digits) {
    out += digits;
    out.append(static_cast<size_t>(point - num_digits), '0');
  } else {
    out += digits.substr(0, point);
    out += '.';
    out += digits.substr(point);
  }
  return out;
}

}  // namespace

void AppendScalarText(const Datum& datum, DataType type, std::string* out) {
  switch (datum.index()) {
    case 1:
      out->append(std::get<bool>(datum) ? "t" : "f");
      return;
    case 2:
      absl::StrAppend(out, std::get<int16_t>(datum));
      return;
    case 3:
      absl::StrAppend(out, std::get<int32_t>(datum));
      return;
    case 4:
      absl::StrAppend(out, std::get<int64_t>(datum));
      return;
    case 5:
      out->append(FormatFloat(std::get<float>(datum), /*max_fixed_exponent=*/6));
      return;
    case 6:
      out->append(FormatFloat(std::get<double>(datum), /*max_fixed_exponent=*/15));
      return;
    case 7:
      out->append(std::get<Decimal>(datum).ToString());
      return;
    case 8: {
      const std::string& bytes = std::get<std::string>(datum);
      if (type != DataType::kBytea) {
        out->append(bytes);
        return;
      }
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\x");
      for (unsigned char c : bytes) {
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xf]);
      }
      return;
    }
    case 9: {
      // "YYYY-MM-DD", " BC" after years before 1 as PostgreSQL.
      const CivilDate date = CivilFromDays(std::get<Date>(datum).days);
      const bool bc = date.year <= 0;
      absl::StrAppendFormat(out, "%04d-%02d-%02d",
                            bc ? 1 - date.year : date.year, date.month,
                            date.day);
      if (bc) out->append(" BC");
      return;
    }
    case 10:
      AppendTimeOfDay(std::get<TimeOfDay>(datum).micros, out);
      return;
    case 11:
      AppendTimestampText(std::get<Timestamp>(datum).micros, "", out);
      return;
    case 12:
      AppendTimestampText(std::get<Timestamptz>(datum).micros, "+00", out);
      return;
    case 13:
      out->append(FormatInterval(std::get<Interval>(datum)));
      return;
    case 14:
      absl::StrAppend(out, std::get<Serial>(datum).value);
      return;
    case 15:
      out->append(std::get<Int256>(datum).ToString());
      return;
    case 18:
      std::get<Jsonb>(datum).AppendTo(out);
      return;
  }
  assert(false && "AppendScalarText: not a scalar datum");
}


namespace {

// Optional sign and decimal digits only (absl's parsers also take spaces).
template <typename T>
bool ParseInteger(absl::string_view text, T* value) {
  size_t i = text.empty() || (text[0] != '-' && text[0] != '+') ? 0 : 1;
  if (i == text.size()) return false;
  for (size_t j = i; j < text.size(); ++j) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[j]))) {
      return false;
    }
  }
  int64_t wide;
  if (!absl::SimpleAtoi(text, &wide)) return false;
  if (wide < std::numeric_limits<T>::min() ||
      wide > std::numeric_limits<T>::max()) {
    return false;
  }
  *value = static_cast<T>(wide);
  return true;
}

template <typename T>
bool ParseFloat(absl::string_view text, T* value) {
  absl::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (absl::EqualsIgnoreCase(body, "nan")) {
    *value = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (absl::EqualsIgnoreCase(body, "infinity") ||
      absl::EqualsIgnoreCase(body, "inf")) {
    *value = negative ? -std::numeric_limits<T>::infinity()
                      : std::numeric_limits<T>::infinity();
    return true;
  }
  if (body.empty() || !(absl::ascii_isdigit(static_cast<unsigned char>(
                            body[0])) ||
                        body[0] == '.')) {
    return false;
  }
  T parsed;
  const std::from_chars_result result =
      std::from_chars(body.data(), body.data() + body.size(), parsed);
  if (result.ec != std::errc() || result.ptr != body.data() + body.size()) {
    return false;
  }
  *value = negative ? -parsed : parsed;
  return true;
}

// `count` digits (1 or 2 if count is 0) at *pos.
bool ReadDigits(absl::string_view text, size_t* pos, int min_count,
                int max_count, int64_t* value) {
  int n = 0;
  *value = 0;
  while (*pos < text.size() && n < max_count &&
         absl::ascii_isdigit(static_cast<unsigned char>(text[*pos]))) {
    *value = *value * 10 + (text[(*pos)++] - '0');
    ++n;
  }
  return n >= min_count;
}

// "Y{1,7}-M{1,2}-D{1,2}[ BC]" -> days since 1970-01-01.
absl::Status ParseDate(absl::string_view text, const ColumnType& type,
                       size_t base, int32_t* days) {
  size_t pos = 0;
  int64_t year, month, day;
  if (!ReadDigits(text, &pos, 1, 7, &year)) {
    return InvalidText(type, base + pos, "expected the year");
  }
  if (pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 1, 2, &month)) {
    return InvalidText(type, base + pos, "expected -MM");
  }
  if (pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 1, 2, &day)) {
    return InvalidText(type, base + pos, "expected -DD");
  }
  const bool bc = text.substr(pos) == " BC";
  if (!bc && pos != text.size()) {
    return InvalidText(type, base + pos, "expected the end or \" BC\"");
  }
  if (year < 1 || month < 1 || month > 12) {
    return InvalidText(type, base, "year or month out of range");
  }
  if (bc) year = 1 - year;
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return InvalidText(type, base, "day out of range");
  }
  const int64_t value = DaysFromCivil(year, static_cast<int>(month),
                                      static_cast<int>(day));
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return InvalidText(type, base, "date out of range");
  }
  *days = static_cast<int32_t>(value);
  return absl::OkStatus();
}

// "H{1,2}:MM:SS[.f{1,6}]" -> microseconds since midnight.
absl::Status ParseTime(absl::string_view text, const ColumnType& type,
                       size_t base, int64_t* micros) {
  size_t pos = 0;
  int64_t hour, minute, second, fraction = 0;
  if (!ReadDigits(text, &pos, 1, 2, &hour) || pos >= text.size() ||
      text[pos++] != ':' || !ReadDigits(text, &pos, 2, 2, &minute) ||
      pos >= text.size() || text[pos++] != ':' ||
      !ReadDigits(text, &pos, 2, 2, &second)) {
    return InvalidText(type, base + pos, "expected HH:MM:SS");
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t start = pos;
    if (!ReadDigits(text, &pos, 1, 6, &fraction)) {
      return InvalidText(type, base + pos, "expected 1 to 6 fraction digits");
    }
    for (size_t i = pos - start; i < 6; ++i) fraction *= 10;
  }
  if (pos != text.size()) return InvalidText(type, base + pos, "trailing text");
  if (hour > 23 || minute > 59 || second > 59) {
    return InvalidText(type, base, "time out of range");
  }
  *micros = ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseScalarText(absl::string_view text, size_t base,
                             const ColumnType& type, Datum* out) {
  auto wrap = [&](const absl::Status& status) {
    return InvalidText(type, base, status.message());
  };
  switch (type.id()) {
    case DataType::kBoolean:
      if (absl::EqualsIgnoreCase(text, "t") ||
          absl::EqualsIgnoreCase(text, "true")) {
        *out = true;
      } else if (absl::EqualsIgnoreCase(text, "f") ||
                 absl::EqualsIgnoreCase(text, "false")) {
        *out = false;
      } else {
        return InvalidText(type, base, "expected t or f");
      }
      return absl::OkStatus();
    case DataType::kInt16: {
      int16_t v;
      if (!ParseInteger(text, &v)) return InvalidText(type, base, "not an INT16");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kInt32: {
      int32_t v;
      if (!ParseInteger(text, &v)) return InvalidText(type, base, "not an INT32");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kInt64: {
      int64_t v;
      if (!ParseInteger(text, &v)) return InvalidText(type, base, "not an INT64");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kSerial: {
      int64_t v;
      if (!ParseInteger(text, &v)) return InvalidText(type, base, "not a SERIAL");
      *out = Serial{v};
      return absl::OkStatus();
    }
    case DataType::kFloat32: {
      float v;
      if (!ParseFloat(text, &v)) return InvalidText(type, base, "not a FLOAT32");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kFloat64: {
      double v;
      if (!ParseFloat(text, &v)) return InvalidText(type, base, "not a FLOAT64");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kDecimal: {
      absl::StatusOr<Decimal> v = Decimal::FromString(text);
      if (!v.ok()) return wrap(v.status());
      *out = *v;
      return absl::OkStatus();
    }
    case DataType::kVarchar:
      *out = std::string(text);
      return absl::OkStatus();
    case DataType::kBytea: {
      if (!absl::StartsWith(text, "\\x") || text.size() % 2 != 0) {
        return InvalidText(type, base, "expected \\x and an even number of hex "
                                   "digits");
      }
      std::string bytes;
      for (size_t i = 2; i < text.size(); i += 2) {
        int value = 0;
        for (size_t j = i; j < i + 2; ++j) {
          const char c = absl::ascii_tolower(static_cast<unsigned char>(text[j]));
          if (c >= '0' && c <= '9') {
            value = value * 16 + (c - '0');
          } else if (c >= 'a' && c <= 'f') {
            value = value * 16 + (c - 'a' + 10);
          } else {
            return InvalidText(type, base + j, "expected a hex digit");
          }
        }
        bytes.push_back(static_cast<char>(value));
      }
      *out = std::move(bytes);
      return absl::OkStatus();
    }
    case DataType::kDate: {
      int32_t days = 0;
      if (absl::Status s = ParseDate(text, type, base, &days); !s.ok()) {
        return s;
      }
      *out = Date{days};
      return absl::OkStatus();
    }
    case DataType::kTime: {
      int64_t micros = 0;
      if (absl::Status s = ParseTime(text, type, base, &micros); !s.ok()) {
        return s;
      }
      *out = TimeOfDay{micros};
      return absl::OkStatus();
    }
    case DataType::kTimestamp:
    case DataType::kTimestamptz: {
      // ParseTimestamptz's input; a TIMESTAMP ignores the zone (as
      // PostgreSQL's timestamp without time zone), a TIMESTAMPTZ applies it.
      const bool with_zone = type.id() == DataType::kTimestamptz;
      absl::StatusOr<int64_t> micros = ParseTimestampMicros(text, with_zone);
      if (!micros.ok()) return wrap(micros.status());
      if (with_zone) {
        *out = Timestamptz{*micros};
      } else {
        *out = Timestamp{*micros};
      }
      return absl::OkStatus();
    }
    case DataType::kInterval: {
      absl::StatusOr<Interval> v = ParseInterval(text);
      if (!v.ok()) return wrap(v.status());
      *out = *v;
      return absl::OkStatus();
    }
    case DataType::kInt256: {
      absl::StatusOr<Int256> v = Int256::FromString(text);
      if (!v.ok()) return wrap(v.status());
      *out = *v;
      return absl::OkStatus();
    }
    case DataType::kJsonb: {
      absl::StatusOr<Jsonb> v = ParseJsonb(text);
      if (!v.ok()) return wrap(v.status());
      *out = *std::move(v);
      return absl::OkStatus();
    }
    case DataType::kList:
    case DataType::kStruct:
    case DataType::kMap:
      break;
  }
  return InvalidText(type, base, "not a scalar type");
}

absl::Status InvalidText(const ColumnType& type, size_t offset,
                         absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", type.DebugString(), " text at offset ", offset, ": ", what));
}

}  // namespace serde_internal
}  // namespace backfill
