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

}  // namespace backfill
