#include "tools/copy_format.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "third_party/absl_extras/status_macros.h"

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
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
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

namespace {

// A file written line by line through stdio's buffer; the first error is
// kept and reported by Close.
class LineFile {
 public:
  LineFile() = default;
  ~LineFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  absl::Status Create(const std::string& path) {
    path_ = path;
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) return IoError("create", path, errno);
    return absl::OkStatus();
  }
  // `line` then '\n'.
  void Write(absl::string_view line) {
    if (!status_.ok()) return;
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
        std::fputc('\n', file_) == EOF) {
      status_ = IoError("write", path_, errno);
    }
  }
  absl::Status Close() {
    std::FILE* file = file_;
    file_ = nullptr;
    if (std::fclose(file) != 0 && status_.ok()) {
      status_ = IoError("close", path_, errno);
    }
    return status_;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  absl::Status status_;
};

// A sorted run being read line by line.
class RunReader {
 public:
  ~RunReader() {
    std::free(buffer_);
    if (file_ != nullptr) std::fclose(file_);
  }
  absl::Status Open(const std::string& path) {
    path_ = path;
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) return IoError("open", path, errno);
    return absl::OkStatus();
  }
  // Reads the next line into line(); false at the end or on error (status).
  bool Next() {
    errno = 0;
    const ssize_t length = ::getline(&buffer_, &capacity_, file_);
    if (length < 0) {
      if (errno != 0) status_ = IoError("read", path_, errno);
      return false;
    }
    line_ = absl::string_view(buffer_, static_cast<size_t>(length) - 1);
    return true;
  }
  absl::string_view line() const { return line_; }
  const absl::Status& status() const { return status_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
  absl::string_view line_;
  absl::Status status_;
};

}  // namespace

CopyDump::CopyDump(std::string path, std::vector<std::string> column_names,
                   std::vector<DataType> types, CopyDumpOptions options)
    : path_(std::move(path)),
      column_names_(std::move(column_names)),
      types_(std::move(types)),
      options_(options) {
  assert(column_names_.size() == types_.size());
  assert(options_.memory_budget_bytes >= 1 && options_.merge_fan_in >= 2);
}

CopyDump::~CopyDump() {
  for (const std::string& file : temporary_files_) std::remove(file.c_str());
}

absl::Status CopyDump::AddRow(RowView row) {
  std::string line = FormatCopyRow(row, types_);
  // The line's bytes and what holding it costs besides.
  const size_t cost = line.size() + sizeof(std::string);
  if (buffered_bytes_ + cost > options_.memory_budget_bytes &&
      !lines_.empty()) {
    BACKFILL_RETURN_IF_ERROR(Spill());
  }
  buffered_bytes_ += cost;
  lines_.push_back(std::move(line));
  ++num_rows_;
  return absl::OkStatus();
}

std::string CopyDump::NewRunPath() {
  std::string run = absl::StrCat(path_, ".run", runs_written_++);
  temporary_files_.push_back(run);
  return run;
}

absl::Status CopyDump::Spill() {
  std::sort(lines_.begin(), lines_.end());
  const std::string run = NewRunPath();
  LineFile file;
  BACKFILL_RETURN_IF_ERROR(file.Create(run));
  for (const std::string& line : lines_) file.Write(line);
  BACKFILL_RETURN_IF_ERROR(file.Close());
  runs_.push_back(run);
  lines_.clear();
  lines_.shrink_to_fit();
  buffered_bytes_ = 0;
  return absl::OkStatus();
}

absl::Status CopyDump::Merge(const std::vector<std::string>& inputs,
                             const std::string& output,
                             const std::string* header) {
  std::vector<std::unique_ptr<RunReader>> readers;
  // (line, reader) with the smallest line on top; ties by reader order.
  auto later = [&readers](size_t a, size_t b) {
    const int order = readers[a]->line().compare(readers[b]->line());
    return order != 0 ? order > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (const std::string& input : inputs) {
    readers.push_back(std::make_unique<RunReader>());
    BACKFILL_RETURN_IF_ERROR(readers.back()->Open(input));
    if (readers.back()->Next()) heap.push(readers.size() - 1);
    BACKFILL_RETURN_IF_ERROR(readers.back()->status());
  }
  LineFile file;
  BACKFILL_RETURN_IF_ERROR(file.Create(output));
  if (header != nullptr) file.Write(*header);
  while (!heap.empty()) {
    const size_t top = heap.top();
    heap.pop();
    file.Write(readers[top]->line());
    if (readers[top]->Next()) heap.push(top);
    BACKFILL_RETURN_IF_ERROR(readers[top]->status());
  }
  return file.Close();
}

absl::Status CopyDump::Finish() {
  std::string header;
  for (size_t i = 0; i < column_names_.size(); ++i) {
    if (i > 0) header += '\t';
    header += EscapeCopyText(column_names_[i]);
  }
  const std::string temp_path = path_ + ".tmp";
  temporary_files_.push_back(temp_path);
  if (runs_.empty()) {
    std::sort(lines_.begin(), lines_.end());
    LineFile file;
    BACKFILL_RETURN_IF_ERROR(file.Create(temp_path));
    file.Write(header);
    for (const std::string& line : lines_) file.Write(line);
    BACKFILL_RETURN_IF_ERROR(file.Close());
  } else {
    if (!lines_.empty()) BACKFILL_RETURN_IF_ERROR(Spill());
    // Passes of merge_fan_in runs into one until one final merge is left.
    while (runs_.size() > options_.merge_fan_in) {
      const std::vector<std::string> group(
          runs_.begin(), runs_.begin() + options_.merge_fan_in);
      runs_.erase(runs_.begin(), runs_.begin() + options_.merge_fan_in);
      const std::string merged = NewRunPath();
      BACKFILL_RETURN_IF_ERROR(Merge(group, merged, nullptr));
      for (const std::string& run : group) std::remove(run.c_str());
      runs_.push_back(merged);
    }
    BACKFILL_RETURN_IF_ERROR(Merge(runs_, temp_path, &header));
  }
  lines_.clear();
  if (std::rename(temp_path.c_str(), path_.c_str()) != 0) {
    return IoError("rename to", path_, errno);
  }
  for (const std::string& file : temporary_files_) {
    if (file != temp_path) std::remove(file.c_str());  // It is the dump now.
  }
  temporary_files_.clear();
  runs_.clear();
  return absl::OkStatus();
}

}  // namespace backfill
