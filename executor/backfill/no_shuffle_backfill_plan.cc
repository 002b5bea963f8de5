#include "executor/backfill/no_shuffle_backfill_plan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/plan_fields.h"
#include "serde/vnode_bitmap.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>>
BuildNoShuffleBackfillFromPlan(const proto::NoShuffleBackfillNode& node,
                               StateStore& store, StateTable& writer_table,
                               BoxedExecutor writer,
                               const ArrangementBackfillDeps& deps) {
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog upstream_catalog,
      DecodePlanTable("upstream_table", node.has_upstream_table(),
                      node.upstream_table()));
  // Co-location: the node must describe the table the writer writes.
  if (TableCatalogToProto(upstream_catalog).SerializeAsString() !=
      TableCatalogToProto(writer_table.catalog()).SerializeAsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat("upstream_table (table ", upstream_catalog.table_id,
                     ") is not the writer's table (table ",
                     writer_table.catalog().table_id, ")"));
  }
  BACKFILL_ASSIGN_OR_RETURN(
      TableCatalog progress_catalog,
      DecodePlanTable("progress_table", node.has_progress_table(),
                      node.progress_table()));
  BACKFILL_RETURN_IF_ERROR(
      CheckProgressTableId(upstream_catalog, progress_catalog));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeBitmap vnodes,
      DecodePlanVnodes(node.vnode_bitmap(), upstream_catalog.vnode_count));
  if (!(vnodes == writer_table.vnodes())) {
    return absl::InvalidArgumentError(
        "vnode_bitmap is not the writer's vnodes (a no-shuffle backfill owns "
        "exactly its upstream writer's vnodes)");
  }
  NoShuffleBackfillOptions options;
  BACKFILL_RETURN_IF_ERROR(DecodePlanActorFields(node, deps, &options));
  BACKFILL_ASSIGN_OR_RETURN(
      options.output_indices,
      DecodePlanOutputIndices(node.output_indices(),
                              upstream_catalog.columns.size()));
  absl::StatusOr<std::unique_ptr<StateTable>> progress =
      StateTable::Create(progress_catalog, store, vnodes);
  if (!progress.ok()) {
    return PlanFieldError("progress_table", progress.status());
  }
  absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>> executor =
      NoShuffleBackfillExecutor::Create(writer_table, std::move(writer),
                                        std::move(*progress), deps.reporter,
                                        deps.metrics, options);
  if (!executor.ok()) return PlanFieldError("plan", executor.status());
  return executor;
}

}  // namespace backfill
