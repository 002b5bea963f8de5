// PostgreSQL COPY text format (COPY ... TO STDOUT, the default text format),
// for the `--dump_dir` files of //tools:backfill: `upstream.tsv` and
// `view.tsv` are equal iff `cmp` says so.
//
//   std::string line = FormatCopyRow(row, types);   // "1\tfoo\t\\N"
//   CopyDump dump({"id", "name"}, {DataType::kInt64, DataType::kVarchar});
//   for (...) dump.AddRow(row);
//   BACKFILL_RETURN_IF_ERROR(dump.WriteFile(dir + "/view.tsv"));
//
// Field text: serde/text_format.h's (FormatDatumText: RisingWave's text,
// PostgreSQL's where PostgreSQL has the type; every type, LIST, STRUCT, MAP
// and JSONB included), then escaped for COPY:
//   NULL                 \N
//   BOOLEAN              t, f
//   INT16/INT32/INT64    decimal
//   FLOAT32/FLOAT64      the shortest text that round-trips (float4 digits for
//                        FLOAT32), in PostgreSQL's layout: fixed notation for
//                        decimal exponents in [-4, 15) (FLOAT32: [-4, 6)),
//                        else d.ddde+XX; "-0", "NaN", "Infinity", "-Infinity"
//   DECIMAL              Decimal::ToString: no trailing zeros, "NaN", ...
//   VARCHAR              the bytes, escaped
//   BYTEA                \x then lowercase hex; the COPY escape doubles the
//                        backslash: \\x0aff
//   DATE                 YYYY-MM-DD (proleptic Gregorian; "YYYY-MM-DD BC"
//                        before year 1, as PostgreSQL)
//   TIME                 HH:MM:SS[.ffffff], fraction without trailing zeros
//   TIMESTAMP            YYYY-MM-DD HH:MM:SS[.ffffff] (same fraction; BC too)
// COPY escapes: backslash -> \\, and \b \f \n \r \t \v for those bytes; other
// bytes (UTF-8 included) verbatim. Fields are separated by a tab; a row is
// one line.
#ifndef TOOLS_COPY_FORMAT_H_
#define TOOLS_COPY_FORMAT_H_

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
std::string FormatCopyRow(RowView row, absl::Span<const DataType> types);

// `text` with the COPY escapes applied (used for field and header text).
std::string EscapeCopyText(absl::string_view text);

// The PostgreSQL text of a double / float (before COPY escaping, which never
// changes it). Exposed for tests.
std::string FormatCopyFloat64(double value);
std::string FormatCopyFloat32(float value);

// A dump file being collected: a header line of column names, then one line
// per row, written sorted byte-wise (std::string order = memcmp order).
// Not thread-safe.
class CopyDump {
 public:
  // REQUIRES: column_names.size() == types.size().
  CopyDump(std::vector<std::string> column_names, std::vector<DataType> types);

  // Formats and keeps `row`. REQUIRES: row.size() == num_columns(), each
  // datum matches its column's type.
  void AddRow(RowView row);

  size_t num_rows() const { return lines_.size(); }
  size_t num_columns() const { return types_.size(); }

  // The file's contents: the header line, then the sorted row lines, each
  // ending in '\n'. Sorts the kept rows (cheap when already sorted).
  std::string Contents();

  // Writes Contents() to `path` (through `path`.tmp and a rename, so a
  // reader never sees half a file). Errors: NotFound (missing directory),
  // PermissionDenied, or Internal for other I/O errors, naming the path.
  absl::Status WriteFile(absl::string_view path);

 private:
  void SortLines();

  std::vector<std::string> column_names_;
  std::vector<DataType> types_;
  std::vector<std::string> lines_;
  bool sorted_ = true;
};

// Writes a whole dump at once: CopyDump over `rows`, then WriteFile(path).
absl::Status WriteCopyDump(absl::string_view path,
                           absl::Span<const std::string> column_names,
                           absl::Span<const DataType> types,
                           absl::Span<const Row> rows);

}  // namespace backfill

#endif  // TOOLS_COPY_FORMAT_H_
