// The fields every backfill plan node (ArrangementBackfillNode,
// NoShuffleBackfillNode, SnapshotBackfillNode; plan.proto) carries, decoded
// and validated the same way for every plan builder.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(TableCatalog upstream,
//       DecodePlanTable("upstream_table", node.has_upstream_table(),
//                       node.upstream_table()));
//   BACKFILL_RETURN_IF_ERROR(DecodePlanActorFields(node, deps, &options));
// clang-format on
//
// Errors: InvalidArgument, the message starting with the field's name and
// ending with the values that matter (the texts the plan builders' headers
// promise). Thread-safety: pure functions.
#ifndef EXECUTOR_BACKFILL_PLAN_FIELDS_H_
#define EXECUTOR_BACKFILL_PLAN_FIELDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ratelimit/rate_limit.h"
#include "serde/vnode_bitmap.h"
#include "storage/table_catalog.h"

namespace backfill {

// `status` as InvalidArgument with "<field>: " before its message.
absl::Status PlanFieldError(absl::string_view field,
                            const absl::Status& status);

// A table catalog field: "<field> is missing" when absent, "<field>: ..."
// when TableCatalogFromProto refuses it.
absl::StatusOr<TableCatalog> DecodePlanTable(absl::string_view field,
                                             bool present,
                                             const proto::TableCatalog& table);

// The progress table must be another table than the upstream one.
absl::Status CheckProgressTableId(const TableCatalog& upstream,
                                  const TableCatalog& progress);

// `vnode_bitmap` (VnodeBitmap::Serialize): empty = every one of
// `vnode_count` vnodes; else it must decode, have `vnode_count` vnodes and
// own at least one.
absl::StatusOr<VnodeBitmap> DecodePlanVnodes(absl::string_view vnode_bitmap,
                                             int vnode_count);

// The largest chunk_size a plan may ask for.
inline constexpr uint32_t kMaxPlanChunkSize = 1u << 20;
// `chunk_size`: 0 = 256; at most kMaxPlanChunkSize.
absl::StatusOr<uint32_t> DecodePlanChunkSize(uint32_t chunk_size);

// The actor's fields of any backfill node into `options` (the options
// struct of its kind): actor_id, fragment_id, rate_limit (absent =
// Disabled, 0 = Pause), chunk_size (DecodePlanChunkSize), and the clock and
// output_ready of `deps` (ArrangementBackfillDeps). Errors: chunk_size's.
template <typename Node, typename Deps, typename Options>
absl::Status DecodePlanActorFields(const Node& node, const Deps& deps,
                                   Options* options) {
  absl::StatusOr<uint32_t> chunk_size = DecodePlanChunkSize(node.chunk_size());
  if (!chunk_size.ok()) return chunk_size.status();
  options->chunk_size = *chunk_size;
  options->actor_id = node.actor_id();
  options->fragment_id = node.fragment_id();
  options->rate_limit = node.has_rate_limit()
                            ? RateLimit::FromOptionalU32(node.rate_limit())
                            : RateLimit::Disabled();
  options->clock = deps.clock;
  options->output_ready = deps.output_ready;
  return absl::OkStatus();
}

// `output_indices`, each < `num_columns` (the columns they index).
absl::StatusOr<std::vector<int>> DecodePlanOutputIndices(
    absl::Span<const uint32_t> output_indices, size_t num_columns);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_PLAN_FIELDS_H_
