// The fields both backfill plan nodes (ArrangementBackfillNode and
// NoShuffleBackfillNode, plan.proto) carry, decoded and validated the same
// way for both plan builders.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(TableCatalog upstream,
//       DecodePlanTable("upstream_table", node.has_upstream_table(),
//                       node.upstream_table()));
//   BACKFILL_ASSIGN_OR_RETURN(uint32_t chunk_size,
//                             DecodePlanChunkSize(node.chunk_size()));
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

// `output_indices`, each < `num_columns` (the columns they index).
absl::StatusOr<std::vector<int>> DecodePlanOutputIndices(
    absl::Span<const uint32_t> output_indices, size_t num_columns);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_PLAN_FIELDS_H_
