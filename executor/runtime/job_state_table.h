// JobStateTable: the job's catalog row in the state store: its definition
// (JobDefinition: the upstream and view catalogs, the output columns, the
// internal table ids; the vnode count is the catalogs') and its state in
// force (JobState, executor/runtime/job_state.h). The coordinator writes it
// in the same epochs as the view, the progress and the source offset, so one
// checkpoint commits all of them atomically.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto table, JobStateTable::Create(store, id));
//   BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved,
//                             table->InitEpoch(first_barrier_epoch));
//   if (saved) BACKFILL_RETURN_IF_ERROR(CheckSameJob(saved->definition, mine));
//   BACKFILL_RETURN_IF_ERROR(table->Write(mine, state));   // every barrier
//   BACKFILL_RETURN_IF_ERROR(table->Commit(next_epoch));
//
// Format (persisted: never change; add columns at the end only): a singleton
// table with one row, key id = 0, columns
//   id INT16, format_version INT32 (= 1), definition BYTEA (a serialized
//   backfill.proto.JobDefinition, executor/runtime/job_state.proto),
//   paused BOOLEAN, rate_limit INT64 (NULL = no limit, n >= 1 rows/s),
//   parallelism INT32 (>= 1), upstream_stopped BOOLEAN,
//   epochs_since_creation INT64 (>= 0), adaptive_target_us INT64 (NULL = not
//   adaptive, else the barrier-latency target in microseconds, >= 1),
//   adaptive_rows_per_second INT64 (NULL = no controller rate yet, else in
//   [1, 2^32); only with adaptive_target_us). The last two were added after
//   the first release of the format: a row written before them (8 columns)
//   does not decode (DataLoss), so such a directory must be recreated.
// A row that does not decode (bad bytes, an unknown format version, values
// out of range) is DataLoss naming the table and the field.
//
// Thread-safety: one thread at a time (the coordinator's), like a StateTable.
// The StateStore must outlive the table.
#ifndef EXECUTOR_RUNTIME_JOB_STATE_TABLE_H_
#define EXECUTOR_RUNTIME_JOB_STATE_TABLE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/runtime/job_state.h"
#include "storage/epoch.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"

namespace backfill {

// What a job is: a restart must describe the same job.
struct JobDefinition {
  TableCatalog upstream;
  TableCatalog view;
  // Indices into upstream.columns of the view's visible columns.
  std::vector<int> output_columns;
  TableId progress_table_id = 0;
  TableId source_offset_table_id = 0;
};

// OK iff `wanted` describes the job `saved` (read from a store) describes;
// otherwise FailedPrecondition naming the first difference, the saved value
// and the wanted one ("... upstream table column 1: `name VARCHAR` in the
// data directory, `amount FLOAT64 NOT NULL` in this job ..."), and
// suggesting another data directory (--data_dir).
absl::Status CheckSameJob(const JobDefinition& saved,
                          const JobDefinition& wanted);

// The row's content.
struct SavedJob {
  JobDefinition definition;
  JobState state;
};

class JobStateTable {
 public:
  // The table's catalog (see the format above).
  static TableCatalog Catalog(TableId table_id);

  // A table instance in `store`; no I/O. Errors: the StateTable's.
  static absl::StatusOr<std::unique_ptr<JobStateTable>> Create(
      StateStore& store, TableId table_id);

  // Makes first.curr the current epoch and reads the committed row (nullopt:
  // none yet). REQUIRES: the store's committed epoch >= first.prev (it does
  // not wait). Errors: DataLoss for a row that does not decode; storage
  // errors; FailedPrecondition if called twice.
  absl::StatusOr<std::optional<SavedJob>> InitEpoch(EpochPair first);

  // Writes the row into the current epoch (nothing if it equals the row
  // last read or written). REQUIRES: InitEpoch. Errors: storage errors;
  // InvalidArgument if state.parallelism is 0, the rate limit is Pause or
  // the adaptive target negative.
  absl::Status Write(const JobDefinition& definition, const JobState& state);

  // Seals the current epoch (for the next checkpoint) and moves to
  // next.curr. Errors: the StateTable's (FailedPrecondition unless
  // next.prev is the current epoch).
  absl::Status Commit(EpochPair next);

 private:
  explicit JobStateTable(std::unique_ptr<StateTable> table)
      : table_(std::move(table)) {}

  std::unique_ptr<StateTable> table_;
  // The row as last read or written (for Update's old value).
  std::optional<Row> row_;
};

// Reads the committed row of the job-state table `table_id` in `store`
// without writing anything (a throw-away instance). nullopt: no job yet.
// Errors: as InitEpoch.
absl::StatusOr<std::optional<SavedJob>> ReadCommittedJob(StateStore& store,
                                                         TableId table_id);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_JOB_STATE_TABLE_H_
