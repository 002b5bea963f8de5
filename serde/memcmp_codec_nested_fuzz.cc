// Fuzzes DecodeKeyDatum with arbitrary bytes under an input-chosen nested
// column type (ParseFuzzColumnType in serde/fuzz_layout.h: LISTs and STRUCTs
// of any scalar type, depth <= 4) and order:
//   input = type bytes, one order byte (kAllOrderTypes[b % 4]), key bytes.
// Properties: never crash; errors are DataLoss; a datum that decodes matches
// its type and re-encodes to exactly the bytes it consumed (canonical).
#include <cstdint>
#include <cstdio>
#include <string>

#include "serde/fuzz_layout.h"
#include "serde/memcmp_codec.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  std::optional<ColumnType> type =
      ParseFuzzColumnType(&input, 4, /*value_types=*/false);
  if (!type.has_value() || input.empty()) return;
  const OrderType order = kAllOrderTypes[static_cast<uint8_t>(input[0]) % 4];
  const absl::string_view bytes = input.substr(1);
  Datum datum;
  absl::StatusOr<size_t> consumed = DecodeKeyDatum(bytes, *type, order, &datum);
  if (!consumed.ok()) {
    FuzzCheck(consumed.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    if (FuzzVerbose())
      std::printf("rejected: %s\n", consumed.status().ToString().c_str());
    return;
  }
  if (FuzzVerbose()) {
    std::printf("%s: %s\n", type->DebugString().c_str(),
                DatumDebugString(datum).c_str());
  }
  FuzzCheck(*consumed <= bytes.size(), "consumes at most the input");
  FuzzCheck(DatumMatchesColumnType(datum, *type),
            "decoded datum matches its type");
  std::string again;
  EncodeKeyDatum(datum, *type, order, &again);
  FuzzCheck(again == bytes.substr(0, *consumed),
            "decoded datum re-encodes to the bytes it consumed");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
