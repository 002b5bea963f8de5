// Fuzzes PositionalCodec::Decode with arbitrary bytes under an input-chosen
// schema (serde/fuzz_layout.h). Properties: never crash; errors are DataLoss;
// a value that decodes re-encodes to exactly the same bytes, and DecodeInto
// and DecodeAppend agree with Decode (DecodeAppend leaving its columns as
// they were on an error).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "serde/fuzz_layout.h"
#include "serde/positional_codec.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  absl::string_view bytes;
  std::optional<FuzzLayout> layout = ParseFuzzLayout(input, &bytes);
  if (!layout.has_value()) return;
  // Positional rows do not use column ids: make them unique.
  for (size_t c = 0; c < layout->schema.size(); ++c) {
    layout->schema[c].column_id = static_cast<int32_t>(c);
  }
  absl::StatusOr<std::unique_ptr<PositionalCodec>> codec =
      PositionalCodec::Create(layout->schema);
  FuzzCheck(codec.ok(), "schema with unique ids is valid");
  absl::StatusOr<Row> row = (*codec)->Decode(bytes);
  Row reused = {std::string("stale"), int64_t{1}};
  const absl::Status into = (*codec)->DecodeInto(bytes, &reused);
  FuzzCheck(row.ok() == into.ok(), "Decode and DecodeInto agree on success");
  std::vector<std::vector<Datum>> columns(layout->schema.size());
  for (auto& column : columns) column.push_back(Datum(int64_t{1}));
  const absl::Status appended =
      (*codec)->DecodeAppend(bytes, absl::MakeSpan(columns));
  FuzzCheck(appended == row.status(), "Decode and DecodeAppend agree");
  for (size_t c = 0; c < columns.size(); ++c) {
    FuzzCheck(columns[c].size() == (row.ok() ? 2u : 1u),
              "DecodeAppend appends one datum per column, or none");
    if (row.ok()) {
      FuzzCheck(DatumsEqual(columns[c][1], (*row)[c]),
                "DecodeAppend appends the decoded datum");
    }
  }
  if (!row.ok()) {
    FuzzCheck(row.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    return;
  }
  FuzzCheck(RowsEqual(*row, reused), "Decode and DecodeInto agree on the row");
  std::string again;
  (*codec)->Encode(*row, &again);
  FuzzCheck(again == bytes, "decoded value re-encodes to the same bytes");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
