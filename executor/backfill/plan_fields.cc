#include "executor/backfill/plan_fields.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {

absl::Status PlanFieldError(absl::string_view field,
                            const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", status.message()));
}

absl::StatusOr<TableCatalog> DecodePlanTable(absl::string_view field,
                                             bool present,
                                             const proto::TableCatalog& table) {
  if (!present) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is missing"));
  }
  absl::StatusOr<TableCatalog> catalog = TableCatalogFromProto(table);
  if (!catalog.ok()) return PlanFieldError(field, catalog.status());
  return catalog;
}

absl::Status CheckProgressTableId(const TableCatalog& upstream,
                                  const TableCatalog& progress) {
  if (progress.table_id == upstream.table_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress_table.table_id = ", progress.table_id,
                     " equals upstream_table.table_id"));
  }
  return absl::OkStatus();
}

absl::StatusOr<VnodeBitmap> DecodePlanVnodes(absl::string_view vnode_bitmap,
                                             int vnode_count) {
  if (vnode_bitmap.empty()) return VnodeBitmap::All(vnode_count);
  absl::StatusOr<VnodeBitmap> decoded = VnodeBitmap::Deserialize(vnode_bitmap);
  if (!decoded.ok()) return PlanFieldError("vnode_bitmap", decoded.status());
  if (static_cast<int>(decoded->size()) != vnode_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("vnode_bitmap has ", decoded->size(),
                     " vnodes but the upstream table has ", vnode_count));
  }
  if (decoded->Count() == 0) {
    return absl::InvalidArgumentError("vnode_bitmap owns no vnode");
  }
  return decoded;
}

absl::StatusOr<uint32_t> DecodePlanChunkSize(uint32_t chunk_size) {
  if (chunk_size > kMaxPlanChunkSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "chunk_size = ", chunk_size, " is above ", kMaxPlanChunkSize));
  }
  return chunk_size == 0 ? 256 : chunk_size;
}

absl::StatusOr<std::vector<int>> DecodePlanOutputIndices(
    absl::Span<const uint32_t> output_indices, size_t num_columns) {
  std::vector<int> decoded;
  decoded.reserve(output_indices.size());
  for (size_t i = 0; i < output_indices.size(); ++i) {
    if (output_indices[i] >= num_columns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output_indices[", i, "] = ", output_indices[i], " is out of range (",
          num_columns, " upstream columns)"));
    }
    decoded.push_back(static_cast<int>(output_indices[i]));
  }
  return decoded;
}

}  // namespace backfill
