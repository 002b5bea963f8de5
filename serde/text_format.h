// Text forms of datums, as RisingWave prints them to clients (PostgreSQL's
// output forms where PostgreSQL has the type), and their input: what the
// COPY dumps (tools/copy_format) compare, and what tests and tools read back.
//
//   std::string text = FormatDatumText(ListValue{{int32_t{1}, Datum()}},
//                                      ColumnType::List(DataType::kInt32));
//                                                          // "{1,NULL}"
//   absl::StatusOr<Datum> back =
//       ParseDatumText(text, ColumnType::List(DataType::kInt32));
//
// Forms (FORMAT.md section 7):
//   BOOLEAN t / f; integers, SERIAL, INT256 decimal; FLOAT32 / FLOAT64 the
//   shortest text that round-trips, in PostgreSQL's layout (fixed notation
//   for decimal exponents in [-4, 15), FLOAT32 [-4, 6), else d.ddde+XX),
//   "NaN", "Infinity", "-Infinity", "-0"; DECIMAL Decimal::ToString;
//   VARCHAR the text; BYTEA \x and lowercase hex; DATE YYYY-MM-DD; TIME
//   HH:MM:SS[.ffffff] (no trailing zeros); TIMESTAMP date and time;
//   " BC" after the value before year 1; TIMESTAMPTZ, INTERVAL as
//   timestamptz.h / interval.h; JSONB its canonical text (jsonb.h).
//   LIST  {e1,e2,...}: NULL elements NULL; an element is double-quoted
//         (with \" and \\) when its text is empty, is "null" in any case, or
//         holds " \ , { } or white space; LIST elements are never quoted
//         ({{1,2},{}}). PostgreSQL's array_out, as RisingWave.
//   STRUCT (f1,f2,...): a NULL field is empty; a field is double-quoted
//         (with "" and \\) when its text is empty or holds " \ , ( ) or
//         white space. PostgreSQL's record_out, as RisingWave.
//   MAP   {k1:v1,k2:v2,...} in key order; a NULL value is NULL. RisingWave
//         writes keys and values unquoted; here a key or scalar value is
//         double-quoted as a LIST element is (and also when it holds ':'),
//         so that every map reads back; LIST, MAP and STRUCT values are
//         unquoted, as RisingWave writes them. Where RisingWave's text is
//         unambiguous the two are the same.
//
// Thread-safety: pure functions.
#ifndef SERDE_TEXT_FORMAT_H_
#define SERDE_TEXT_FORMAT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/column_type.h"
#include "serde/datum.h"

namespace backfill {

// The text of non-NULL `datum` of `type`.
// REQUIRES: !IsNull(datum) and DatumMatchesColumnType(datum, type) (assert;
// a release build returns "NULL" for a NULL datum).
std::string FormatDatumText(const Datum& datum, const ColumnType& type);

// FormatDatumText appended to *out (for writers that reuse one buffer).
// REQUIRES: as FormatDatumText.
void AppendDatumText(const Datum& datum, const ColumnType& type,
                     std::string* out);

// Reads the text of a non-NULL value of `type` (what FormatDatumText writes;
// also "true"/"false" for BOOLEAN, a leading '+' for numbers, upper-case
// hex, white space around LIST and MAP elements, a MAP's entries in any
// order, the inputs ParseTimestamptz / ParseInterval / ParseJsonb take;
// TIMESTAMP takes ParseTimestamptz's input and ignores its zone, as
// PostgreSQL's timestamp without time zone).
// FormatDatumText(ParseDatumText(t)) is a fixed point, and
// ParseDatumText(FormatDatumText(d)) is DatumsEqual to d.
// REQUIRES: ValidateColumnType(type).ok().
// Errors: InvalidArgument "invalid <type> text at offset N: ..." for text
// that is not such a value (out of range, malformed, trailing text, a MAP
// with a duplicate key).
absl::StatusOr<Datum> ParseDatumText(absl::string_view text,
                                     const ColumnType& type);

}  // namespace backfill

#endif  // SERDE_TEXT_FORMAT_H_
