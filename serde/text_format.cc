#include "serde/text_format.h"

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
#include "serde/interval.h"
#include "serde/jsonb.h"
#include "serde/timestamptz.h"

namespace backfill {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

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

// Proleptic Gregorian civil date of `days` since 1970-01-01 (Howard
// Hinnant's civil_from_days / days_from_civil).
void CivilFromDays(int64_t days, int64_t* year, int* month, int* day) {
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2 ? 1 : 0);
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

// "YYYY-MM-DD"; *bc is set for years before 1 (printed " BC" after the
// whole value, as PostgreSQL).
std::string FormatDays(int64_t days, bool* bc) {
  int64_t year;
  int month, day;
  CivilFromDays(days, &year, &month, &day);
  *bc = year <= 0;
  if (*bc) year = 1 - year;
  return absl::StrFormat("%04d-%02d-%02d", year, month, day);
}

// "HH:MM:SS[.ffffff]" without trailing zeros in the fraction.
std::string FormatTimeOfDay(int64_t micros) {
  const int64_t seconds = micros / kMicrosPerSecond;
  std::string out = absl::StrFormat("%02d:%02d:%02d", seconds / 3600,
                                    (seconds / 60) % 60, seconds % 60);
  int64_t fraction = micros % kMicrosPerSecond;
  if (fraction != 0) {
    int width = 6;
    while (fraction % 10 == 0) {
      fraction /= 10;
      --width;
    }
    absl::StrAppendFormat(&out, ".%0*d", width, fraction);
  }
  return out;
}

std::string FormatTimestamp(int64_t micros) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  bool bc = false;
  std::string out = FormatDays(days, &bc);
  out += ' ';
  out += FormatTimeOfDay(micros - days * kMicrosPerDay);
  if (bc) out += " BC";
  return out;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// A LIST element (or, with `colon`, a MAP key or scalar value) is quoted
// when its text is empty, "null" in any case, or holds a special character.
bool NeedsListQuote(absl::string_view text, bool colon) {
  if (text.empty() || absl::EqualsIgnoreCase(text, "null")) return true;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == ',' || c == '{' || c == '}' ||
        IsSpace(c) || (colon && c == ':')) {
      return true;
    }
  }
  return false;
}

void AppendListQuoted(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

bool NeedsStructQuote(absl::string_view text) {
  if (text.empty()) return true;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == ',' || c == '(' || c == ')' ||
        IsSpace(c)) {
      return true;
    }
  }
  return false;
}

void AppendStructQuoted(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out->push_back(c);  // doubled
    out->push_back(c);
  }
  out->push_back('"');
}

// LIST and MAP values inside a MAP are written unquoted (their braces
// delimit them); a LIST's LIST elements too.
bool IsBraced(const ColumnType& type) {
  return type.id() == DataType::kList || type.id() == DataType::kMap;
}

void AppendText(const Datum& datum, const ColumnType& type, std::string* out);

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
      out->append(FormatFloat32Text(std::get<float>(datum)));
      return;
    case 6:
      out->append(FormatFloat64Text(std::get<double>(datum)));
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
      bool bc = false;
      out->append(FormatDays(std::get<Date>(datum).days, &bc));
      if (bc) out->append(" BC");
      return;
    }
    case 10:
      out->append(FormatTimeOfDay(std::get<TimeOfDay>(datum).micros));
      return;
    case 11:
      out->append(FormatTimestamp(std::get<Timestamp>(datum).micros));
      return;
    case 12:
      out->append(FormatTimestamptz(std::get<Timestamptz>(datum)));
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

void AppendText(const Datum& datum, const ColumnType& type, std::string* out) {
  switch (type.id()) {
    case DataType::kList: {
      out->push_back('{');
      bool first = true;
      for (const Datum& element : std::get<ListValue>(datum).elements) {
        if (!first) out->push_back(',');
        first = false;
        if (IsNull(element)) {
          out->append("NULL");
          continue;
        }
        std::string text;
        AppendText(element, type.element(), &text);
        if (type.element().id() != DataType::kList &&
            NeedsListQuote(text, /*colon=*/false)) {
          AppendListQuoted(text, out);
        } else {
          out->append(text);
        }
      }
      out->push_back('}');
      return;
    }
    case DataType::kStruct: {
      out->push_back('(');
      const std::vector<Datum>& fields = std::get<StructValue>(datum).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out->push_back(',');
        if (IsNull(fields[i])) continue;
        std::string text;
        AppendText(fields[i], type.fields()[i].type, &text);
        if (NeedsStructQuote(text)) {
          AppendStructQuoted(text, out);
        } else {
          out->append(text);
        }
      }
      out->push_back(')');
      return;
    }
    case DataType::kMap: {
      out->push_back('{');
      bool first = true;
      for (const MapEntry& entry : std::get<MapValue>(datum).entries) {
        if (!first) out->push_back(',');
        first = false;
        std::string text;
        AppendText(entry.key, type.map_key(), &text);
        if (NeedsListQuote(text, /*colon=*/true)) {
          AppendListQuoted(text, out);
        } else {
          out->append(text);
        }
        out->push_back(':');
        if (IsNull(entry.value)) {
          out->append("NULL");
          continue;
        }
        text.clear();
        AppendText(entry.value, type.map_value(), &text);
        if (!IsBraced(type.map_value()) &&
            NeedsListQuote(text, /*colon=*/true)) {
          AppendListQuoted(text, out);
        } else {
          out->append(text);
        }
      }
      out->push_back('}');
      return;
    }
    default:
      AppendScalarText(datum, type.id(), out);
  }
}

// ---- Input --------------------------------------------------------------

absl::Status Invalid(const ColumnType& type, size_t offset,
                     absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid ", type.DebugString(), " text at offset ", offset, ": ", what));
}

absl::Status ParseText(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out);

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
    return Invalid(type, base + pos, "expected the year");
  }
  if (pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 1, 2, &month)) {
    return Invalid(type, base + pos, "expected -MM");
  }
  if (pos >= text.size() || text[pos++] != '-' ||
      !ReadDigits(text, &pos, 1, 2, &day)) {
    return Invalid(type, base + pos, "expected -DD");
  }
  const bool bc = text.substr(pos) == " BC";
  if (!bc && pos != text.size()) {
    return Invalid(type, base + pos, "expected the end or \" BC\"");
  }
  if (year < 1 || month < 1 || month > 12) {
    return Invalid(type, base, "year or month out of range");
  }
  if (bc) year = 1 - year;
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return Invalid(type, base, "day out of range");
  }
  const int64_t value = DaysFromCivil(year, static_cast<int>(month),
                                      static_cast<int>(day));
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return Invalid(type, base, "date out of range");
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
    return Invalid(type, base + pos, "expected HH:MM:SS");
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t start = pos;
    if (!ReadDigits(text, &pos, 1, 6, &fraction)) {
      return Invalid(type, base + pos, "expected 1 to 6 fraction digits");
    }
    for (size_t i = pos - start; i < 6; ++i) fraction *= 10;
  }
  if (pos != text.size()) return Invalid(type, base + pos, "trailing text");
  if (hour > 23 || minute > 59 || second > 59) {
    return Invalid(type, base, "time out of range");
  }
  *micros = ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + fraction;
  return absl::OkStatus();
}

absl::Status ParseScalar(absl::string_view text, size_t base,
                         const ColumnType& type, Datum* out) {
  auto wrap = [&](const absl::Status& status) {
    return Invalid(type, base, status.message());
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
        return Invalid(type, base, "expected t or f");
      }
      return absl::OkStatus();
    case DataType::kInt16: {
      int16_t v;
      if (!ParseInteger(text, &v)) return Invalid(type, base, "not an INT16");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kInt32: {
      int32_t v;
      if (!ParseInteger(text, &v)) return Invalid(type, base, "not an INT32");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kInt64: {
      int64_t v;
      if (!ParseInteger(text, &v)) return Invalid(type, base, "not an INT64");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kSerial: {
      int64_t v;
      if (!ParseInteger(text, &v)) return Invalid(type, base, "not a SERIAL");
      *out = Serial{v};
      return absl::OkStatus();
    }
    case DataType::kFloat32: {
      float v;
      if (!ParseFloat(text, &v)) return Invalid(type, base, "not a FLOAT32");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kFloat64: {
      double v;
      if (!ParseFloat(text, &v)) return Invalid(type, base, "not a FLOAT64");
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
        return Invalid(type, base, "expected \\x and an even number of hex "
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
            return Invalid(type, base + j, "expected a hex digit");
          }
        }
        bytes.push_back(static_cast<char>(value));
      }
      *out = std::move(bytes);
      return absl::OkStatus();
    }
    case DataType::kDate: {
      int32_t days;
      if (absl::Status s = ParseDate(text, type, base, &days); !s.ok()) {
        return s;
      }
      *out = Date{days};
      return absl::OkStatus();
    }
    case DataType::kTime: {
      int64_t micros;
      if (absl::Status s = ParseTime(text, type, base, &micros); !s.ok()) {
        return s;
      }
      *out = TimeOfDay{micros};
      return absl::OkStatus();
    }
    case DataType::kTimestamp:
    case DataType::kTimestamptz: {
      // A TIMESTAMP is read as the UTC instant of the same text.
      absl::StatusOr<Timestamptz> v = ParseTimestamptz(text);
      if (!v.ok()) return wrap(v.status());
      if (type.id() == DataType::kTimestamp) {
        *out = Timestamp{v->micros};
      } else {
        *out = *v;
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
  return Invalid(type, base, "not a scalar type");
}

void SkipSpace(absl::string_view text, size_t* pos) {
  while (*pos < text.size() && IsSpace(text[*pos])) ++*pos;
}

// A double-quoted string at *pos (which is at the '"'): backslash escapes
// the next byte; with `doubled_quotes` (STRUCT fields) "" is a quote too.
// Leaves *pos after the closing quote.
bool ReadQuoted(absl::string_view text, size_t* pos, bool doubled_quotes,
                std::string* value) {
  ++*pos;
  while (*pos < text.size()) {
    const char c = text[(*pos)++];
    if (c == '\\') {
      if (*pos >= text.size()) return false;
      value->push_back(text[(*pos)++]);
    } else if (c == '"') {
      if (doubled_quotes && *pos < text.size() && text[*pos] == '"') {
        value->push_back('"');
        ++*pos;
      } else {
        return true;
      }
    } else {
      value->push_back(c);
    }
  }
  return false;
}

// The end (after the matching '}') of the braced text at `pos`, skipping
// quoted parts (a backslash escapes the next byte inside quotes); npos if
// it does not close. Unquoted braces inside a LIST or MAP text are always
// those of nested LISTs and MAPs: every other element with a brace is
// quoted.
size_t ScanBraced(absl::string_view text, size_t pos) {
  int depth = 0;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (quoted) {
      if (c == '\\') {
        ++pos;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return pos + 1;
    }
  }
  return absl::string_view::npos;
}

// An unquoted token: up to a byte in `stops` or white space.
absl::string_view ReadToken(absl::string_view text, size_t* pos,
                            absl::string_view stops) {
  const size_t start = *pos;
  while (*pos < text.size() && !IsSpace(text[*pos]) &&
         stops.find(text[*pos]) == absl::string_view::npos) {
    ++*pos;
  }
  return text.substr(start, *pos - start);
}

// One LIST element, MAP key or MAP value at *pos: quoted, braced (when
// `braced` and the type is a LIST or MAP), NULL, or an unquoted token ending
// at one of `stops`.
absl::Status ParseElement(absl::string_view text, size_t base, size_t* pos,
                          const ColumnType& container,
                          const ColumnType& type, bool braced,
                          absl::string_view stops, Datum* out) {
  const size_t start = *pos;
  if (start >= text.size()) {
    return Invalid(container, base + start, "expected an element");
  }
  if (text[start] == '"') {
    std::string value;
    if (!ReadQuoted(text, pos, /*doubled_quotes=*/false, &value)) {
      return Invalid(container, base + start, "unterminated quoted element");
    }
    return ParseText(value, base + start + 1, type, out);
  }
  if (braced && text[start] == '{' && IsBraced(type)) {
    const size_t end = ScanBraced(text, start);
    if (end == absl::string_view::npos) {
      return Invalid(container, base + start, "unbalanced nested value");
    }
    *pos = end;
    return ParseText(text.substr(start, end - start), base + start, type, out);
  }
  const absl::string_view token = ReadToken(text, pos, stops);
  if (token.empty()) {
    return Invalid(container, base + start, "expected an element");
  }
  if (absl::EqualsIgnoreCase(token, "null")) {
    out->emplace<std::monostate>();
    return absl::OkStatus();
  }
  return ParseText(token, base + start, type, out);
}

absl::Status ParseList(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out) {
  size_t pos = 0;
  SkipSpace(text, &pos);
  if (pos >= text.size() || text[pos] != '{') {
    return Invalid(type, base + pos, "expected '{'");
  }
  ++pos;
  ListValue list;
  SkipSpace(text, &pos);
  if (pos < text.size() && text[pos] == '}') {
    ++pos;
  } else {
    while (true) {
      SkipSpace(text, &pos);
      list.elements.emplace_back();
      if (absl::Status s = ParseElement(
              text, base, &pos, type, type.element(),
              /*braced=*/type.element().id() == DataType::kList, ",{}\"\\",
              &list.elements.back());
          !s.ok()) {
        return s;
      }
      SkipSpace(text, &pos);
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return Invalid(type, base + pos, "expected ',' or '}'");
    }
  }
  SkipSpace(text, &pos);
  if (pos != text.size()) return Invalid(type, base + pos, "trailing text");
  *out = std::move(list);
  return absl::OkStatus();
}

absl::Status ParseStruct(absl::string_view text, size_t base,
                         const ColumnType& type, Datum* out) {
  size_t pos = 0;
  if (text.empty() || text[0] != '(') {
    return Invalid(type, base, "expected '('");
  }
  ++pos;
  const absl::Span<const StructField> fields = type.fields();
  StructValue value;
  value.fields.resize(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const size_t start = pos;
    if (pos < text.size() && text[pos] == '"') {
      std::string field;
      if (!ReadQuoted(text, &pos, /*doubled_quotes=*/true, &field)) {
        return Invalid(type, base + start, "unterminated quoted field");
      }
      if (absl::Status s =
              ParseText(field, base + start + 1, fields[i].type,
                        &value.fields[i]);
          !s.ok()) {
        return s;
      }
    } else {
      while (pos < text.size() && text[pos] != ',' && text[pos] != ')') ++pos;
      if (pos > start) {  // empty: NULL
        if (absl::Status s =
                ParseText(text.substr(start, pos - start), base + start,
                          fields[i].type, &value.fields[i]);
            !s.ok()) {
          return s;
        }
      }
    }
    const char expected = i + 1 < fields.size() ? ',' : ')';
    if (pos >= text.size() || text[pos] != expected) {
      return Invalid(type, base + pos,
                     absl::StrCat("expected '", std::string(1, expected),
                                  "'"));
    }
    ++pos;
  }
  if (fields.empty()) {
    if (pos >= text.size() || text[pos] != ')') {
      return Invalid(type, base + pos, "expected ')'");
    }
    ++pos;
  }
  if (pos != text.size()) return Invalid(type, base + pos, "trailing text");
  *out = std::move(value);
  return absl::OkStatus();
}

absl::Status ParseMap(absl::string_view text, size_t base,
                      const ColumnType& type, Datum* out) {
  size_t pos = 0;
  SkipSpace(text, &pos);
  if (pos >= text.size() || text[pos] != '{') {
    return Invalid(type, base + pos, "expected '{'");
  }
  ++pos;
  std::vector<MapEntry> entries;
  SkipSpace(text, &pos);
  if (pos < text.size() && text[pos] == '}') {
    ++pos;
  } else {
    while (true) {
      SkipSpace(text, &pos);
      MapEntry entry;
      const size_t key_start = pos;
      if (absl::Status s =
              ParseElement(text, base, &pos, type, type.map_key(),
                           /*braced=*/false, ":,{}\"\\", &entry.key);
          !s.ok()) {
        return s;
      }
      if (IsNull(entry.key)) {
        return Invalid(type, base + key_start, "map keys must not be NULL");
      }
      SkipSpace(text, &pos);
      if (pos >= text.size() || text[pos] != ':') {
        return Invalid(type, base + pos, "expected ':'");
      }
      ++pos;
      SkipSpace(text, &pos);
      if (absl::Status s =
              ParseElement(text, base, &pos, type, type.map_value(),
                           /*braced=*/true, ":,{}\"\\", &entry.value);
          !s.ok()) {
        return s;
      }
      entries.push_back(std::move(entry));
      SkipSpace(text, &pos);
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return Invalid(type, base + pos, "expected ',' or '}'");
    }
  }
  SkipSpace(text, &pos);
  if (pos != text.size()) return Invalid(type, base + pos, "trailing text");
  absl::StatusOr<MapValue> map = MakeMapValue(std::move(entries));
  if (!map.ok()) return Invalid(type, base, map.status().message());
  *out = *std::move(map);
  return absl::OkStatus();
}

absl::Status ParseText(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out) {
  switch (type.id()) {
    case DataType::kList:
      return ParseList(text, base, type, out);
    case DataType::kStruct:
      return ParseStruct(text, base, type, out);
    case DataType::kMap:
      return ParseMap(text, base, type, out);
    default:
      return ParseScalar(text, base, type, out);
  }
}

}  // namespace

std::string FormatFloat64Text(double value) {
  return FormatFloat(value, /*max_fixed_exponent=*/15);
}

std::string FormatFloat32Text(float value) {
  return FormatFloat(value, /*max_fixed_exponent=*/6);
}

std::string FormatDatumText(const Datum& datum, const ColumnType& type) {
  assert(!IsNull(datum) && DatumMatchesColumnType(datum, type));
  if (IsNull(datum)) return "NULL";
  std::string out;
  AppendText(datum, type, &out);
  return out;
}

absl::StatusOr<Datum> ParseDatumText(absl::string_view text,
                                     const ColumnType& type) {
  Datum out;
  if (absl::Status s = ParseText(text, 0, type, &out); !s.ok()) return s;
  return out;
}

}  // namespace backfill
