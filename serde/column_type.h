// ColumnType: the whole type of a column or of a value inside one: a DataType
// and, for the nested types, their parts: a LIST's element type, a STRUCT's
// named fields (each with a stable id, as columns have), a MAP's key and
// value types. A scalar DataType (JSONB included) converts to a ColumnType
// implicitly.
//
//   ColumnType tags = ColumnType::List(DataType::kVarchar);
//   ColumnType point = ColumnType::Struct(
//       {{"x", DataType::kFloat64, 1}, {"y", DataType::kFloat64, 2}});
//   std::string name = ColumnType::List(point).DebugString();
//                               // "LIST<STRUCT<x FLOAT64, y FLOAT64>>"
//   ColumnType m = ColumnType::Map(DataType::kVarchar, DataType::kJsonb);
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
  // A scalar type. REQUIRES: `id` is not kStruct, kList or kMap (use the
  // factories; checked by assert).
  ColumnType(DataType id);  // NOLINT: implicit, a scalar is a ColumnType

  static ColumnType List(ColumnType element);
  static ColumnType Struct(std::vector<StructField> fields);
  // A MAP; ValidateColumnType checks that `key` is a valid map key type
  // (IsValidMapKeyType).
  static ColumnType Map(ColumnType key, ColumnType value);

  DataType id() const { return id_; }
  bool is_nested() const { return nested_ != nullptr; }

  // The DataType alone, for code that needs no parts (key layouts, which
  // take scalar types only; chunk column tags; datum dispatch). Loses a
  // nested type's parts: code that encodes, prints or generates values of
  // a column takes its whole ColumnType.
  operator DataType() const { return id_; }  // NOLINT: implicit, see above

  // REQUIRES: id() == kList.
  const ColumnType& element() const;
  // REQUIRES: id() == kStruct.
  absl::Span<const StructField> fields() const;
  // REQUIRES: id() == kMap.
  const ColumnType& map_key() const;
  const ColumnType& map_value() const;

  // "INT64", "LIST<VARCHAR>", "STRUCT<a INT64, b LIST<BYTEA>>",
  // "MAP<VARCHAR, JSONB>".
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
// non-negative field ids, and every MAP inside has a valid key type.
// Errors: InvalidArgument naming the field and the path to it
// ("STRUCT<...>.a: duplicate field id 3", "MAP<FLOAT64, INT32>: ...").
absl::Status ValidateColumnType(const ColumnType& type);

// The map key types RisingWave allows: INT16, INT32, INT64 and VARCHAR
// (integral and string types; no floats, decimals, times or nested types).
bool IsValidMapKeyType(const ColumnType& type);

// OK iff a column of `type` may be in a primary key, an order key or a
// distribution key: every type but JSONB and MAP, at any depth (a LIST of
// JSONB neither). JSONB has no SQL order (RisingWave rejects JSONB in stream
// keys; its JSONB key bytes are only the text, whose order is not
// PostgreSQL's); a MAP has none either (RisingWave refuses to compare maps).
// Errors: InvalidArgument naming the type and why.
absl::Status ValidateKeyColumnType(const ColumnType& type);

// The nesting depth: 0 for a scalar, 1 + the deepest part otherwise.
int ColumnTypeDepth(const ColumnType& type);

}  // namespace backfill

#endif  // SERDE_COLUMN_TYPE_H_
