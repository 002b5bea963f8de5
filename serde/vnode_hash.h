// Vnode hashing: which virtual node a row belongs to, from its distribution-key
// columns. vnode = CRC-32 (IEEE) of the dist-key datums' hash byte forms,
// concatenated, modulo the vnode count; an empty dist key (a singleton table)
// maps every row to vnode 0. The byte forms are in serde/FORMAT.md (never
// change: persisted, since storage keys start with the vnode). Dispatcher,
// storage and executor must all use these functions.
//
//   absl::StatusOr<VnodeHasher> hasher = VnodeHasher::Create({0}, 256);
//   VirtualNode v = hasher->VnodeOf(row);                 // row[0] is the key
//   hasher->VnodesOfColumns(chunk_columns, num_rows, &vnodes);   // batch form
//
// Thread-safety: everything here is pure; VnodeHasher is immutable.
#ifndef SERDE_VNODE_HASH_H_
#define SERDE_VNODE_HASH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/row.h"
#include "serde/vnode.h"

namespace backfill {

// OK iff 1 <= vnode_count <= kMaxVnodeCount; else InvalidArgument with the
// value.
absl::Status ValidateVnodeCount(int vnode_count);

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32 and crc32fast): extends
// `crc` (0 to start) over `bytes`. Crc32("123456789") == 0xCBF43926.
uint32_t Crc32(absl::string_view bytes, uint32_t crc = 0);

// CRC-32 of the concatenated hash byte forms of `dist_key`'s datums (each
// NULL or a value of a key type; VARCHAR and BYTEA hash alike).
// REQUIRES: no JSONB or MAP datum, at any depth: they cannot be in a
// distribution key (ValidateKeyColumnType; assert).
uint32_t HashDistKey(RowView dist_key);

// The vnode of a row whose dist-key datums are `dist_key` (0 if empty).
// `types` documents the columns' types and is checked by assert only.
// REQUIRES: ValidateVnodeCount(vnode_count).ok(); types.size() ==
// dist_key.size(); each datum NULL or of its type.
VirtualNode ComputeVnode(RowView dist_key, absl::Span<const DataType> types,
                         int vnode_count);

// A validated (dist-key column indices, vnode count) pair with single-row and
// batch forms.
class VnodeHasher {
 public:
  // `dist_key_indices`: the dist-key columns' positions in the rows/columns
  // given to the methods below; empty = singleton (every row in vnode 0).
  // Errors: InvalidArgument for a bad vnode count or a negative index.
  static absl::StatusOr<VnodeHasher> Create(std::vector<int> dist_key_indices,
                                            int vnode_count);

  int vnode_count() const { return vnode_count_; }
  bool is_singleton() const { return dist_key_indices_.empty(); }
  absl::Span<const int> dist_key_indices() const { return dist_key_indices_; }

  // REQUIRES: every dist-key index < row.size().
  VirtualNode VnodeOf(RowView row) const;

  // Row-major batch: (*out)[i] = VnodeOf(rows[i]); *out is resized.
  void VnodesOfRows(absl::Span<const Row> rows,
                    std::vector<VirtualNode>* out) const;

  // Column-major batch, the fast form for a DataChunk: `columns` are all the
  // columns of a chunk (column c's datum of row r is columns[c][r]); the
  // dist-key indices select columns. Sets *out (resized) to the vnode of each
  // of the `num_rows` rows, invisible rows included.
  // REQUIRES: every dist-key index < columns.size(); each of those columns
  // has at least num_rows datums.
  void VnodesOfColumns(absl::Span<const absl::Span<const Datum>> columns,
                       size_t num_rows, std::vector<VirtualNode>* out) const;

 private:
  VnodeHasher(std::vector<int> dist_key_indices, int vnode_count)
      : dist_key_indices_(std::move(dist_key_indices)),
        vnode_count_(vnode_count) {}

  std::vector<int> dist_key_indices_;
  int vnode_count_;
};

}  // namespace backfill

#endif  // SERDE_VNODE_HASH_H_
