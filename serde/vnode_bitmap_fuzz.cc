// Fuzzes VnodeBitmap::Deserialize with arbitrary bytes. Properties: never
// crash; errors are DataLoss; a bitmap that deserialises serialises to the
// same bytes, and its count, iteration and Test agree.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "serde/vnode_bitmap.h"

namespace backfill {
namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "vnode_bitmap_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

void FuzzOne(absl::string_view bytes) {
  absl::StatusOr<VnodeBitmap> bitmap = VnodeBitmap::Deserialize(bytes);
  if (!bitmap.ok()) {
    Check(bitmap.status().code() == absl::StatusCode::kDataLoss,
          "error is DataLoss");
    return;
  }
  Check(bitmap->Serialize() == bytes, "re-serialises to the same bytes");
  int iterated = 0;
  int previous = -1;
  for (VirtualNode v : bitmap->set_vnodes()) {
    Check(static_cast<int>(v) > previous, "iteration ascends");
    Check(bitmap->Test(v), "iterated vnodes are set");
    previous = v;
    ++iterated;
  }
  Check(iterated == bitmap->Count(), "iteration visits Count() vnodes");
  const VnodeBitmap all = VnodeBitmap::All(bitmap->vnode_count());
  Check(VnodeBitmap::Union(*bitmap, all) == all, "x | all == all");
  Check(VnodeBitmap::Difference(*bitmap, *bitmap).None(), "x - x is empty");
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
