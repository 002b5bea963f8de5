// Virtual nodes: the unit of data distribution. Every row of a table belongs to
// exactly one vnode in [0, vnode_count); storage keys, the hash dispatcher and
// the backfill executor all address data by vnode.
//
//   VirtualNode vnode = ...;                 // 0 .. vnode_count - 1
//   static_assert(kMaxVnodeCount == 32768);
#ifndef SERDE_VNODE_H_
#define SERDE_VNODE_H_

#include <cstdint>

namespace backfill {

// A vnode index. Never negative; always < the table's vnode count.
using VirtualNode = uint16_t;

// The default number of vnodes of a table (RisingWave's COUNT_FOR_COMPAT).
inline constexpr int kDefaultVnodeCount = 256;
// The largest supported vnode count: 15 usable bits.
inline constexpr int kMaxVnodeCount = 32768;

}  // namespace backfill

#endif  // SERDE_VNODE_H_
