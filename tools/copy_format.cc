#include "tools/copy_format.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "serde/text_format.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

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

void AppendCopyEscaped(absl::string_view text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\v':
        out->append("\\v");
        break;
      default:
        out->push_back(c);
    }
  }
}

std::string EscapeCopyText(absl::string_view text) {
  std::string out;
  AppendCopyEscaped(text, &out);
  return out;
}

namespace {

// Appends the COPY text of one field to *out; *scratch is reused for the
// unescaped text.
void AppendCopyDatum(const Datum& datum, const ColumnType& type,
                     std::string* scratch, std::string* out) {
  assert(DatumMatchesColumnType(datum, type));
  if (IsNull(datum)) {
    out->append("\\N");
    return;
  }
  scratch->clear();
  AppendDatumText(datum, type, scratch);
  AppendCopyEscaped(*scratch, out);
}

}  // namespace

std::string FormatCopyDatum(const Datum& datum, const ColumnType& type) {
  std::string scratch;
  std::string out;
  AppendCopyDatum(datum, type, &scratch, &out);
  return out;
}

std::string FormatCopyRow(RowView row, absl::Span<const ColumnType> types) {
  assert(row.size() == types.size());
  std::string line;
  std::string scratch;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += '\t';
    AppendCopyDatum(row[i], types[i], &scratch, &line);
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
                   std::vector<ColumnType> types, CopyDumpOptions options)
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
