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
  kTimestamptz = 13,  // an instant: microseconds since 1970-01-01 00:00 UTC
  kInterval = 14,     // months, days, microseconds; '1 mon' = '30 days'
  kJsonb = 15,        // a JSON value (serde/jsonb.h); not a key type
  kSerial = 16,  // RisingWave's row-id type: an int64 of its own type
  kInt256 = 17,  // 256-bit two's-complement integer
  // The nested types: a column of one needs a ColumnType (serde/column_type.h)
  // for its parts.
  kStruct = 18,  // named, typed fields
  kList = 19,    // elements of one type, any length
  kMap = 20,     // key type -> value type, unique non-NULL keys; not a key
};

// The twelve scalar types of the first version. Fuzz input layouts, random
// tables and chunk literals index into this list, so it keeps its length
// and order; the types added by issue 21 are in kAllScalarDataTypes and
// below, and catalogs and scenarios carry all of them (issue 21, point 6).
inline constexpr DataType kAllDataTypes[] = {
    DataType::kBoolean, DataType::kInt16,   DataType::kInt32,
    DataType::kInt64,   DataType::kFloat32, DataType::kFloat64,
    DataType::kDecimal, DataType::kVarchar, DataType::kBytea,
    DataType::kDate,    DataType::kTime,    DataType::kTimestamp};

// Every scalar key type serde encodes: kAllDataTypes, then the added ones.
// (JSONB, also scalar, is not a key type and not listed: ColumnType's
// ValidateKeyColumnType.)
inline constexpr DataType kAllScalarDataTypes[] = {
    DataType::kBoolean,     DataType::kInt16,    DataType::kInt32,
    DataType::kInt64,       DataType::kFloat32,  DataType::kFloat64,
    DataType::kDecimal,     DataType::kVarchar,  DataType::kBytea,
    DataType::kDate,        DataType::kTime,     DataType::kTimestamp,
    DataType::kTimestamptz, DataType::kInterval, DataType::kSerial,
    DataType::kInt256};

// "BOOLEAN", "INT16", ... ; "UNKNOWN(n)"-free: every enumerator has a name.
absl::string_view DataTypeName(DataType type);

// The DataType whose persisted numeric value is `value` (1 .. 20, the
// nested types included), or nullopt. Catalogs and scenarios read their
// column types through this.
std::optional<DataType> DataTypeFromValue(int value);

}  // namespace backfill

#endif  // SERDE_DATA_TYPE_H_
