// The value payloads of LIST, STRUCT, MAP and JSONB datums (serde/FORMAT.md
// sections 2.2 and 2.3, never change: persisted), shared by the positional
// and column-aware codecs:
//   LIST: varint element count n, then n x (flag 00 NULL / 01, payload);
//   STRUCT, positional form: per field of the type, flag + payload;
//   STRUCT, column-aware form: varint field count n, then n x (varint field
//     id, varint payload length L, payload; L = 0 is NULL), so that a reader
//     whose STRUCT type has gained or lost fields maps them by id;
//   MAP: varint entry count n, then n x (key payload, flag + value payload),
//     keys strictly ascending;
//   JSONB: varint length, then the canonical text (Jsonb::ToString).
// Elements and fields are any type; a nested STRUCT inside takes the same
// form as its column.
//
//   std::string out;
//   AppendNestedPayload(ListValue{{int64_t{1}}}, ColumnType::List(
//       DataType::kInt64), StructForm::kPositional, &out);   // "01 01 02"
#ifndef SERDE_INTERNAL_NESTED_PAYLOAD_H_
#define SERDE_INTERNAL_NESTED_PAYLOAD_H_

#include <string>

#include "absl/status/status.h"
#include "serde/column_type.h"
#include "serde/datum.h"
#include "serde/internal/value_payload.h"

namespace backfill {
namespace serde_internal {

enum class StructForm { kPositional, kColumnAware };

// True for the types whose payloads are written and read here (LIST,
// STRUCT, MAP, JSONB) rather than by value_payload's fast paths.
bool HasTypedPayload(const ColumnType& type);

// Appends the payload of non-NULL `datum` of `type` (any type: scalars take
// AppendPayload's form). REQUIRES: DatumMatchesColumnType(datum, type).
void AppendTypedPayload(const Datum& datum, const ColumnType& type,
                        StructForm form, std::string* out);

// Reads one payload of `type` (any type) into *out.
// Errors: DataLoss naming the offset and what was expected: a truncated
// payload, a bad flag, a count larger than the bytes left, a column-aware
// field whose payload does not fill its length or whose id appears twice,
// MAP keys not strictly ascending, JSONB text that does not parse or is not
// canonical.
absl::Status ReadTypedPayload(PayloadReader& reader, const ColumnType& type,
                              StructForm form, Datum* out);

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_NESTED_PAYLOAD_H_
