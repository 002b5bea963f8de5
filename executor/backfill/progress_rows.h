// A backfill actor's BackfillState in its progress table (CONTRACT §6): read
// at start-up from the rows of the vnodes the table instance owns, and the
// pending changes written back at each barrier. Both backfill executors keep
// their progress this way.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(BackfillState state,
//                             ReadProgressRows(*progress_table, pk_types));
//   ... state.UpdateProgress(vnode, pos, rows) ...
//   BACKFILL_RETURN_IF_ERROR(WriteProgressRows(state, *progress_table));
//   BACKFILL_RETURN_IF_ERROR(progress_table->Commit(barrier.epoch));
// clang-format on
//
// The rows are [vnode INT16 | EncodeProgressValue(progress)...]
// (BackfillProgressCatalog). Thread-safety: as the StateTable's.
#ifndef EXECUTOR_BACKFILL_PROGRESS_ROWS_H_
#define EXECUTOR_BACKFILL_PROGRESS_ROWS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "executor/backfill/backfill_state.h"
#include "serde/data_type.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"

namespace backfill {

// OK iff `progress_table` can hold the progress of a backfill of `upstream`
// (ValidateProgressCatalog) and owns exactly `upstream_vnodes`.
// Errors: InvalidArgument, the message starting with "progress_table".
absl::Status ValidateProgressTable(const TableCatalog& upstream,
                                   const VnodeBitmap& upstream_vnodes,
                                   const StateTable& progress_table);

// The progress of every vnode `progress_table` owns: NotStarted where it
// has no row. REQUIRES: the table's epoch is initialised.
// Errors: the table's read errors; DataLoss (DecodeProgressValue) for a row
// that does not decode with `pk_types`.
absl::StatusOr<BackfillState> ReadProgressRows(
    StateTable& progress_table, absl::Span<const DataType> pk_types);

// Writes state.PendingWrites() (an insert for a vnode's first row, else an
// update from the committed value) and marks each written vnode committed.
// Does not commit the table. Errors: the table's write errors (the vnodes
// written before the error are marked committed).
absl::Status WriteProgressRows(BackfillState& state,
                               StateTable& progress_table);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_PROGRESS_ROWS_H_
