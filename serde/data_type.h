// Data types of table columns and their textual names.
//
//   DataType type = DataType::kInt64;
//   absl::string_view name = DataTypeName(type);   // "INT64"
//   bool fixed = IsFixedWidth(type);              // true
#ifndef SERDE_DATA_TYPE_H_
#define SERDE_DATA_TYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace backfill {

// The supported column types. The numeric values are persisted (catalogs,
// column-aware rows): never change them.
enum class DataType : uint8_t {
  kBoolean = 1,
  kInt16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kFloat32 = 5,
  kFloat64 = 6,
  kDecimal = 7,     // at least 28 significant digits, a scale; NaN, +-Infinity
  kVarchar = 8,     // UTF-8 text, any bytes accepted
  kBytea = 9,       // arbitrary bytes
  kDate = 10,       // days since 1970-01-01
  kTime = 11,       // microseconds since midnight, [0, 86400 * 10^6)
  kTimestamp = 12,  // microseconds since 1970-01-01 00:00:00 (no time zone)
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::kBoolean, DataType::kInt16,   DataType::kInt32,
    DataType::kInt64,   DataType::kFloat32, DataType::kFloat64,
    DataType::kDecimal, DataType::kVarchar, DataType::kBytea,
    DataType::kDate,    DataType::kTime,    DataType::kTimestamp};

// "BOOLEAN", "INT16", ... ; "UNKNOWN(n)"-free: every enumerator has a name.
absl::string_view DataTypeName(DataType type);

// The type whose persisted numeric value is `value`, or nullopt.
std::optional<DataType> DataTypeFromValue(int value);

}  // namespace backfill

#endif  // SERDE_DATA_TYPE_H_
