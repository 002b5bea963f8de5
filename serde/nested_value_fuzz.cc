// Fuzzes the value codecs' LIST and STRUCT payloads (internal/nested_payload)
// under input-chosen nested column types (ParseFuzzColumnType in
// serde/fuzz_layout.h):
//   input = writer type bytes, reader type bytes, one codec byte (even:
//   positional, with the writer's type; odd: column-aware, with the reader's
//   type, which may differ: STRUCT fields added and dropped), value bytes.
// Properties: never crash; errors are DataLoss; a decoded row matches the
// schema, and re-encodes to bytes that decode to the same row and re-encode
// identically.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "serde/column_aware_codec.h"
#include "serde/fuzz_layout.h"
#include "serde/positional_codec.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  std::optional<ColumnType> writer =
      ParseFuzzColumnType(&input, 4, /*value_types=*/false);
  if (!writer.has_value()) return;
  std::optional<ColumnType> reader =
      ParseFuzzColumnType(&input, 4, /*value_types=*/false);
  if (!reader.has_value() || input.empty()) return;
  const bool column_aware = (static_cast<uint8_t>(input[0]) & 1) != 0;
  const absl::string_view bytes = input.substr(1);
  const Schema schema = {{"c", column_aware ? *reader : *writer, 1}};
  std::unique_ptr<ValueRowCodec> codec;
  if (column_aware) {
    codec = *ColumnAwareCodec::Create(schema);
  } else {
    codec = *PositionalCodec::Create(schema);
  }
  absl::StatusOr<Row> row = codec->Decode(bytes);
  if (!row.ok()) {
    FuzzCheck(row.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    if (FuzzVerbose()) {
      std::printf("rejected: %s\n", row.status().ToString().c_str());
    }
    return;
  }
  if (FuzzVerbose()) {
    std::printf("%s: %s\n", schema[0].type.DebugString().c_str(),
                RowDebugString(*row).c_str());
  }
  FuzzCheck(ValidateRow(schema, *row).ok(), "decoded row matches the schema");
  std::string again;
  codec->Encode(*row, &again);
  absl::StatusOr<Row> row_again = codec->Decode(again);
  FuzzCheck(row_again.ok(), "re-encoded row decodes");
  FuzzCheck(RowsEqual(*row, *row_again), "re-encoded row decodes the same");
  std::string third;
  codec->Encode(*row_again, &third);
  FuzzCheck(third == again, "encoding is stable");
  if (!column_aware) FuzzCheck(again == bytes, "positional is canonical");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
