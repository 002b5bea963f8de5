#include "tools/copy_format.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "serde/text_format.h"

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
  return FormatFloat64Text(value);
}

std::string FormatCopyFloat32(float value) {
  return FormatFloat32Text(value);
}

std::string FormatCopyDatum(const Datum& datum, const ColumnType& type) {
  assert(DatumMatchesColumnType(datum, type));
  if (IsNull(datum)) return "\\N";
  return EscapeCopyText(FormatDatumText(datum, type));
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
