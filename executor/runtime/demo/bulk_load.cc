#include "executor/runtime/demo/bulk_load.h"

#include <memory>
#include <optional>
#include <vector>

#include "executor/runtime/demo/dml_source_executor.h"
#include "executor/runtime/demo/workload.h"
#include "serde/vnode_bitmap.h"
#include "storage/replicated_state_table.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// The offset-table row that says the load completed (the DML source keeps
// its offset at id 0).
constexpr int16_t kLoadedMarkerId = 1;

}  // namespace

absl::StatusOr<bool> InitialLoadComplete(StateStore& store,
                                         TableId source_offset_table_id) {
  const TableCatalog catalog =
      DmlSourceExecutor::OffsetTableCatalog(source_offset_table_id);
  std::vector<int32_t> column_ids;
  for (const ColumnDesc& column : catalog.columns) {
    column_ids.push_back(column.column_id);
  }
  // A replicated instance, not a StateTable: it is never part of a
  // checkpoint and writes nothing, so this works on a read-only store and
  // leaves the table free for the writer that loads the rows.
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<ReplicatedStateTable> table,
      ReplicatedStateTable::Create(catalog, store, VnodeBitmap::All(1),
                                   column_ids));
  const Epoch committed = store.CommittedEpoch(source_offset_table_id);
  BACKFILL_RETURN_IF_ERROR(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> marker,
                            table->GetRow(Row{kLoadedMarkerId}));
  return marker.has_value();
}

absl::StatusOr<bool> LoadInitialRows(StateStore& store,
                                     const StreamingJobOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(options.upstream));
  // Rows are a pure function of their key, so reloading is idempotent; the
  // marker row in the offset table says the load completed.
  BACKFILL_ASSIGN_OR_RETURN(
      const bool complete,
      InitialLoadComplete(store, options.source_offset_table_id));
  if (complete) return false;
  BACKFILL_ASSIGN_OR_RETURN(
      auto marker_table,
      StateTable::Create(
          DmlSourceExecutor::OffsetTableCatalog(options.source_offset_table_id),
          store, VnodeBitmap::All(1)));
  const Epoch committed = store.CommittedEpoch(options.upstream.table_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_RETURN_IF_ERROR(marker_table->InitEpoch(epoch));
  StateTableOptions table_options;
  table_options.op_consistency = OpConsistency::kInconsistent;
  BACKFILL_ASSIGN_OR_RETURN(
      auto table,
      StateTable::Create(options.upstream, store,
                         VnodeBitmap::All(options.upstream.vnode_count),
                         table_options));
  BACKFILL_RETURN_IF_ERROR(table->InitEpoch(epoch));
  constexpr uint64_t kRowsPerEpoch = 200000;
  for (uint64_t key = 0; key < options.initial_rows; ++key) {
    BACKFILL_RETURN_IF_ERROR(
        table->Insert(WorkloadRow(options.upstream, options.workload.seed, key,
                                  0, options.workload.null_fraction)));
    if ((key + 1) % kRowsPerEpoch == 0) {
      const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
      BACKFILL_RETURN_IF_ERROR(table->Commit(next));
      BACKFILL_RETURN_IF_ERROR(marker_table->Commit(next));
      BACKFILL_RETURN_IF_ERROR(store.Checkpoint(next.prev));
      epoch = next;
    }
  }
  BACKFILL_RETURN_IF_ERROR(
      marker_table->Insert(Row{kLoadedMarkerId, int64_t{1}}));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(marker_table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(store.Checkpoint(next.prev));
  return true;
}

}  // namespace backfill
