// The final check of a streaming job: the view's committed rows equal the
// upstream table's, projected to the output columns. And the committed rows
// of a table in a canonical order, for that check and for dumps.
//
//   BACKFILL_ASSIGN_OR_RETURN(ViewVerdict verdict, VerifyView(store, options));
//   if (!verdict.consistent) Print(verdict.mismatch);
//
// Both tables are read through a read-only replicated instance (the same
// decoding as the tables' own state tables) and held in memory. Another
// engineer replaces these reads with an independent, streaming reader
// (issue 14, point 4); this target keeps the check the runtime has today.
//
// Thread-safety: reads only; the store must not be checkpointed meanwhile
// for a stable answer.
#ifndef EXECUTOR_RUNTIME_VERIFIER_H_
#define EXECUTOR_RUNTIME_VERIFIER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job_options.h"
#include "serde/row.h"
#include "storage/state_store.h"
#include "storage/table_catalog.h"

namespace backfill {

struct ViewVerdict {
  // The view equals the table projected to the output columns.
  bool consistent = false;
  // Why not: "row I: table (...) view (...)" for the first differing row in
  // the canonical order, or "table has N rows, view has M".
  std::string mismatch;
  uint64_t upstream_rows = 0;
  uint64_t view_rows = 0;
};

// Compares the committed view of `options` (ViewCatalog) with its committed
// upstream table, row by row in the canonical order of the output columns.
// Errors: the reads' (storage errors, DataLoss for rows that do not decode).
absl::StatusOr<ViewVerdict> VerifyView(StateStore& store,
                                       const StreamingJobOptions& options);

// The committed rows of `catalog` projected to `columns`, sorted by their
// memcomparable encoding (a canonical order). For dumps and verification.
absl::StatusOr<std::vector<Row>> ReadCommittedRows(
    StateStore& store, const TableCatalog& catalog,
    const std::vector<int>& columns);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_VERIFIER_H_
