#include "serde/schema.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace backfill {

std::vector<DataType> ColumnTypes(absl::Span<const ColumnDesc> schema) {
  std::vector<DataType> types;
  types.reserve(schema.size());
  for (const ColumnDesc& column : schema) types.push_back(column.type);
  return types;
}

absl::Status ValidateSchema(absl::Span<const ColumnDesc> schema) {
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<int32_t> ids;
  for (size_t i = 0; i < schema.size(); ++i) {
    const ColumnDesc& column = schema[i];
    if (absl::Status status = ValidateColumnType(column.type); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", i, " (", column.name, "): ", status.message()));
    }
    if (column.column_id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("column ", i, " (", column.name,
                       ") has a negative column id ", column.column_id));
    }
    if (!names.insert(column.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate column name \"", column.name, "\" at ", i));
    }
    if (!ids.insert(column.column_id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate column id ", column.column_id, " at column ",
                       i, " (", column.name, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRow(absl::Span<const ColumnDesc> schema, RowView row) {
  if (row.size() != schema.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "row has ", row.size(), " datums, schema has ", schema.size()));
  }
  for (size_t i = 0; i < row.size(); ++i) {
    if (!DatumMatchesColumnType(row[i], schema[i].type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", i, " (", schema[i].name, ") expects ",
          schema[i].type.DebugString(), ", got ", DatumDebugString(row[i])));
    }
    if (IsNull(row[i]) && !schema[i].nullable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", i, " (", schema[i].name, ") is not nullable"));
    }
  }
  return absl::OkStatus();
}

}  // namespace backfill
