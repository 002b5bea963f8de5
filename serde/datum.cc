#include "serde/datum.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace backfill {
namespace {

template <typename T>
int Ordered(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// -0.0 == 0.0; NaN above +Infinity; NaNs equal.
template <typename F>
int CompareFloats(F a, F b) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan || b_nan) return a_nan == b_nan ? 0 : (a_nan ? 1 : -1);
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareValues(const Datum& a, const Datum& b);

// Nested datums: ascending, NULL above every value.
int CompareNested(const Datum& a, const Datum& b) {
  const bool a_null = IsNull(a), b_null = IsNull(b);
  if (a_null || b_null) return a_null == b_null ? 0 : (a_null ? 1 : -1);
  return CompareValues(a, b);
}

int CompareSequences(const std::vector<Datum>& a, const std::vector<Datum>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (const int c = CompareNested(a[i], b[i]); c != 0) return c;
  }
  return Ordered(a.size(), b.size());
}

// Ascending comparison of two non-NULL datums of the same alternative.
int CompareValues(const Datum& a, const Datum& b) {
  assert(a.index() == b.index());
  switch (a.index()) {
    case 1:
      return Ordered(std::get<bool>(a), std::get<bool>(b));
    case 2:
      return Ordered(std::get<int16_t>(a), std::get<int16_t>(b));
    case 3:
      return Ordered(std::get<int32_t>(a), std::get<int32_t>(b));
    case 4:
      return Ordered(std::get<int64_t>(a), std::get<int64_t>(b));
    case 5:
      return CompareFloats(std::get<float>(a), std::get<float>(b));
    case 6:
      return CompareFloats(std::get<double>(a), std::get<double>(b));
    case 7:
      return std::get<Decimal>(a).Compare(std::get<Decimal>(b));
    case 8: {
      const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 9:
      return Ordered(std::get<Date>(a), std::get<Date>(b));
    case 10:
      return Ordered(std::get<TimeOfDay>(a), std::get<TimeOfDay>(b));
    case 11:
      return Ordered(std::get<Timestamp>(a), std::get<Timestamp>(b));
    case 12:
      return Ordered(std::get<Timestamptz>(a), std::get<Timestamptz>(b));
    case 13:
      return CompareIntervals(std::get<Interval>(a), std::get<Interval>(b));
    case 14:
      return Ordered(std::get<Serial>(a), std::get<Serial>(b));
    case 15:
      return std::get<Int256>(a).Compare(std::get<Int256>(b));
    case 16:
      return CompareSequences(std::get<ListValue>(a).elements,
                              std::get<ListValue>(b).elements);
    case 17:
      return CompareSequences(std::get<StructValue>(a).fields,
                              std::get<StructValue>(b).fields);
    case 18:
      return CompareJsonb(std::get<Jsonb>(a), std::get<Jsonb>(b));
    case 19: {
      const std::vector<MapEntry>& x = std::get<MapValue>(a).entries;
      const std::vector<MapEntry>& y = std::get<MapValue>(b).entries;
      const size_t n = std::min(x.size(), y.size());
      for (size_t i = 0; i < n; ++i) {
        if (const int c = CompareNested(x[i].key, y[i].key); c != 0) return c;
        if (const int c = CompareNested(x[i].value, y[i].value); c != 0) {
          return c;
        }
      }
      return Ordered(x.size(), y.size());
    }
  }
  return 0;
}

}  // namespace

bool DatumMatchesType(const Datum& datum, DataType type) {
  switch (datum.index()) {
    case 0:
      return true;
    case 1:
      return type == DataType::kBoolean;
    case 2:
      return type == DataType::kInt16;
    case 3:
      return type == DataType::kInt32;
    case 4:
      return type == DataType::kInt64;
    case 5:
      return type == DataType::kFloat32;
    case 6:
      return type == DataType::kFloat64;
    case 7:
      return type == DataType::kDecimal;
    case 8:
      return type == DataType::kVarchar || type == DataType::kBytea;
    case 9:
      return type == DataType::kDate;
    case 10:
      return type == DataType::kTime;
    case 11:
      return type == DataType::kTimestamp;
    case 12:
      return type == DataType::kTimestamptz;
    case 13:
      return type == DataType::kInterval;
    case 14:
      return type == DataType::kSerial;
    case 15:
      return type == DataType::kInt256;
    case 16:
      return type == DataType::kList;
    case 17:
      return type == DataType::kStruct;
    case 18:
      return type == DataType::kJsonb;
    case 19:
      return type == DataType::kMap;
  }
  return false;
}

absl::StatusOr<MapValue> MakeMapValue(std::vector<MapEntry> entries) {
  for (const MapEntry& entry : entries) {
    if (IsNull(entry.key)) {
      return absl::InvalidArgumentError("map keys must not be NULL");
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const MapEntry& a, const MapEntry& b) {
              return CompareValues(a.key, b.key) < 0;
            });
  for (size_t i = 1; i < entries.size(); ++i) {
    if (CompareValues(entries[i - 1].key, entries[i].key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("map keys must be unique: ",
                       DatumDebugString(entries[i].key), " twice"));
    }
  }
  return MapValue{std::move(entries)};
}

bool DatumMatchesColumnType(const Datum& datum, const ColumnType& type) {
  if (!DatumMatchesType(datum, type.id())) return false;
  if (IsNull(datum)) return true;
  switch (type.id()) {
    case DataType::kList:
      for (const Datum& element : std::get<ListValue>(datum).elements) {
        if (!DatumMatchesColumnType(element, type.element())) return false;
      }
      return true;
    case DataType::kStruct: {
      const std::vector<Datum>& fields = std::get<StructValue>(datum).fields;
      if (fields.size() != type.fields().size()) return false;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!DatumMatchesColumnType(fields[i], type.fields()[i].type)) {
          return false;
        }
      }
      return true;
    }
    case DataType::kMap: {
      const std::vector<MapEntry>& entries = std::get<MapValue>(datum).entries;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (IsNull(entries[i].key) ||
            !DatumMatchesColumnType(entries[i].key, type.map_key()) ||
            !DatumMatchesColumnType(entries[i].value, type.map_value())) {
          return false;
        }
        if (i > 0 && CompareValues(entries[i - 1].key, entries[i].key) >= 0) {
          return false;  // unsorted or duplicate keys
        }
      }
      return true;
    }
    default:
      return true;
  }
}

Datum DefaultDatum(DataType type) {
  switch (type) {
    case DataType::kBoolean:
      return false;
    case DataType::kInt16:
      return int16_t{0};
    case DataType::kInt32:
      return int32_t{0};
    case DataType::kInt64:
      return int64_t{0};
    case DataType::kFloat32:
      return 0.0f;
    case DataType::kFloat64:
      return 0.0;
    case DataType::kDecimal:
      return Decimal();
    case DataType::kVarchar:
    case DataType::kBytea:
      return std::string();
    case DataType::kDate:
      return Date{};
    case DataType::kTime:
      return TimeOfDay{};
    case DataType::kTimestamp:
      return Timestamp{};
    case DataType::kTimestamptz:
      return Timestamptz{};
    case DataType::kInterval:
      return Interval{};
    case DataType::kSerial:
      return Serial{};
    case DataType::kInt256:
      return Int256();
    case DataType::kList:
      return ListValue{};
    case DataType::kStruct:
      return StructValue{};
    case DataType::kJsonb:
      return Jsonb();
    case DataType::kMap:
      return MapValue{};
  }
  return Datum();
}

Datum DefaultColumnDatum(const ColumnType& type) {
  if (type.id() != DataType::kStruct) return DefaultDatum(type.id());
  StructValue value;
  for (const StructField& field : type.fields()) {
    value.fields.push_back(DefaultColumnDatum(field.type));
  }
  return value;
}

int CompareDatums(const Datum& a, const Datum& b, OrderType order) {
  const bool a_null = IsNull(a), b_null = IsNull(b);
  if (a_null || b_null) {
    if (a_null && b_null) return 0;
    // A NULL sorts before everything with NULLS FIRST, after with NULLS LAST,
    // whatever the direction.
    const int null_side = order.nulls_first() ? -1 : 1;
    return a_null ? null_side : -null_side;
  }
  const int c = CompareValues(a, b);
  return order.is_descending() ? -c : c;
}

bool DatumsEqual(const Datum& a, const Datum& b) {
  if (a.index() != b.index()) return false;
  if (IsNull(a)) return true;
  return CompareValues(a, b) == 0;
}

std::string DatumDebugString(const Datum& datum) {
  switch (datum.index()) {
    case 0:
      return "NULL";
    case 1:
      return std::get<bool>(datum) ? "true" : "false";
    case 2:
      return absl::StrCat(std::get<int16_t>(datum));
    case 3:
      return absl::StrCat(std::get<int32_t>(datum));
    case 4:
      return absl::StrCat(std::get<int64_t>(datum));
    case 5:
      return absl::StrFormat("%.9g", std::get<float>(datum));
    case 6:
      return absl::StrFormat("%.17g", std::get<double>(datum));
    case 7:
      return std::get<Decimal>(datum).ToString();
    case 8:
      return absl::StrCat("'", absl::CHexEscape(std::get<std::string>(datum)),
                          "'");
    case 9: {
      const absl::CivilDay day =
          absl::CivilDay(1970, 1, 1) + std::get<Date>(datum).days;
      return absl::FormatCivilTime(day);
    }
    case 10: {
      const int64_t micros = std::get<TimeOfDay>(datum).micros;
      return absl::StrFormat("%02d:%02d:%02d.%06d", micros / 3600000000,
                             micros / 60000000 % 60, micros / 1000000 % 60,
                             micros % 1000000);
    }
    case 11:
      return absl::FormatTime(
          "%Y-%m-%d %H:%M:%E6S",
          absl::FromUnixMicros(std::get<Timestamp>(datum).micros),
          absl::UTCTimeZone());
    case 12:
      return FormatTimestamptz(std::get<Timestamptz>(datum));
    case 13:
      return absl::StrCat("'", FormatInterval(std::get<Interval>(datum)), "'");
    case 14:
      return absl::StrCat(std::get<Serial>(datum).value);
    case 15:
      return std::get<Int256>(datum).ToString();
    case 16:
    case 17: {
      const bool list = datum.index() == 16;
      const std::vector<Datum>& parts =
          list ? std::get<ListValue>(datum).elements
               : std::get<StructValue>(datum).fields;
      return absl::StrCat(list ? "[" : "{",
                          absl::StrJoin(parts, ", ",
                                        [](std::string* out, const Datum& d) {
                                          out->append(DatumDebugString(d));
                                        }),
                          list ? "]" : "}");
    }
    case 18:
      return std::get<Jsonb>(datum).ToString();
    case 19:
      return absl::StrCat(
          "{",
          absl::StrJoin(std::get<MapValue>(datum).entries, ", ",
                        [](std::string* out, const MapEntry& entry) {
                          absl::StrAppend(out, DatumDebugString(entry.key),
                                          ": ", DatumDebugString(entry.value));
                        }),
          "}");
  }
  return "?";
}

}  // namespace backfill
