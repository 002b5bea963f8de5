#include "executor/backfill/arrangement_backfill_plan.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/plan_fields.h"
#include "serde/vnode_bitmap.h"
#include "storage/replicated_state_table.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>>
BuildArrangementBackfillFromPlan(const proto::ArrangementBackfillNode& node,
                                 StateStore& store, BoxedExecutor upstream,
                                 const ArrangementBackfillDeps& deps) {
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog upstream_catalog,
      DecodePlanTable("upstream_table", node.has_upstream_table(),
                      node.upstream_table()));
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog progress_catalog,
      DecodePlanTable("progress_table", node.has_progress_table(),
                      node.progress_table()));
  BACKFILL_RETURN_IF_ERROR(
      CheckProgressTableId(upstream_catalog, progress_catalog));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeBitmap vnodes,
      DecodePlanVnodes(node.vnode_bitmap(), upstream_catalog.vnode_count));
  ArrangementBackfillOptions options;
  BACKFILL_RETURN_IF_ERROR(DecodePlanActorFields(node, deps, &options));
  if (node.upstream_column_ids().empty()) {
    return absl::InvalidArgumentError("upstream_column_ids is empty");
  }
  std::vector<int32_t> column_ids(node.upstream_column_ids().begin(),
                                  node.upstream_column_ids().end());
  absl::StatusOr<std::unique_ptr<ReplicatedStateTable>> replicated =
      ReplicatedStateTable::Create(upstream_catalog, store, vnodes, column_ids);
  if (!replicated.ok()) {
    return PlanFieldError("upstream_column_ids", replicated.status());
  }
  if (node.has_upstream_buffer_budget_bytes()) {
    options.upstream_buffer_budget_bytes =
        static_cast<size_t>(node.upstream_buffer_budget_bytes());
  }
  BACKFILL_ASSIGN_OR_RETURN(
      options.output_indices,
      DecodePlanOutputIndices(node.output_indices(), column_ids.size()));
  absl::StatusOr<std::unique_ptr<StateTable>> progress =
      StateTable::Create(progress_catalog, store, vnodes);
  if (!progress.ok()) {
    return PlanFieldError("progress_table", progress.status());
  }
  absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>> executor =
      ArrangementBackfillExecutor::Create(
          std::move(*replicated), std::move(upstream), std::move(*progress),
          deps.reporter, deps.metrics, options);
  if (!executor.ok()) return PlanFieldError("plan", executor.status());
  return executor;
}

}  // namespace backfill
