// The persisted form of the state store's epoch pins (storage/FORMAT.md,
// "Epoch pins"): rows of the reserved table kEpochPinTableId, vnode 0, the
// owner's name as the pk and the pinned epoch as the value, 8 bytes
// big-endian. Written by LayeredStateStore's checkpoints; read back at open
// and by the shared store's compactions (every process's pins).
#ifndef STORAGE_INTERNAL_EPOCH_PIN_ROWS_H_
#define STORAGE_INTERNAL_EPOCH_PIN_ROWS_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "storage/epoch.h"
#include "storage/state_store.h"

namespace backfill {
namespace storage_internal {

// The value of a pin row.
std::string EncodePinnedEpoch(Epoch epoch);

// Reads every pin row from `it` (an unpositioned iterator over
// kEpochPinTableId, vnode 0) and calls visit(owner, epoch) for each, in
// owner order. Errors: DataLoss naming the owner (C-escaped) of a value
// that is not an 8-byte epoch; the iterator's status.
absl::Status ForEachPinnedEpoch(
    StateStoreIterator& it,
    const std::function<void(absl::string_view owner, Epoch epoch)>& visit);

}  // namespace storage_internal
}  // namespace backfill

#endif  // STORAGE_INTERNAL_EPOCH_PIN_ROWS_H_
