// MemTable: an ordered buffer of writes of one table and one epoch, keyed by
// vnode (u16 big-endian) | pk, so that one vnode's rows are contiguous and in
// pk order. A value of nullopt is a tombstone. Used for a LocalStateStore's
// current write buffer and, frozen, for its sealed batches.
#ifndef STORAGE_INTERNAL_MEM_TABLE_H_
#define STORAGE_INTERNAL_MEM_TABLE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/internal/endian.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/table_key.h"

namespace backfill {
namespace storage_internal {

using MemTable = std::map<std::string, std::optional<std::string>, std::less<>>;

inline constexpr size_t kMemTableVnodeSize = 2;

// Sets `*out` to vnode | pk.
inline void SetMemTableKey(VirtualNode vnode, absl::string_view pk,
                           std::string* out) {
  out->resize(kMemTableVnodeSize);
  absl::big_endian::Store16(out->data(), vnode);
  out->append(pk.data(), pk.size());
}

// The vnode and the pk of a mem table key. REQUIRES: `key` was set by
// SetMemTableKey.
inline VirtualNode MemTableVnode(const std::string& key) {
  return absl::big_endian::Load16(key.data());
}
inline absl::string_view MemTablePk(const std::string& key) {
  return absl::string_view(key).substr(kMemTableVnodeSize);
}

// The entries of `table` in `vnode` and `range`: [*begin, *end).
inline void MemTableRange(const MemTable& table, VirtualNode vnode,
                          const PkRange& range, MemTable::const_iterator* begin,
                          MemTable::const_iterator* end) {
  std::string key;
  SetMemTableKey(vnode, range.inclusive_min, &key);
  *begin = table.lower_bound(key);
  if (range.exclusive_max.has_value()) {
    SetMemTableKey(vnode, *range.exclusive_max, &key);
  } else {
    // vnode + 1 fits: vnode < kMaxVnodeCount <= 65535.
    SetMemTableKey(static_cast<VirtualNode>(vnode + 1), "", &key);
  }
  *end = table.lower_bound(key);
  if (range.IsEmpty()) *end = *begin;
}

// An immutable sealed batch of one instance.
struct SealedBatch {
  Epoch epoch;
  std::shared_ptr<const MemTable> data;
};

}  // namespace storage_internal
}  // namespace backfill

#endif  // STORAGE_INTERNAL_MEM_TABLE_H_
