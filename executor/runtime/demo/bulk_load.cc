#include "executor/runtime/demo/bulk_load.h"

#include <optional>

#include "executor/runtime/demo/dml_source_executor.h"
#include "executor/runtime/demo/workload.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::StatusOr<bool> LoadInitialRows(StateStore& store,
                                     const StreamingJobOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(options.upstream));
  // Rows are a pure function of their key, so reloading is idempotent; the
  // "loaded" row in the offset table says the load completed.
  BACKFILL_ASSIGN_OR_RETURN(
      auto marker_table,
      StateTable::Create(
          DmlSourceExecutor::OffsetTableCatalog(options.source_offset_table_id),
          store, VnodeBitmap::All(1)));
  const Epoch committed = store.CommittedEpoch(options.upstream.table_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_RETURN_IF_ERROR(marker_table->InitEpoch(epoch));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> loaded,
                            marker_table->GetRow(Row{int16_t{1}}));
  if (loaded.has_value()) return false;
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
  BACKFILL_RETURN_IF_ERROR(marker_table->Insert(Row{int16_t{1}, int64_t{1}}));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(marker_table->Commit(next));
  BACKFILL_RETURN_IF_ERROR(store.Checkpoint(next.prev));
  return true;
}

}  // namespace backfill
