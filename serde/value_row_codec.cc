#include "serde/value_row_codec.h"

namespace backfill {

absl::string_view ValueRowEncodingName(ValueRowEncoding encoding) {
  switch (encoding) {
    case ValueRowEncoding::kPositional:
      return "POSITIONAL";
    case ValueRowEncoding::kColumnAware:
      return "COLUMN_AWARE";
  }
  return "INVALID";
}

absl::Status ValueRowCodec::DecodeAppend(
    absl::string_view bytes, absl::Span<std::vector<Datum>> columns) const {
  absl::StatusOr<Row> row = Decode(bytes);
  if (!row.ok()) return row.status();
  MoveRowIntoColumns(*row, columns);
  return absl::OkStatus();
}

}  // namespace backfill
