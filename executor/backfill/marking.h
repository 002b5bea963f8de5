// Marking buffered upstream changes by backfill progress (CONTRACT §5):
// which changes may be forwarded now, and the rewrite of update pairs whose
// halves fall on different sides of the progress.
//
// clang-format off
//   absl::StatusOr<StreamChunk> marked = MarkChunkByVnode(
//       chunk, pk_indices, pk_orders,
//       [&](RowView pk) { return table_vnode(pk); }, backfill_state);
// clang-format on
//
// A row (in S2) is kept iff the *table's* vnode of its pk is Completed, or
// InProgress and pk <= current_pos under the pk order; NotStarted: dropped.
// This is decided per vnode for every chunk, also when no vnode is
// InProgress (unlike RisingWave, which drops the whole chunk then and loses
// changes to Completed vnodes after a rescale). Kept/dropped rows become the
// output's visibility; then NormalizeUnmatchedUpdates fixes the pairs.
//
// Thread-safety: pure functions.
#ifndef EXECUTOR_BACKFILL_MARKING_H_
#define EXECUTOR_BACKFILL_MARKING_H_

#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "executor/backfill/backfill_state.h"
#include "executor/stream_chunk.h"
#include "serde/order_type.h"
#include "serde/row.h"
#include "serde/vnode.h"

namespace backfill {

// Returns `chunk` with visibility = (visible in `chunk`) AND (kept by the
// rule above), and update pairs normalised. Invisible input rows are
// ignored; the chunk need not be compacted.
// `pk_indices`: the S2 column of each pk column, in pk order; `pk_orders`:
// their OrderTypes; `vnode_of_pk`: the upstream table's vnode of a pk row
// (computed from its distribution key, not the whole pk).
// REQUIRES: pk_indices.size() == pk_orders.size(); every index is a column
// of `chunk`; every InProgress position has pk_indices.size() datums.
// Errors: FailedPrecondition naming the row and vnode when a row's vnode is
// not owned by `state` (the dispatcher routed it wrongly); InvalidArgument
// from NormalizeUnmatchedUpdates for a malformed update pair.
absl::StatusOr<StreamChunk> MarkChunkByVnode(
    const StreamChunk& chunk, absl::Span<const int> pk_indices,
    absl::Span<const OrderType> pk_orders,
    absl::FunctionRef<VirtualNode(RowView pk)> vnode_of_pk,
    const BackfillState& state);

// The table's vnode of each visible row's pk (`vnode_of_pk` as above); an
// invisible row's entry is 0. Computed once per chunk, so a chunk judged
// several times (a buffered chunk released as positions move) hashes each
// row once.
std::vector<VirtualNode> VnodesOfRows(
    const StreamChunk& chunk, absl::Span<const int> pk_indices,
    absl::FunctionRef<VirtualNode(RowView pk)> vnode_of_pk);

// The rule alone: which rows of `chunk` it keeps now, among the visible
// rows set in `among` (every visible row if null; the others are false).
// `vnodes`: VnodesOfRows of `chunk`. A row of a Completed vnode is kept
// without reading its pk.
// REQUIRES: among == nullptr || among->size() == chunk.capacity();
// vnodes.size() == chunk.capacity().
// Errors: FailedPrecondition as MarkChunkByVnode.
absl::StatusOr<std::vector<bool>> KeptByProgress(
    const StreamChunk& chunk, const std::vector<bool>* among,
    absl::Span<const VirtualNode> vnodes, absl::Span<const int> pk_indices,
    absl::Span<const OrderType> pk_orders, const BackfillState& state);

// The op rewrites of NormalizeUnmatchedUpdates (below) on plain vectors:
// `rows` says which rows take part (the visible ones), `keep` which of them
// are kept. Returns the rewritten ops, or nullopt if no pair needed one.
// REQUIRES: ops, rows and keep have the same size.
// Errors: as NormalizeUnmatchedUpdates.
absl::StatusOr<std::optional<std::vector<Op>>> RepairUpdatePairs(
    absl::Span<const Op> ops, const std::vector<bool>& rows,
    const std::vector<bool>& keep);

// Applies a row filter to `chunk` and repairs update pairs. Among the rows
// visible in `chunk`, a U- must be immediately followed by a U+. For each
// such pair, by whether each half is kept:
//   U- kept,     U+ kept      unchanged
//   U- dropped,  U+ dropped   unchanged (both invisible)
//   U- kept,     U+ dropped   the U- becomes Delete
//   U- dropped,  U+ kept      the U+ becomes Insert
// Returns `chunk` with the rewritten ops and visibility = visible AND kept.
// REQUIRES: keep.size() == chunk.capacity().
// Errors: InvalidArgument naming the row for a U+ without a preceding U-,
// or a U- not followed by a U+.
absl::StatusOr<StreamChunk> NormalizeUnmatchedUpdates(
    StreamChunk chunk, const std::vector<bool>& keep);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_MARKING_H_
