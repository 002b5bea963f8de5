#include "storage/internal/epoch_pin_rows.h"

#include <cstdint>

#include "absl/base/internal/endian.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace storage_internal {

std::string EncodePinnedEpoch(Epoch epoch) {
  std::string value(sizeof(uint64_t), '\0');
  absl::big_endian::Store64(value.data(), epoch.value());
  return value;
}

absl::Status ForEachPinnedEpoch(
    StateStoreIterator& it,
    const std::function<void(absl::string_view owner, Epoch epoch)>& visit) {
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    if (it.value().size() != sizeof(uint64_t)) {
      return absl::DataLossError(absl::StrCat(
          "the epoch pin of owner '", absl::CHexEscape(it.key()), "' is ",
          it.value().size(), " bytes, not an 8-byte epoch"));
    }
    visit(it.key(), Epoch(absl::big_endian::Load64(it.value().data())));
  }
  return it.status();
}

}  // namespace storage_internal
}  // namespace backfill
