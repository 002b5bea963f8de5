// ColumnType: the whole type of a column or of a value inside one: a DataType
// and, for the nested types, their parts: a LIST's element type, a STRUCT's
// named fields (each with a stable id, as columns have). A scalar DataType
// converts to a ColumnType implicitly.
//
//   ColumnType tags = ColumnType::List(DataType::kVarchar);
//   ColumnType point = ColumnType::Struct(
//       {{"x", DataType::kFloat64, 1}, {"y", DataType::kFloat64, 2}});
//   std::string name = ColumnType::List(point).DebugString();
//                               // "LIST<STRUCT<x FLOAT64, y FLOAT64>>"
//
// Immutable; copies share the nested parts. Thread-safe.
#ifndef SERDE_COLUMN_TYPE_H_
#define SERDE_COLUMN_TYPE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "serde/data_type.h"

namespace backfill {

struct StructField;

class ColumnType {
 public:
  // A scalar type. REQUIRES: `id` is not kStruct or kList (use the
  // factories; checked by assert).
  ColumnType(DataType id);  // NOLINT: implicit, a scalar is a ColumnType

  static ColumnType List(ColumnType element);
  static ColumnType Struct(std::vector<StructField> fields);

  DataType id() const { return id_; }
  bool is_nested() const { return nested_ != nullptr; }

  // The DataType alone, for code that handles scalar types only: the storage
  // and executor stack reads ColumnDesc::type as a DataType until it carries
  // nested types (issue 21, point 6). Loses a nested type's parts.
  operator DataType() const { return id_; }  // NOLINT: implicit, see above

  // REQUIRES: id() == kList.
  const ColumnType& element() const;
  // REQUIRES: id() == kStruct.
  absl::Span<const StructField> fields() const;

  // "INT64", "LIST<VARCHAR>", "STRUCT<a INT64, b LIST<BYTEA>>".
  std::string DebugString() const;

  // Same id and same parts (field names, ids and types included).
  friend bool operator==(const ColumnType& a, const ColumnType& b);
  friend bool operator!=(const ColumnType& a, const ColumnType& b) {
    return !(a == b);
  }
  // A scalar ColumnType equals its DataType; a nested one none.
  friend bool operator==(const ColumnType& a, DataType b) {
    return !a.is_nested() && a.id_ == b;
  }

 private:
  struct Nested;
  ColumnType(DataType id, std::shared_ptr<const Nested> nested)
      : id_(id), nested_(std::move(nested)) {}

  DataType id_;
  std::shared_ptr<const Nested> nested_;  // null for scalars
};

struct StructField {
  std::string name;
  ColumnType type;
  // Stable, unique within the struct, >= 0: the column-aware value encoding
  // maps a struct's fields by id when the struct type evolves.
  int32_t id = 0;
};

// OK iff every STRUCT inside `type` has unique field names and unique,
// non-negative field ids. Errors: InvalidArgument naming the field and the
// path to it ("STRUCT<...>.a: duplicate field id 3").
absl::Status ValidateColumnType(const ColumnType& type);

// The nesting depth: 0 for a scalar, 1 + the deepest part otherwise.
int ColumnTypeDepth(const ColumnType& type);

}  // namespace backfill

#endif  // SERDE_COLUMN_TYPE_H_
