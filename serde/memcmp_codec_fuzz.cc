// Fuzzes DecodeKey/DecodeKeyPrefix with arbitrary bytes under an input-chosen
// key layout (serde/fuzz_layout.h). Properties: never crash; errors are
// DataLoss; a key that decodes re-encodes to exactly the same bytes
// (canonical), and decoding any prefix of the columns consumes exactly that
// column prefix's encoding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "serde/fuzz_layout.h"
#include "serde/memcmp_codec.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  absl::string_view bytes;
  std::optional<FuzzLayout> layout = ParseFuzzLayout(input, &bytes);
  if (!layout.has_value()) return;
  absl::StatusOr<Row> row = DecodeKey(bytes, layout->types, layout->orders);
  if (!row.ok()) {
    FuzzCheck(row.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    return;
  }
  std::string again;
  EncodeKey(*row, layout->types, layout->orders, &again);
  FuzzCheck(again == bytes, "decoded key re-encodes to the same bytes");
  for (size_t k = 0; k <= layout->types.size(); ++k) {
    Row prefix;
    absl::StatusOr<size_t> consumed = DecodeKeyPrefix(
        bytes, absl::Span<const DataType>(layout->types).first(k),
        absl::Span<const OrderType>(layout->orders).first(k), &prefix);
    FuzzCheck(consumed.ok(), "a prefix of a valid key decodes");
    std::string prefix_bytes;
    EncodeKey(prefix, absl::Span<const DataType>(layout->types).first(k),
              absl::Span<const OrderType>(layout->orders).first(k),
              &prefix_bytes);
    FuzzCheck(*consumed == prefix_bytes.size() &&
                  bytes.substr(0, *consumed) == prefix_bytes,
              "prefix decode consumes exactly the prefix encoding");
  }
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
