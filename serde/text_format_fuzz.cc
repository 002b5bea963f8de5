// Fuzzes the text input of every type (ParseDatumText), LIST, STRUCT, MAP
// and JSONB included, under input-chosen types (ParseFuzzColumnType with
// value_types, serde/fuzz_layout.h):
//   input = type bytes, then the text.
// Properties: never crash; errors are InvalidArgument; a parsed value
// matches the type, prints a text that parses back to an equal value, and
// that text is a fixed point.
#include <cstdint>
#include <cstdio>
#include <string>

#include "serde/fuzz_layout.h"
#include "serde/text_format.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  std::optional<ColumnType> type =
      ParseFuzzColumnType(&input, 4, /*value_types=*/true);
  if (!type.has_value()) return;
  absl::StatusOr<Datum> value = ParseDatumText(input, *type);
  if (!value.ok()) {
    FuzzCheck(value.status().code() == absl::StatusCode::kInvalidArgument,
              "error is InvalidArgument");
    if (FuzzVerbose()) {
      std::printf("rejected: %s\n", value.status().ToString().c_str());
    }
    return;
  }
  FuzzCheck(!IsNull(*value), "text parses to a value");
  FuzzCheck(DatumMatchesColumnType(*value, *type), "value matches the type");
  const std::string text = FormatDatumText(*value, *type);
  if (FuzzVerbose()) {
    std::printf("%s: %s\n", type->DebugString().c_str(), text.c_str());
  }
  absl::StatusOr<Datum> again = ParseDatumText(text, *type);
  FuzzCheck(again.ok(), "printed text parses");
  FuzzCheck(DatumsEqual(*again, *value), "printed text parses to the value");
  FuzzCheck(FormatDatumText(*again, *type) == text,
            "printed text is a fixed point");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
