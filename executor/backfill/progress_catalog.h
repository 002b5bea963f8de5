// The catalog of a backfill progress table: the table in which an
// arrangement backfill persists, per vnode, how far it has read the upstream
// table (CONTRACT §6). A planner creates the table from BackfillProgressCatalog;
// the executor checks a given table with ValidateProgressCatalog.
//
// clang-format off
//   TableCatalog progress = BackfillProgressCatalog(upstream, /*id=*/42);
//   BACKFILL_RETURN_IF_ERROR(ValidateProgressCatalog(upstream, progress));
// clang-format on
#ifndef EXECUTOR_BACKFILL_PROGRESS_CATALOG_H_
#define EXECUTOR_BACKFILL_PROGRESS_CATALOG_H_

#include "absl/status/status.h"
#include "storage/table_catalog.h"

namespace backfill {

// The catalog of a backfill progress table for `upstream` (CONTRACT §6):
// columns [vnode INT16, one per upstream pk column, backfill_finished BOOL,
// row_count INT64]; pk [vnode]; the vnode column gives the vnode; the same
// vnode count as the upstream; positional values. The position columns are
// nullable (all NULL for a vnode that finished empty).
TableCatalog BackfillProgressCatalog(const TableCatalog& upstream,
                                     TableId progress_table_id);

// OK iff `progress` can hold the progress of a backfill of `upstream`: the
// column types, pk [vnode] as the vnode column and the vnode count of
// BackfillProgressCatalog(upstream); every non-key column in the value (the
// progress is stored there); the position columns nullable.
// Errors: InvalidArgument, the message starting with "progress_table" and
// naming the column (or both catalogs, for a wrong shape).
absl::Status ValidateProgressCatalog(const TableCatalog& upstream,
                                     const TableCatalog& progress);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_PROGRESS_CATALOG_H_
