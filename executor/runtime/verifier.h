// The final check of a streaming job: the view's committed rows equal the
// upstream table's, projected to the view's columns.
//
//   BACKFILL_ASSIGN_OR_RETURN(ViewVerdict verdict, VerifyView(store, options));
//   if (!verdict.consistent) Print(verdict.mismatch);
//
// Contract:
//  * Independent reads. Both tables are read through options.committed_rows
//    (storage/committed_rows.h), never through the state-table classes the
//    job writes and snapshots with. For RocksDB that is
//    RocksDbStateStore::NewRawCommittedRowIterator: a raw iteration with its
//    own resolution of versions, which shares neither the state tables nor
//    the store's MVCC iterator. When options.committed_rows is empty (the
//    memory and shared stores) it is the store's own committed iterator
//    (NewStoreCommittedRowIterator): independent of the state tables, not of
//    the store's read path.
//  * Streaming, constant memory. The view's catalog (ViewCatalog) keeps the
//    upstream's vnode count, distribution key and pk (columns, types and
//    orders), so a row has the same vnode and the same pk bytes in both
//    tables, and both readers return rows in the same storage order
//    (vnode, then pk bytes). The check is a merge of the two in that order:
//    one row of each table in memory at a time, whatever the tables' size.
//    It verifies what it relies on: catalogs that would give different
//    orders are Internal, and so is a reader whose keys do not strictly
//    increase.
//  * The verdict. Rows are matched by key (vnode, pk): a key on one side
//    only, or a matched pair whose view row differs from the upstream row
//    projected to ViewColumns (hidden pk columns included), is a mismatch.
//    The message names the first one in storage order and ends with both
//    row counts.
//  * Dumps. `sink` (may be null) receives each row's output columns as the
//    merge reaches it, upstream and view interleaved, each side in storage
//    order.
//
// Thread-safety: reads only; no checkpoint may run meanwhile (the two
// tables are read at the committed epoch, one after the other).
#ifndef EXECUTOR_RUNTIME_VERIFIER_H_
#define EXECUTOR_RUNTIME_VERIFIER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job_options.h"
#include "serde/row.h"
#include "storage/state_store.h"

namespace backfill {

struct ViewVerdict {
  // The view equals the table projected to the view's columns.
  bool consistent = false;
  // Why not, for the first differing key in storage order, then the counts:
  //   "row I: table (...) view (...) (table has N rows, view has M)"
  //   "row I: table (...) is missing from the view (...)"
  //   "row I: view (...) is not in the table (...)"
  // (I counts the keys met so far, from 0; rows in ViewColumns order.)
  std::string mismatch;
  uint64_t upstream_rows = 0;
  uint64_t view_rows = 0;
};

// Receives the rows the check compares, as it compares them.
class VerifiedRowSink {
 public:
  virtual ~VerifiedRowSink() = default;
  // An upstream row projected to the output columns (JobOutputColumns).
  virtual absl::Status AddUpstreamRow(RowView row) = 0;
  // A view row's output columns (its first JobOutputColumns().size()).
  virtual absl::Status AddViewRow(RowView row) = 0;
};

// Compares the committed view of `options` (ViewCatalog) with its committed
// upstream table (see the file comment). Errors: the readers' (storage
// errors, DataLoss for rows that do not decode), the sink's, Internal for
// the broken assumptions above.
absl::StatusOr<ViewVerdict> VerifyView(StateStore& store,
                                       const StreamingJobOptions& options,
                                       VerifiedRowSink* sink = nullptr);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_VERIFIER_H_
