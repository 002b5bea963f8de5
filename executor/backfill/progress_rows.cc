#include "executor/backfill/progress_rows.h"

#include <map>
#include <optional>
#include <utility>

#include "executor/backfill/progress_catalog.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// [vnode | value...], the progress table's row layout.
Row ProgressRow(VirtualNode vnode, const Row& value) {
  Row row;
  row.reserve(value.size() + 1);
  row.push_back(static_cast<int16_t>(vnode));
  row.insert(row.end(), value.begin(), value.end());
  return row;
}

}  // namespace

absl::Status ValidateProgressTable(const TableCatalog& upstream,
                                   const VnodeBitmap& upstream_vnodes,
                                   const StateTable& progress_table) {
  BACKFILL_RETURN_IF_ERROR(
      ValidateProgressCatalog(upstream, progress_table.catalog()));
  if (!(progress_table.vnodes() == upstream_vnodes)) {
    return absl::InvalidArgumentError(
        "progress_table and upstream_table own different vnodes");
  }
  return absl::OkStatus();
}

absl::StatusOr<BackfillState> ReadProgressRows(
    StateTable& progress_table, absl::Span<const DataType> pk_types) {
  std::map<VirtualNode, VnodeProgress> loaded;
  for (VirtualNode vnode : progress_table.vnodes().set_vnodes()) {
    BACKFILL_ASSIGN_OR_RETURN(
        std::optional<Row> row,
        progress_table.GetRow(Row{static_cast<int16_t>(vnode)}));
    if (!row.has_value()) {
      loaded.emplace(vnode, NotStarted{});
      continue;
    }
    BACKFILL_ASSIGN_OR_RETURN(
        VnodeProgress progress,
        DecodeProgressValue(vnode, RowView(*row).subspan(1), pk_types));
    loaded.emplace(vnode, std::move(progress));
  }
  return BackfillState(std::move(loaded));
}

absl::Status WriteProgressRows(BackfillState& state,
                               StateTable& progress_table) {
  for (const ProgressWrite& write : state.PendingWrites()) {
    const Row new_row = ProgressRow(write.vnode, write.new_value);
    if (write.old_value.has_value()) {
      BACKFILL_RETURN_IF_ERROR(progress_table.Update(
          ProgressRow(write.vnode, *write.old_value), new_row));
    } else {
      BACKFILL_RETURN_IF_ERROR(progress_table.Insert(new_row));
    }
    state.MarkCommitted(write.vnode);
  }
  return absl::OkStatus();
}

}  // namespace backfill
