// The text forms of scalar datums (serde/text_format.h lists them), for
// text_format's LIST, STRUCT and MAP texts and the COPY dumps.
//
//   std::string out;
//   AppendScalarText(Datum(1.5), DataType::kFloat64, &out);   // "1.5"
//   Datum d;
//   absl::Status s = ParseScalarText("1.5", 0, DataType::kFloat64, &d);
#ifndef SERDE_INTERNAL_SCALAR_TEXT_H_
#define SERDE_INTERNAL_SCALAR_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "serde/column_type.h"
#include "serde/datum.h"

namespace backfill {
namespace serde_internal {

// Appends the text of non-NULL scalar `datum` (JSONB included); `type` tells
// VARCHAR from BYTEA. REQUIRES: DatumMatchesType(datum, type), not LIST,
// STRUCT or MAP.
void AppendScalarText(const Datum& datum, DataType type, std::string* out);

// Reads all of `text` as a value of scalar `type` into *out; `base` is the
// offset of `text` in the whole input, for messages.
// Errors: InvalidText(type, base + k, what), also for a nested `type`.
absl::Status ParseScalarText(absl::string_view text, size_t base,
                             const ColumnType& type, Datum* out);

// InvalidArgument "invalid <type> text at offset <offset>: <what>".
absl::Status InvalidText(const ColumnType& type, size_t offset,
                         absl::string_view what);

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_SCALAR_TEXT_H_
