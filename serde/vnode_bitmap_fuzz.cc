// Fuzzes VnodeBitmap::Deserialize with arbitrary bytes. Properties: never
// crash; errors are DataLoss; a bitmap that deserialises serialises to the
// same bytes, and its count, iteration and Test agree.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "serde/vnode_bitmap.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

void FuzzOne(absl::string_view bytes) {
  absl::StatusOr<VnodeBitmap> bitmap = VnodeBitmap::Deserialize(bytes);
  if (!bitmap.ok()) {
    FuzzCheck(bitmap.status().code() == absl::StatusCode::kDataLoss,
              "error is DataLoss");
    return;
  }
  FuzzCheck(bitmap->Serialize() == bytes, "re-serialises to the same bytes");
  int iterated = 0;
  int previous = -1;
  for (VirtualNode v : bitmap->set_vnodes()) {
    FuzzCheck(static_cast<int>(v) > previous, "iteration ascends");
    FuzzCheck(bitmap->Test(v), "iterated vnodes are set");
    previous = v;
    ++iterated;
  }
  FuzzCheck(iterated == bitmap->Count(), "iteration visits Count() vnodes");
  const VnodeBitmap all = VnodeBitmap::All(bitmap->vnode_count());
  FuzzCheck(VnodeBitmap::Union(*bitmap, all) == all, "x | all == all");
  FuzzCheck(VnodeBitmap::Difference(*bitmap, *bitmap).None(), "x - x is empty");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
