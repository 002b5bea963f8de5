// Fuzzes ColumnAwareCodec::Decode with arbitrary bytes under an input-chosen
// reader schema (serde/fuzz_layout.h; its column ids may differ from the ids
// in the row, exercising added and dropped columns). Properties: never crash;
// errors are DataLoss; a decoded row re-encodes (under the reader's schema)
// to bytes that decode to the same row and re-encode identically.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "serde/column_aware_codec.h"
#include "serde/fuzz_layout.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  absl::string_view bytes;
  std::optional<FuzzLayout> layout = ParseFuzzLayout(input, &bytes);
  if (!layout.has_value()) return;
  absl::StatusOr<std::unique_ptr<ColumnAwareCodec>> codec =
      ColumnAwareCodec::Create(layout->schema);
  if (!codec.ok()) return;  // duplicate ids in the layout
  absl::StatusOr<Row> row = (*codec)->Decode(bytes);
  if (!row.ok()) {
    FuzzCheck(row.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    return;
  }
  FuzzCheck(row->size() == layout->schema.size(),
            "one datum per reader column");
  FuzzCheck(ValidateRow(layout->schema, *row).ok(),
            "decoded datums match their types");
  std::string again;
  (*codec)->Encode(*row, &again);
  absl::StatusOr<Row> row_again = (*codec)->Decode(again);
  FuzzCheck(row_again.ok(), "re-encoded row decodes");
  FuzzCheck(RowsEqual(*row, *row_again),
            "re-encoded row decodes to the same row");
  std::string third;
  (*codec)->Encode(*row_again, &third);
  FuzzCheck(third == again, "encoding is stable");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
