#include "tools/copy_format.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace backfill {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// PostgreSQL's layout of the shortest round-trip digits (src/common/d2s.c and
// f2s.c): fixed notation iff -4 <= exponent < max_fixed_exponent.
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
  const int exponent = std::stoi(scientific.substr(e_pos + 1));
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

// "YYYY-MM-DD"; `bc` is set for years before 1 (PostgreSQL appends " BC"
// after the whole value).
std::string FormatDays(int64_t days, bool& bc) {
  // Howard Hinnant's civil_from_days.
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t year = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  if (month <= 2) ++year;
  bc = year <= 0;
  if (bc) year = 1 - year;
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
  const int64_t of_day = micros - days * kMicrosPerDay;
  bool bc = false;
  std::string out = FormatDays(days, bc);
  out += ' ';
  out += FormatTimeOfDay(of_day);
  if (bc) out += " BC";
  return out;
}

absl::Status IoError(absl::string_view what, absl::string_view path,
                     int error) {
  const std::string message =
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace

std::string EscapeCopyText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
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
      case '\v':
        out += "\\v";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FormatCopyFloat64(double value) {
  return FormatFloat(value, /*max_fixed_exponent=*/15);
}

std::string FormatCopyFloat32(float value) {
  return FormatFloat(value, /*max_fixed_exponent=*/6);
}

std::string FormatCopyDatum(const Datum& datum, DataType type) {
  assert(DatumMatchesType(datum, type));
  switch (datum.index()) {
    case 0:
      return "\\N";
    case 1:
      return std::get<bool>(datum) ? "t" : "f";
    case 2:
      return absl::StrCat(std::get<int16_t>(datum));
    case 3:
      return absl::StrCat(std::get<int32_t>(datum));
    case 4:
      return absl::StrCat(std::get<int64_t>(datum));
    case 5:
      return FormatCopyFloat32(std::get<float>(datum));
    case 6:
      return FormatCopyFloat64(std::get<double>(datum));
    case 7:
      return std::get<Decimal>(datum).ToString();
    case 8: {
      const std::string& bytes = std::get<std::string>(datum);
      if (type != DataType::kBytea) return EscapeCopyText(bytes);
      static constexpr char kHex[] = "0123456789abcdef";
      std::string out = "\\\\x";  // "\x", with the backslash escaped
      out.reserve(3 + 2 * bytes.size());
      for (unsigned char c : bytes) {
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
      }
      return out;
    }
    case 9: {
      bool bc = false;
      std::string out = FormatDays(std::get<Date>(datum).days, bc);
      if (bc) out += " BC";
      return out;
    }
    case 10:
      return FormatTimeOfDay(std::get<TimeOfDay>(datum).micros);
    case 11:
      return FormatTimestamp(std::get<Timestamp>(datum).micros);
  }
  assert(false && "unknown Datum alternative");
  return "\\N";
}

std::string FormatCopyRow(RowView row, absl::Span<const DataType> types) {
  assert(row.size() == types.size());
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += '\t';
    line += FormatCopyDatum(row[i], types[i]);
  }
  return line;
}

CopyDump::CopyDump(std::vector<std::string> column_names,
                   std::vector<DataType> types)
    : column_names_(std::move(column_names)), types_(std::move(types)) {
  assert(column_names_.size() == types_.size());
}

void CopyDump::AddRow(RowView row) {
  std::string line = FormatCopyRow(row, types_);
  if (!lines_.empty() && line < lines_.back()) sorted_ = false;
  lines_.push_back(std::move(line));
}

void CopyDump::SortLines() {
  if (!sorted_) {
    std::sort(lines_.begin(), lines_.end());
    sorted_ = true;
  }
}

std::string CopyDump::Contents() {
  SortLines();
  std::string out;
  for (size_t i = 0; i < column_names_.size(); ++i) {
    if (i > 0) out += '\t';
    out += EscapeCopyText(column_names_[i]);
  }
  out += '\n';
  for (const std::string& line : lines_) {
    out += line;
    out += '\n';
  }
  return out;
}

absl::Status CopyDump::WriteFile(absl::string_view path) {
  const std::string contents = Contents();
  const std::string final_path(path);
  const std::string temp_path = final_path + ".tmp";
  std::FILE* file = std::fopen(temp_path.c_str(), "wb");
  if (file == nullptr) return IoError("create", temp_path, errno);
  const size_t written = std::fwrite(contents.data(), 1, contents.size(), file);
  const int write_error = errno;
  if (written != contents.size()) {
    std::fclose(file);
    std::remove(temp_path.c_str());
    return IoError("write", temp_path, write_error);
  }
  if (std::fclose(file) != 0) {
    const int error = errno;
    std::remove(temp_path.c_str());
    return IoError("close", temp_path, error);
  }
  if (std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp_path.c_str());
    return IoError("rename to", final_path, error);
  }
  return absl::OkStatus();
}

absl::Status WriteCopyDump(absl::string_view path,
                           absl::Span<const std::string> column_names,
                           absl::Span<const DataType> types,
                           absl::Span<const Row> rows) {
  CopyDump dump(
      std::vector<std::string>(column_names.begin(), column_names.end()),
      std::vector<DataType>(types.begin(), types.end()));
  for (const Row& row : rows) dump.AddRow(row);
  return dump.WriteFile(path);
}

}  // namespace backfill
