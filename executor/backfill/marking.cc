#include "executor/backfill/marking.h"

#include <cassert>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

std::vector<VirtualNode> VnodesOfRows(
    const StreamChunk& chunk, absl::Span<const int> pk_indices,
    absl::FunctionRef<VirtualNode(RowView pk)> vnode_of_pk) {
  std::vector<VirtualNode> vnodes(chunk.capacity(), 0);
  Row pk(pk_indices.size());
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    if (!chunk.is_visible(row)) continue;
    for (size_t i = 0; i < pk_indices.size(); ++i) {
      pk[i] = chunk.column(pk_indices[i]).value(row);
    }
    vnodes[row] = vnode_of_pk(pk);
  }
  return vnodes;
}

absl::StatusOr<std::vector<bool>> KeptByProgress(
    const StreamChunk& chunk, const std::vector<bool>* among,
    absl::Span<const VirtualNode> vnodes, absl::Span<const int> pk_indices,
    absl::Span<const OrderType> pk_orders, const BackfillState& state) {
  assert(pk_indices.size() == pk_orders.size());
  assert(among == nullptr || among->size() == chunk.capacity());
  assert(vnodes.size() == chunk.capacity());
  std::vector<bool> keep(chunk.capacity(), false);
  Row pk(pk_indices.size());
  const auto read_pk = [&](size_t row) {
    for (size_t i = 0; i < pk_indices.size(); ++i) {
      pk[i] = chunk.column(pk_indices[i]).value(row);
    }
  };
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    if (!chunk.is_visible(row)) continue;
    if (among != nullptr && !(*among)[row]) continue;
    const VirtualNode vnode = vnodes[row];
    const VnodeProgress* progress = state.Get(vnode);
    if (progress == nullptr) {
      read_pk(row);
      return absl::FailedPreconditionError(absl::StrCat(
          "upstream change in a vnode this actor does not own: row ", row,
          ", pk ", RowDebugString(pk), ", vnode ", vnode));
    }
    if (std::holds_alternative<Completed>(*progress)) {
      keep[row] = true;
    } else if (const auto* in_progress = std::get_if<InProgress>(progress)) {
      read_pk(row);
      assert(in_progress->current_pos.size() == pk.size());
      keep[row] = CompareRows(pk, in_progress->current_pos, pk_orders) <= 0;
    }
  }
  return keep;
}

absl::StatusOr<StreamChunk> MarkChunkByVnode(
    const StreamChunk& chunk, absl::Span<const int> pk_indices,
    absl::Span<const OrderType> pk_orders,
    absl::FunctionRef<VirtualNode(RowView pk)> vnode_of_pk,
    const BackfillState& state) {
  const std::vector<VirtualNode> vnodes =
      VnodesOfRows(chunk, pk_indices, vnode_of_pk);
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<bool> keep,
      KeptByProgress(chunk, nullptr, vnodes, pk_indices, pk_orders, state));
  return NormalizeUnmatchedUpdates(chunk, keep);
}

absl::StatusOr<std::optional<std::vector<Op>>> RepairUpdatePairs(
    absl::Span<const Op> ops, const std::vector<bool>& rows,
    const std::vector<bool>& keep) {
  assert(rows.size() == ops.size() && keep.size() == ops.size());
  // Copied only when a rewrite is needed (the common case has none).
  std::optional<std::vector<Op>> repaired;
  long pending_update_delete = -1;
  for (size_t row = 0; row < ops.size(); ++row) {
    if (!rows[row]) continue;
    const Op op = ops[row];
    if (pending_update_delete >= 0) {
      if (op != Op::kUpdateInsert) {
        return absl::InvalidArgumentError(
            absl::StrCat("U- not followed by U+: row ", row, " has op ",
                         OpName(op), ", U- at row ", pending_update_delete));
      }
      const size_t update_delete = static_cast<size_t>(pending_update_delete);
      pending_update_delete = -1;
      if (keep[update_delete] == keep[row]) continue;
      if (!repaired.has_value()) {
        repaired.emplace(ops.begin(), ops.end());
      }
      if (keep[update_delete]) {
        (*repaired)[update_delete] = Op::kDelete;
      } else {
        (*repaired)[row] = Op::kInsert;
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
  return repaired;
}

absl::StatusOr<StreamChunk> NormalizeUnmatchedUpdates(
    StreamChunk chunk, const std::vector<bool>& keep) {
  assert(keep.size() == chunk.capacity());
  std::vector<bool> visible(chunk.capacity());
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    visible[row] = chunk.is_visible(row);
  }
  BACKFILL_ASSIGN_OR_RETURN(std::optional<std::vector<Op>> ops,
                            RepairUpdatePairs(chunk.ops(), visible, keep));
  if (ops.has_value()) chunk.SetOps(*std::move(ops));
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    visible[row] = visible[row] && keep[row];
  }
  chunk.SetVisibility(std::move(visible));
  return chunk;
}

}  // namespace backfill
