// BackfillState: the per-vnode progress of one backfill actor (CONTRACT §6),
// with a committed copy, the "which vnodes need writing" logic, and the
// encoding of one vnode's progress as the value row of the progress table.
//
// clang-format off
//   BackfillState state({{0, NotStarted{}}, {1, InProgress{{int64_t{5}}, 5}}});
//   BACKFILL_RETURN_IF_ERROR(state.UpdateProgress(0, {int64_t{9}}, 3));
//   for (const ProgressWrite& write : state.PendingWrites()) {
//     /* write the row, then */ state.MarkCommitted(write.vnode);
//   }
// clang-format on
//
// Per vnode: NotStarted (nothing sent) -> InProgress{current_pos, row_count}
// (every row with pk <= current_pos under the pk order has been sent) ->
// Completed{current_pos, row_count} (everything has been sent). current_pos
// holds the pk columns only, in pk order; row_count counts snapshot rows.
//
// The progress table stores, under key `vnode`, the value row
// [current_pos..., backfill_finished: BOOLEAN, row_count: INT64] (never change:
// persisted). NotStarted is never written; the first write of a vnode is an
// insert, later ones are updates; Completed is written once.
//
// Thread-safety: a value type; not thread-safe for mutation.
#ifndef EXECUTOR_BACKFILL_BACKFILL_STATE_H_
#define EXECUTOR_BACKFILL_BACKFILL_STATE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "serde/data_type.h"
#include "serde/row.h"
#include "serde/vnode.h"

namespace backfill {

struct NotStarted {};
struct InProgress {
  Row current_pos;
  uint64_t row_count = 0;
};
struct Completed {
  Row current_pos;
  uint64_t row_count = 0;
};
using VnodeProgress = std::variant<NotStarted, InProgress, Completed>;

// Structural equality (positions compared with RowsEqual).
bool ProgressEquals(const VnodeProgress& a, const VnodeProgress& b);
// The same kind and position (RowsEqual), whatever the row counts.
bool ProgressSamePosition(const VnodeProgress& a, const VnodeProgress& b);
// "NotStarted", "InProgress{(5), 17}", "Completed{(NULL), 0}".
std::string ProgressDebugString(const VnodeProgress& progress);

// One row to write to the progress table, under key `vnode`.
struct ProgressWrite {
  VirtualNode vnode = 0;
  // The previously written value (for an update); nullopt for an insert.
  std::optional<Row> old_value = std::nullopt;
  Row new_value = {};
};

class BackfillState {
 public:
  // The state of an actor owning the vnodes in `loaded`, each with its
  // progress as loaded from the progress table (NotStarted if it had no row);
  // the committed copy equals it.
  explicit BackfillState(std::map<VirtualNode, VnodeProgress> loaded);

  // The current progress of `vnode`, or nullptr if the actor does not own
  // it. Valid until the next mutation of this state.
  const VnodeProgress* Get(VirtualNode vnode) const;
  // The owned vnodes, ascending.
  std::vector<VirtualNode> owned_vnodes() const;
  size_t num_vnodes() const { return vnodes_.size(); }

  // Records that the snapshot rows of `vnode` up to `pos` (inclusive) were
  // sent, `delta` more of them: NotStarted -> InProgress{pos, delta};
  // InProgress -> InProgress{pos, count + delta}. Counts saturate at
  // INT64_MAX (what the progress table can hold).
  // Errors: FailedPrecondition if `vnode` is Completed or not owned.
  absl::Status UpdateProgress(VirtualNode vnode, Row pos, uint64_t delta);

  // Marks `vnode` Completed: NotStarted -> Completed{[NULL] * pk_len, 0};
  // InProgress -> Completed{same pos, same count}; Completed: unchanged.
  // Errors: FailedPrecondition if `vnode` is not owned.
  absl::Status FinishProgress(VirtualNode vnode, size_t pk_len);
  // FinishProgress for every owned vnode.
  void FinishAll(size_t pk_len);

  // True iff some vnode is InProgress.
  bool HasProgress() const;
  // True iff every owned vnode is Completed (vacuously true for none).
  bool IsCompletelyFinished() const;
  // Sum of the current row counts (saturating at UINT64_MAX).
  uint64_t total_row_count() const;

  // Vnodes whose current progress must be written: not NotStarted and
  // different from the committed copy; ascending. Costs O(vnodes changed
  // since their last MarkCommitted), not O(vnodes owned).
  std::vector<VirtualNode> ChangedVnodes() const;
  // The writes for ChangedVnodes(), encoded with EncodeProgressValue: an
  // insert (no old value) when the committed copy is NotStarted, otherwise
  // an update from the committed value.
  std::vector<ProgressWrite> PendingWrites() const;
  // Records that the current progress of `vnode` was written (committed =
  // current). No-op for vnodes not owned.
  void MarkCommitted(VirtualNode vnode);
  // The committed copy of `vnode`, or nullptr if not owned.
  const VnodeProgress* GetCommitted(VirtualNode vnode) const;

 private:
  struct PerVnode {
    VnodeProgress committed;
    VnodeProgress current;
  };
  std::map<VirtualNode, PerVnode> vnodes_;
  // The vnodes whose current progress may differ from the committed copy
  // (changed since their last MarkCommitted), so that ChangedVnodes costs
  // what changed, not the number of vnodes.
  std::set<VirtualNode> touched_;
};

// The persisted value row of a vnode's progress:
// [current_pos..., backfill_finished, row_count].
// REQUIRES: `progress` is not NotStarted; row_count <= INT64_MAX.
Row EncodeProgressValue(const VnodeProgress& progress);

// The inverse of EncodeProgressValue, decoding from the end: the last datum
// is row_count (non-NULL INT64 >= 0), the one before backfill_finished
// (non-NULL BOOLEAN), everything before is current_pos, which must have one
// datum per pk column, each NULL or of that column's type.
// Errors: DataLoss naming `vnode` and what is wrong.
absl::StatusOr<VnodeProgress> DecodeProgressValue(
    VirtualNode vnode, RowView value, absl::Span<const DataType> pk_types);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_BACKFILL_STATE_H_
