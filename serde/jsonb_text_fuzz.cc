// Fuzzes the JSONB text parser (ParseJsonb): the input is the text.
// Properties: never crash (nesting is bounded by Jsonb::kMaxDepth); errors
// are InvalidArgument; a parsed value prints a canonical text that parses
// back to the same value and prints identically.
#include <cstdint>
#include <cstdio>
#include <string>

#include "serde/jsonb.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view input) {
  absl::StatusOr<Jsonb> value = ParseJsonb(input);
  if (!value.ok()) {
    FuzzCheck(value.status().code() == absl::StatusCode::kInvalidArgument,
              "error is InvalidArgument");
    if (FuzzVerbose()) {
      std::printf("rejected: %s\n", value.status().ToString().c_str());
    }
    return;
  }
  const std::string text = value->ToString();
  if (FuzzVerbose()) std::printf("%s\n", text.c_str());
  absl::StatusOr<Jsonb> again = ParseJsonb(text);
  FuzzCheck(again.ok(), "canonical text parses");
  FuzzCheck(*again == *value, "canonical text parses to the same value");
  FuzzCheck(again->ToString() == text, "canonical text is a fixed point");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
