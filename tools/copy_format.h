// PostgreSQL COPY text format (COPY ... TO STDOUT, the default text format),
// for the `--dump_dir` files of //tools:backfill: `upstream.tsv` and
// `view.tsv` are equal iff `cmp` says so.
//
//   std::string line = FormatCopyRow(row, types);   // "1\tfoo\t\\N"
//   CopyDump dump(dir + "/view.tsv", {"id", "name"},
//                 {DataType::kInt64, DataType::kVarchar});
//   for (...) BACKFILL_RETURN_IF_ERROR(dump.AddRow(row));
//   BACKFILL_RETURN_IF_ERROR(dump.Finish());
//
// Field text: serde/text_format.h's FormatDatumText (the forms are specified
// in serde/FORMAT.md section 7: PostgreSQL's text where PostgreSQL has the
// type, RisingWave's otherwise), then escaped for COPY; NULL is \N. Every
// function takes whole ColumnTypes (a DataType converts to one), so LIST,
// STRUCT and MAP columns are dumped with their parts.
// COPY escapes: backslash -> \\, and \b \f \n \r \t \v for those bytes; other
// bytes (UTF-8 included) verbatim (so BYTEA's \x prefix is written \\x).
// Fields are separated by a tab; a row is one line.
#ifndef TOOLS_COPY_FORMAT_H_
#define TOOLS_COPY_FORMAT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/row.h"

namespace backfill {

// The COPY text of one field, escaped. REQUIRES:
// DatumMatchesColumnType(datum, type) (a DataType converts to a ColumnType;
// nested columns need their whole ColumnType).
std::string FormatCopyDatum(const Datum& datum, const ColumnType& type);

// The fields of `row` joined by tabs, without the newline.
// REQUIRES: row.size() == types.size(), each datum matches its type.
std::string FormatCopyRow(RowView row, absl::Span<const ColumnType> types);

// `text` with the COPY escapes applied (used for field and header text).
std::string EscapeCopyText(absl::string_view text);
// The same, appended to *out.
void AppendCopyEscaped(absl::string_view text, std::string* out);

// Bounds of a CopyDump's memory.
struct CopyDumpOptions {
  // Bytes of formatted row text kept in memory (each line counted with its
  // std::string's size besides its text); when more would be kept, they
  // are sorted and written as a run file beside the dump (`path`.run<N>).
  // Default 16 MiB; at least 1 (then every row is a run of its own).
  size_t memory_budget_bytes = size_t{16} << 20;
  // Run files merged at once (each open with a read buffer); more runs are
  // merged in passes. Default 64; at least 2.
  size_t merge_fan_in = 64;
};

// A dump file written while rows arrive: a header line of column names, then
// one line per row, sorted byte-wise (std::string order = memcmp order), so
// that the same rows in any order give the same bytes. Memory is bounded by
// options.memory_budget_bytes plus merge_fan_in lines, whatever the number
// of rows: an external merge sort through run files beside the dump, which
// Finish merges into `path` and removes.
//
//   CopyDump dump(dir + "/view.tsv", {"id", "name"},
//                 {DataType::kInt64, DataType::kVarchar});
//   for (...) BACKFILL_RETURN_IF_ERROR(dump.AddRow(row));
//   BACKFILL_RETURN_IF_ERROR(dump.Finish());
//
// Errors (AddRow, Finish): NotFound (missing directory), PermissionDenied,
// ResourceExhausted (disk full) or Internal for other I/O errors, naming the
// file. Not thread-safe.
class CopyDump {
 public:
  // REQUIRES: column_names.size() == types.size(); options within range.
  CopyDump(std::string path, std::vector<std::string> column_names,
           std::vector<ColumnType> types, CopyDumpOptions options = {});
  // Removes the run files and the temporary file of an unfinished dump.
  ~CopyDump();
  CopyDump(const CopyDump&) = delete;
  CopyDump& operator=(const CopyDump&) = delete;

  // Formats and keeps `row`, writing a run when the budget is reached.
  // REQUIRES: row.size() == num_columns(), each datum matches its column's
  // type; Finish not called yet.
  absl::Status AddRow(RowView row);

  // Writes the file (through `path`.tmp and a rename, so a reader never
  // sees half a file; an existing file is replaced) and removes the runs.
  // REQUIRES: called once.
  absl::Status Finish();

  size_t num_rows() const { return num_rows_; }
  size_t num_columns() const { return types_.size(); }
  // Run files written so far, and the bytes of row text held in memory (as
  // CopyDumpOptions::memory_budget_bytes counts them).
  size_t num_runs() const { return runs_written_; }
  size_t buffered_bytes() const { return buffered_bytes_; }

 private:
  // Sorts the buffered lines and writes them to a new run file.
  absl::Status Spill();
  // Merges `inputs` (sorted run files) into `output`, after `header` (a
  // line; none if null).
  absl::Status Merge(const std::vector<std::string>& inputs,
                     const std::string& output, const std::string* header);
  std::string NewRunPath();

  const std::string path_;
  const std::vector<std::string> column_names_;
  const std::vector<ColumnType> types_;
  const CopyDumpOptions options_;
  std::vector<std::string> lines_;
  size_t buffered_bytes_ = 0;
  size_t num_rows_ = 0;
  size_t runs_written_ = 0;
  // Run files not yet merged, oldest first.
  std::vector<std::string> runs_;
  // Every file this dump created and has not removed or renamed yet.
  std::vector<std::string> temporary_files_;
};

}  // namespace backfill

#endif  // TOOLS_COPY_FORMAT_H_
