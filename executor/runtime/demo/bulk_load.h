// LoadInitialRows: the demo job's initial table: options.initial_rows rows
// of the workload (keys 0 .. initial_rows - 1, WorkloadRow at version 0)
// loaded into options.upstream before the view is created, with the load's
// completion marked in the source's offset table in the same checkpoint.
// A test and demo input, like the workload and the DML source.
//
//   BACKFILL_ASSIGN_OR_RETURN(bool loaded, LoadInitialRows(store, options));
//
// Idempotent: rows are a pure function of their key, and a load that did
// not complete (a crash in the middle) is simply done again. Checkpoints
// every 200,000 rows.
// Thread-safety: nothing else may write the store meanwhile.
#ifndef EXECUTOR_RUNTIME_DEMO_BULK_LOAD_H_
#define EXECUTOR_RUNTIME_DEMO_BULK_LOAD_H_

#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job_options.h"
#include "storage/state_store.h"
#include "storage/table_key.h"

namespace backfill {

// Whether the initial load completed: the marker row LoadInitialRows commits
// in the source's offset table (`source_offset_table_id`, the job's
// StreamingJobOptions / JobDefinition::source_offset_table_id) with its last
// rows, read at the store's committed epoch. A load cut short (rows, no
// marker) is false, and so is a store where none began. Writes nothing and
// registers no writable table, so a read-only store (`backfill inspect`)
// works. Errors: storage errors.
absl::StatusOr<bool> InitialLoadComplete(StateStore& store,
                                         TableId source_offset_table_id);

// Loads the rows unless an earlier load completed (InitialLoadComplete).
// Returns true if it loaded them now (a new job), false if they were there.
// RunStreamingJob calls it first; benchmarks call it to build a table once.
// Errors: InvalidArgument for a bad upstream catalog; storage errors.
absl::StatusOr<bool> LoadInitialRows(StateStore& store,
                                     const StreamingJobOptions& options);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_DEMO_BULK_LOAD_H_
