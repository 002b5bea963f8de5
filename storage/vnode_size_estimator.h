// VnodeSizeEstimator: how many bytes each vnode of a table holds, as a store
// can tell cheaply without reading the rows (RocksDB: the approximate sizes
// of the vnodes' key ranges from its index blocks and memtable statistics).
// For progress estimates (tools/snapshot_progress.h): a backfill reads a
// vnode's snapshot in proportion to these bytes, not to the vnode count.
//
//   if (auto* sizes = dynamic_cast<VnodeSizeEstimator*>(&store)) {
//     BACKFILL_ASSIGN_OR_RETURN(std::vector<uint64_t> bytes,
//         sizes->ApproximateVnodeBytes(upstream.table_id,
//                                      upstream.vnode_count));
//   }
//
// The estimate counts every stored version (older versions and tombstones
// not yet collected too) and may be off by a block or so per vnode; a vnode
// with no data is about 0. Not a row count: divide by a bytes-per-row
// measured on vnodes already read.
// Thread-safety: implementations are thread-safe.
#ifndef STORAGE_VNODE_SIZE_ESTIMATOR_H_
#define STORAGE_VNODE_SIZE_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/table_key.h"

namespace backfill {

class VnodeSizeEstimator {
 public:
  virtual ~VnodeSizeEstimator() = default;

  // The approximate stored bytes of vnodes 0 .. vnode_count - 1 of
  // `table_id` (committed data, and data not yet flushed from memory).
  // Errors: InvalidArgument unless vnode_count is in [1, kMaxVnodeCount];
  // storage errors naming the operation.
  virtual absl::StatusOr<std::vector<uint64_t>> ApproximateVnodeBytes(
      TableId table_id, int vnode_count) = 0;
};

}  // namespace backfill

#endif  // STORAGE_VNODE_SIZE_ESTIMATOR_H_
