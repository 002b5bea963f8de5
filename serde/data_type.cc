#include "serde/data_type.h"

namespace backfill {

absl::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kBoolean:
      return "BOOLEAN";
    case DataType::kInt16:
      return "INT16";
    case DataType::kInt32:
      return "INT32";
    case DataType::kInt64:
      return "INT64";
    case DataType::kFloat32:
      return "FLOAT32";
    case DataType::kFloat64:
      return "FLOAT64";
    case DataType::kDecimal:
      return "DECIMAL";
    case DataType::kVarchar:
      return "VARCHAR";
    case DataType::kBytea:
      return "BYTEA";
    case DataType::kDate:
      return "DATE";
    case DataType::kTime:
      return "TIME";
    case DataType::kTimestamp:
      return "TIMESTAMP";
    case DataType::kTimestamptz:
      return "TIMESTAMPTZ";
    case DataType::kInterval:
      return "INTERVAL";
    case DataType::kSerial:
      return "SERIAL";
    case DataType::kInt256:
      return "INT256";
    case DataType::kStruct:
      return "STRUCT";
    case DataType::kList:
      return "LIST";
    case DataType::kJsonb:
      return "JSONB";
    case DataType::kMap:
      return "MAP";
  }
  return "INVALID";
}

std::optional<DataType> DataTypeFromValue(int value) {
  if (value < static_cast<int>(DataType::kBoolean) ||
      value > static_cast<int>(DataType::kMap)) {
    return std::nullopt;
  }
  return static_cast<DataType>(value);
}

}  // namespace backfill
