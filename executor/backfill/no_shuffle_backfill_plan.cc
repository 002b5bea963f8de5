#include "executor/backfill/no_shuffle_backfill_plan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/plan.pb.h"
#include "serde/vnode_bitmap.h"
#include "storage/table_catalog.h"

namespace backfill {
namespace {

absl::Status Prefixed(absl::string_view field, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>>
BuildNoShuffleBackfillFromPlan(const proto::NoShuffleBackfillNode& node,
                               StateStore& store, StateTable& writer_table,
                               BoxedExecutor writer,
                               const ArrangementBackfillDeps& deps) {
  if (!node.has_upstream_table()) {
    return absl::InvalidArgumentError("upstream_table is missing");
  }
  absl::StatusOr<TableCatalog> upstream_catalog =
      TableCatalogFromProto(node.upstream_table());
  if (!upstream_catalog.ok()) {
    return Prefixed("upstream_table", upstream_catalog.status());
  }
  // Co-location: the node must describe the table the writer writes.
  if (TableCatalogToProto(*upstream_catalog).SerializeAsString() !=
      TableCatalogToProto(writer_table.catalog()).SerializeAsString()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upstream_table (table ", upstream_catalog->table_id,
        ") is not the writer's table (table ", writer_table.catalog().table_id,
        ")"));
  }
  if (!node.has_progress_table()) {
    return absl::InvalidArgumentError("progress_table is missing");
  }
  absl::StatusOr<TableCatalog> progress_catalog =
      TableCatalogFromProto(node.progress_table());
  if (!progress_catalog.ok()) {
    return Prefixed("progress_table", progress_catalog.status());
  }
  if (progress_catalog->table_id == upstream_catalog->table_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress_table.table_id = ", progress_catalog->table_id,
                     " equals upstream_table.table_id"));
  }
  const int vnode_count = upstream_catalog->vnode_count;
  VnodeBitmap vnodes = VnodeBitmap::All(vnode_count);
  if (!node.vnode_bitmap().empty()) {
    absl::StatusOr<VnodeBitmap> decoded =
        VnodeBitmap::Deserialize(absl::string_view(node.vnode_bitmap().data(),
                                                   node.vnode_bitmap().size()));
    if (!decoded.ok()) return Prefixed("vnode_bitmap", decoded.status());
    if (static_cast<int>(decoded->size()) != vnode_count) {
      return absl::InvalidArgumentError(
          absl::StrCat("vnode_bitmap has ", decoded->size(),
                       " vnodes but the upstream table has ", vnode_count));
    }
    if (decoded->Count() == 0) {
      return absl::InvalidArgumentError("vnode_bitmap owns no vnode");
    }
    vnodes = std::move(*decoded);
  }
  if (!(vnodes == writer_table.vnodes())) {
    return absl::InvalidArgumentError(
        "vnode_bitmap is not the writer's vnodes (a no-shuffle backfill owns "
        "exactly its upstream writer's vnodes)");
  }
  if (node.chunk_size() > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk_size = ", node.chunk_size(), " is above 1048576"));
  }
  NoShuffleBackfillOptions options;
  options.actor_id = node.actor_id();
  options.fragment_id = node.fragment_id();
  options.chunk_size = node.chunk_size() == 0 ? 256 : node.chunk_size();
  options.rate_limit = node.has_rate_limit()
                           ? RateLimit::FromOptionalU32(node.rate_limit())
                           : RateLimit::Disabled();
  options.clock = deps.clock;
  options.output_ready = deps.output_ready;
  const size_t num_columns = upstream_catalog->columns.size();
  for (int i = 0; i < node.output_indices_size(); ++i) {
    const uint32_t index = node.output_indices(i);
    if (index >= num_columns) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_indices[", i, "] = ", index,
                       " is out of range (", num_columns, " upstream columns)"));
    }
    options.output_indices.push_back(static_cast<int>(index));
  }
  absl::StatusOr<std::unique_ptr<StateTable>> progress =
      StateTable::Create(*progress_catalog, store, vnodes);
  if (!progress.ok()) return Prefixed("progress_table", progress.status());
  absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>> executor =
      NoShuffleBackfillExecutor::Create(writer_table, std::move(writer),
                                        std::move(*progress), deps.reporter,
                                        deps.metrics, options);
  if (!executor.ok()) return Prefixed("plan", executor.status());
  return executor;
}

}  // namespace backfill
