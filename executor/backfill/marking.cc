#include "executor/backfill/marking.h"

#include <cassert>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace backfill {

absl::StatusOr<StreamChunk> MarkChunkByVnode(
    const StreamChunk& chunk, absl::Span<const int> pk_indices,
    absl::Span<const OrderType> pk_orders,
    absl::FunctionRef<VirtualNode(RowView pk)> vnode_of_pk,
    const BackfillState& state) {
  assert(pk_indices.size() == pk_orders.size());
  std::vector<bool> keep(chunk.capacity(), false);
  Row pk(pk_indices.size());
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    if (!chunk.is_visible(row)) continue;
    for (size_t i = 0; i < pk_indices.size(); ++i) {
      pk[i] = chunk.column(pk_indices[i]).value(row);
    }
    const VirtualNode vnode = vnode_of_pk(pk);
    const VnodeProgress* progress = state.Get(vnode);
    if (progress == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "upstream change in a vnode this actor does not own: row ", row,
          ", pk ", RowDebugString(pk), ", vnode ", vnode));
    }
    if (std::holds_alternative<Completed>(*progress)) {
      keep[row] = true;
    } else if (const auto* in_progress = std::get_if<InProgress>(progress)) {
      assert(in_progress->current_pos.size() == pk.size());
      keep[row] = CompareRows(pk, in_progress->current_pos, pk_orders) <= 0;
    }
  }
  return NormalizeUnmatchedUpdates(chunk, keep);
}

absl::StatusOr<StreamChunk> NormalizeUnmatchedUpdates(
    StreamChunk chunk, const std::vector<bool>& keep) {
  assert(keep.size() == chunk.capacity());
  // Copied only when a rewrite is needed (the common case has none).
  std::optional<std::vector<Op>> ops;
  std::vector<bool> visibility(chunk.capacity(), false);
  long pending_update_delete = -1;
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    if (!chunk.is_visible(row)) continue;
    visibility[row] = keep[row];
    const Op op = chunk.op(row);
    if (pending_update_delete >= 0) {
      if (op != Op::kUpdateInsert) {
        return absl::InvalidArgumentError(
            absl::StrCat("U- not followed by U+: row ", row, " has op ",
                         OpName(op), ", U- at row ", pending_update_delete));
      }
      const size_t update_delete = static_cast<size_t>(pending_update_delete);
      pending_update_delete = -1;
      if (keep[update_delete] == keep[row]) continue;
      if (!ops.has_value()) ops = chunk.ops();
      if (keep[update_delete]) {
        (*ops)[update_delete] = Op::kDelete;
      } else {
        (*ops)[row] = Op::kInsert;
      }
      continue;
    }
    if (op == Op::kUpdateInsert) {
      return absl::InvalidArgumentError(
          absl::StrCat("U+ without a preceding U-: row ", row));
    }
    if (op == Op::kUpdateDelete) pending_update_delete = static_cast<long>(row);
  }
  if (pending_update_delete >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "U- not followed by U+ (end of chunk): row ", pending_update_delete));
  }
  if (ops.has_value()) chunk.SetOps(*std::move(ops));
  chunk.SetVisibility(std::move(visibility));
  return chunk;
}

}  // namespace backfill
