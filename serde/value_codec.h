// Value-row codecs: the ValueRowCodec interface (serde/value_row_codec.h) and
// a factory for its two implementations, PositionalCodec (RisingWave's
// BasicSerde) and ColumnAwareCodec (ColumnAwareSerde).
//
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ValueRowCodec> codec,
//       MakeValueRowCodec(ValueRowEncoding::kPositional, schema));
//   std::string bytes; codec->Encode(row, &bytes);
#ifndef SERDE_VALUE_CODEC_H_
#define SERDE_VALUE_CODEC_H_

#include <memory>

#include "absl/status/statusor.h"
#include "serde/column_aware_codec.h"
#include "serde/positional_codec.h"
#include "serde/schema.h"
#include "serde/value_row_codec.h"

namespace backfill {

// A codec of `encoding` for rows of `schema` (column-aware: no defaults, so
// added columns decode as NULL; use ColumnAwareCodec::Create for defaults).
// Errors: InvalidArgument for an invalid schema or unknown encoding.
absl::StatusOr<std::unique_ptr<ValueRowCodec>> MakeValueRowCodec(
    ValueRowEncoding encoding, Schema schema);

}  // namespace backfill

#endif  // SERDE_VALUE_CODEC_H_
