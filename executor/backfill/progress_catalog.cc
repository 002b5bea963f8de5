#include "executor/backfill/progress_catalog.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace backfill {

TableCatalog BackfillProgressCatalog(const TableCatalog& upstream,
                                     TableId progress_table_id) {
  TableCatalog catalog;
  catalog.table_id = progress_table_id;
  catalog.name = absl::StrCat(upstream.name, "_backfill_progress");
  catalog.columns.push_back({"vnode", DataType::kInt16, 0, false});
  int32_t column_id = 1;
  for (int pk_column : upstream.pk_indices) {
    ColumnDesc column = upstream.columns[pk_column];
    column.column_id = column_id++;
    column.nullable = true;  // all-NULL for a vnode that finished empty
    catalog.columns.push_back(column);
  }
  catalog.columns.push_back(
      {"backfill_finished", DataType::kBoolean, column_id++, false});
  catalog.columns.push_back(
      {"row_count", DataType::kInt64, column_id++, false});
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_column = 0;
  catalog.vnode_count = upstream.vnode_count;
  catalog.value_encoding = ValueEncoding::kPositional;
  for (size_t i = 1; i < catalog.columns.size(); ++i) {
    catalog.value_indices.push_back(static_cast<int>(i));
  }
  return catalog;
}

absl::Status ValidateProgressCatalog(const TableCatalog& upstream,
                                     const TableCatalog& progress) {
  const TableCatalog expected = BackfillProgressCatalog(upstream, 0);
  bool shape_ok = progress.columns.size() == expected.columns.size() &&
                  progress.pk_indices == expected.pk_indices &&
                  progress.vnode_column == expected.vnode_column &&
                  progress.vnode_count == expected.vnode_count;
  for (size_t i = 0; shape_ok && i < expected.columns.size(); ++i) {
    shape_ok = progress.columns[i].type == expected.columns[i].type;
  }
  if (!shape_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress_table (", progress.DebugString(),
                     ") does not have the backfill progress shape for ",
                     upstream.DebugString()));
  }
  // What EncodeProgressValue writes must read back: every column but the
  // vnode (the key) is stored in the value, and the position columns take
  // NULL (the position of a vnode that finished empty). Otherwise the
  // executor would persist progress that a restart fails to load (DataLoss);
  // regression inputs regress_progress_not_stored and
  // regress_progress_not_nullable of arrangement_backfill_plan_fuzz.
  for (size_t i = 1; i < expected.columns.size(); ++i) {
    const ColumnDesc& column = progress.columns[i];
    if (std::find(progress.value_indices.begin(), progress.value_indices.end(),
                  static_cast<int>(i)) == progress.value_indices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "progress_table column ", i, " (", column.name,
          ") is not in value_indices: the progress would not be stored"));
    }
    if (expected.columns[i].nullable && !column.nullable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "progress_table column ", i, " (", column.name,
          ") is not nullable: the position of a vnode that finished empty "
          "is NULL"));
    }
  }
  return absl::OkStatus();
}

}  // namespace backfill
