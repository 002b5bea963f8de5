// Column schema: the name, type and stable id of each column of a table.
//
//   Schema schema = {{"id", DataType::kInt64, /*column_id=*/1, false},
//                    {"name", DataType::kVarchar, 2}};
//   std::vector<DataType> types = ColumnTypes(schema);
//
// Column ids never change for a column and are never reused; they let the
// column-aware value codec decode rows written under older or newer schemas.
#ifndef SERDE_SCHEMA_H_
#define SERDE_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/row.h"

namespace backfill {

struct ColumnDesc {
  std::string name;
  // A DataType converts to it (and it back to its DataType, for the code that
  // handles scalar types only).
  ColumnType type = DataType::kInt64;
  // Stable id, unique within the table; >= 0.
  int32_t column_id = 0;
  bool nullable = true;
};

using Schema = std::vector<ColumnDesc>;

std::vector<DataType> ColumnTypes(absl::Span<const ColumnDesc> schema);

// OK iff names and column ids are unique, ids are non-negative and every
// column type is valid (ValidateColumnType); otherwise InvalidArgument naming
// the offending column.
absl::Status ValidateSchema(absl::Span<const ColumnDesc> schema);

// OK iff `row` has one datum per column, each NULL or of the column's type
// (DatumMatchesColumnType), and no NULL in a non-nullable column; otherwise
// InvalidArgument naming the column.
absl::Status ValidateRow(absl::Span<const ColumnDesc> schema, RowView row);

}  // namespace backfill

#endif  // SERDE_SCHEMA_H_
