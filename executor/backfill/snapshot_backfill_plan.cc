#include "executor/backfill/snapshot_backfill_plan.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/plan_fields.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

namespace {

// The largest log budget a plan may ask for (64 GiB, as a job's).
constexpr uint64_t kMaxLogBudgetBytes = uint64_t{64} << 30;

}  // namespace

absl::StatusOr<std::unique_ptr<SnapshotBackfillExecutor>>
BuildSnapshotBackfillFromPlan(const proto::SnapshotBackfillNode& node,
                              StateStore& store, BoxedExecutor input,
                              const ArrangementBackfillDeps& deps) {
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog upstream,
      DecodePlanTable("upstream_table", node.has_upstream_table(),
                      node.upstream_table()));
  SnapshotBackfillOptions options;
  if (node.upstream_column_ids().empty()) {
    return absl::InvalidArgumentError("upstream_column_ids is empty");
  }
  for (int32_t id : node.upstream_column_ids()) {
    auto it = std::find_if(
        upstream.columns.begin(), upstream.columns.end(),
        [id](const ColumnDesc& column) { return column.column_id == id; });
    if (it == upstream.columns.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "upstream_column_ids: ", id, " is not a column of the upstream"));
    }
    const int index = static_cast<int>(it - upstream.columns.begin());
    if (std::find(options.upstream_columns.begin(),
                  options.upstream_columns.end(),
                  index) != options.upstream_columns.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("upstream_column_ids: ", id, " is repeated"));
    }
    options.upstream_columns.push_back(index);
  }
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog log_catalog,
      DecodePlanTable("log_table", node.has_log_table(), node.log_table()));
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog meta_catalog,
      DecodePlanTable("progress_table", node.has_progress_table(),
                      node.progress_table()));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeBitmap vnodes,
      DecodePlanVnodes(node.vnode_bitmap(), upstream.vnode_count));
  BACKFILL_RETURN_IF_ERROR(DecodePlanActorFields(node, deps, &options));
  BACKFILL_ASSIGN_OR_RETURN(
      options.output_indices,
      DecodePlanOutputIndices(node.output_indices(),
                              options.upstream_columns.size()));
  if (node.has_log_budget_bytes()) {
    if (node.log_budget_bytes() > kMaxLogBudgetBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("log_budget_bytes = ", node.log_budget_bytes(),
                       " is above ", kMaxLogBudgetBytes, " (64 GiB)"));
    }
    options.log_budget_bytes = node.log_budget_bytes();
  }
  // One vnode each, written without reads (see the executor's header).
  StateTableOptions internal;
  internal.op_consistency = OpConsistency::kInconsistent;
  if (log_catalog.vnode_count != 1 || meta_catalog.vnode_count != 1) {
    return absl::InvalidArgumentError(
        "log_table and progress_table must have one vnode");
  }
  absl::StatusOr<std::unique_ptr<StateTable>> log =
      StateTable::Create(log_catalog, store, VnodeBitmap::All(1), internal);
  if (!log.ok()) return PlanFieldError("log_table", log.status());
  absl::StatusOr<std::unique_ptr<StateTable>> meta =
      StateTable::Create(meta_catalog, store, VnodeBitmap::All(1), internal);
  if (!meta.ok()) return PlanFieldError("progress_table", meta.status());
  absl::StatusOr<std::unique_ptr<SnapshotBackfillExecutor>> executor =
      SnapshotBackfillExecutor::Create(
          store, upstream, vnodes, std::move(input), std::move(*log),
          std::move(*meta), deps.reporter, deps.metrics, options);
  if (!executor.ok()) return PlanFieldError("plan", executor.status());
  return executor;
}

}  // namespace backfill
