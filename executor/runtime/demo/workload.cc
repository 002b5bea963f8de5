#include "executor/runtime/demo/workload.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "serde/column_type.h"
#include "serde/datum.h"
#include "serde/interval.h"
#include "serde/jsonb.h"

namespace backfill {
namespace {

// SplitMix64: a fast, well-mixed hash of a 64-bit value.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// An INTERVAL whose span is key x (1 day + 1 microsecond), wrapping modulo
// 2^64 (an odd multiplier: one span per key), held in one of three forms
// chosen by the hash: all microseconds, days and microseconds, or months,
// days and microseconds. Most are not the representative of their span
// (IntervalFromSpan), so code that rebuilt a value from its memcomparable
// key instead of its stored fields would show.
Interval KeyInterval(uint64_t key, uint64_t salt) {
  const int64_t span = static_cast<int64_t>(key * 86'400'000'001);
  Interval value;
  switch (Mix(key ^ salt) % 3) {
    case 0:
      value.micros = span;
      break;
    case 1:
      value.days = static_cast<int32_t>(span / kIntervalMicrosPerDay);
      value.micros = span % kIntervalMicrosPerDay;
      break;
    default:
      value.months = static_cast<int32_t>(span / kIntervalMicrosPerMonth);
      value.days = static_cast<int32_t>((span % kIntervalMicrosPerMonth) /
                                        kIntervalMicrosPerDay);
      value.micros = span % kIntervalMicrosPerDay;
      break;
  }
  return value;
}

Datum KeyDatum(const ColumnType& type, uint64_t key, uint64_t salt);

// A LIST key: `key` spelled in base-B digits, most significant first, one
// element per digit (key 0 is the empty list; no leading zero digit, so
// distinct keys give distinct lists, and key 1's [d1] prefixes key 1x's
// [d1, dx]). The top digit is a NULL element; for a float element type the
// next one is NaN and digit 0 is 0.0 or -0.0 (equal, chosen by the hash);
// other digits d are the element type's key value of d. B is 3 for BOOLEAN
// elements (false, true, NULL), else 7.
ListValue KeyList(const ColumnType& type, uint64_t key, uint64_t salt) {
  const ColumnType& element = type.element();
  const bool is_float =
      element == DataType::kFloat64 || element == DataType::kFloat32;
  const uint64_t base = element == DataType::kBoolean ? 3 : 7;
  std::vector<uint64_t> digits;
  for (uint64_t rest = key; rest > 0; rest /= base) digits.push_back(rest % base);
  ListValue list;
  list.elements.reserve(digits.size());
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const uint64_t digit = *it;
    Datum datum;
    if (digit == base - 1) {
      datum = Datum();
    } else if (is_float && digit == base - 2) {
      datum = std::numeric_limits<double>::quiet_NaN();
    } else if (is_float && digit == 0) {
      datum = (Mix(key ^ salt ^ list.elements.size()) & 1) == 0 ? -0.0 : 0.0;
    } else {
      datum = KeyDatum(element, digit, Mix(salt + 1));
    }
    if (element == DataType::kFloat32 && std::holds_alternative<double>(datum)) {
      datum = static_cast<float>(std::get<double>(datum));
    }
    list.elements.push_back(std::move(datum));
  }
  return list;
}

// A STRUCT key: its first field the field type's key value of `key` (what
// tells keys apart), the others the key values of a hash of it, one in
// eight of them NULL.
StructValue KeyStruct(const ColumnType& type, uint64_t key, uint64_t salt) {
  StructValue value;
  value.fields.reserve(type.fields().size());
  for (size_t i = 0; i < type.fields().size(); ++i) {
    const uint64_t field_salt = Mix(salt + 13 * i + 1);
    if (i == 0) {
      value.fields.push_back(KeyDatum(type.fields()[i].type, key, field_salt));
    } else if (Mix(key ^ field_salt) % 8 == 0) {
      value.fields.push_back(Datum());
    } else {
      value.fields.push_back(
          KeyDatum(type.fields()[i].type, Mix(key ^ field_salt) % 1000,
                   field_salt));
    }
  }
  return value;
}

Datum KeyDatum(const ColumnType& type, uint64_t key, uint64_t salt) {
  const int64_t k = static_cast<int64_t>(key);
  switch (type.id()) {
    case DataType::kBoolean: return ((key ^ salt) & 1) == 1;
    // Sums and products in uint64 (wrapping, then read back as int64): the
    // same values as int64 arithmetic wherever that does not overflow, and
    // defined for every key (found by //tools:scenario_fuzz).
    case DataType::kInt16:
      return static_cast<int16_t>(static_cast<int64_t>(key + salt) % 32768);
    case DataType::kInt32: return static_cast<int32_t>(k % 2000000000);
    case DataType::kInt64: return k;
    case DataType::kFloat32: return static_cast<float>(k % 1000000) * 0.5f;
    case DataType::kFloat64: return static_cast<double>(k) * 0.25;
    case DataType::kDecimal: return Decimal::FromParts(false, key, 2);
    case DataType::kVarchar: return absl::StrCat("k", Mix(key ^ salt) % 1000, "-", key);
    case DataType::kBytea: return absl::StrCat(std::string(1, static_cast<char>(key & 0xff)), key);
    case DataType::kDate: return Date{static_cast<int32_t>(k % 100000)};
    case DataType::kTime: return TimeOfDay{static_cast<int64_t>(key % 86400) * 1000000};
    case DataType::kTimestamp:
      return Timestamp{static_cast<int64_t>(key * 1000 + 1600000000000000)};
    // The types added by issue 21 that can be keys: one value per key (the
    // multipliers are odd, so distinct keys give distinct values modulo
    // 2^64 too).
    case DataType::kTimestamptz:
      return Timestamptz{
          static_cast<int64_t>(key * 1'000'001 + 1'650'000'000'000'000)};
    case DataType::kInterval: return KeyInterval(key, salt);
    case DataType::kSerial: return Serial{k};
    case DataType::kInt256:
      // Keys 0, 1, ... as themselves or as -1 - key, by a bit of the hash.
      return (Mix(key ^ salt) & 1) == 0
                 ? Int256::FromWords({key, 0, 0, 0})
                 : Int256::FromWords({~key, ~uint64_t{0}, ~uint64_t{0},
                                      ~uint64_t{0}});
    case DataType::kList: return KeyList(type, key, salt);
    case DataType::kStruct: return KeyStruct(type, key, salt);
    default: break;  // JSONB and MAP are never key columns
  }
  return Datum();
}

// One in kNestedNullOneIn elements of a LIST, fields of a STRUCT and values
// of a MAP is NULL, whatever the column's nullability.
constexpr uint64_t kNestedNullOneIn = 8;

// Floats inside LISTs: one in four is one of these, the values whose order
// and equality are special (-0.0 == 0.0, NaN above +Infinity).
constexpr double kSpecialFloats[] = {
    -0.0, 0.0, std::numeric_limits<double>::quiet_NaN(),
    std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity()};

Jsonb ValueJsonb(uint64_t h) {
  switch (h % 4) {
    case 0: return Jsonb::Int(static_cast<int64_t>(h >> 20) - (int64_t{1} << 42));
    case 1: return Jsonb::String(absl::StrCat("s", h % 1000, "\"\\é"));
    case 2: return Jsonb();  // JSON null
    default: break;
  }
  std::vector<Jsonb> tags;
  const uint64_t num_tags = Mix(h + 1) % 4;
  tags.reserve(num_tags);
  for (uint64_t i = 0; i < num_tags; ++i) {
    tags.push_back(i % 2 == 0 ? Jsonb::Int(static_cast<int64_t>(Mix(h + i) % 100))
                              : Jsonb::Bool((Mix(h + i) & 1) == 1));
  }
  std::vector<JsonbMember> members;
  members.reserve(4);
  members.push_back({"id", Jsonb::Int(static_cast<int64_t>(h % 1'000'000))});
  members.push_back({"tags", Jsonb::Array(std::move(tags))});
  members.push_back({"name", Jsonb::String(absl::StrCat("n", Mix(h + 2) % 97))});
  if ((h >> 7) & 1) members.push_back({"gone", Jsonb()});
  return Jsonb::Object(std::move(members));
}

Datum ValueDatum(const ColumnType& type, uint64_t h);

Datum NestedValueDatum(const ColumnType& type, uint64_t h) {
  if (Mix(h ^ 0x5bd1e995) % kNestedNullOneIn == 0) return Datum();
  const bool is_float = type == DataType::kFloat64 || type == DataType::kFloat32;
  if (is_float && Mix(h + 7) % 4 == 0) {
    const double special = kSpecialFloats[Mix(h + 8) % std::size(kSpecialFloats)];
    if (type == DataType::kFloat32) return static_cast<float>(special);
    return special;
  }
  return ValueDatum(type, h);
}

// 0 to 4 elements: empty lists and lists that prefix others.
ListValue ValueList(const ColumnType& type, uint64_t h) {
  ListValue list;
  const uint64_t size = Mix(h + 3) % 5;
  list.elements.reserve(size);
  for (uint64_t i = 0; i < size; ++i) {
    list.elements.push_back(NestedValueDatum(type.element(), Mix(h + 11 * i + 5)));
  }
  return list;
}

StructValue ValueStruct(const ColumnType& type, uint64_t h) {
  StructValue value;
  value.fields.reserve(type.fields().size());
  for (size_t i = 0; i < type.fields().size(); ++i) {
    value.fields.push_back(
        NestedValueDatum(type.fields()[i].type, Mix(h + 13 * i + 6)));
  }
  return value;
}

// 0 to 3 entries with distinct keys: first, first + 1, ... (as text for
// VARCHAR).
Datum ValueMap(const ColumnType& type, uint64_t h) {
  std::vector<MapEntry> entries;
  const uint64_t size = Mix(h + 4) % 4;
  const uint64_t first = Mix(h + 9) % 1000;
  entries.reserve(size);
  for (uint64_t i = 0; i < size; ++i) {
    const uint64_t key = first + i;
    Datum key_datum;
    switch (type.map_key().id()) {
      case DataType::kInt16: key_datum = static_cast<int16_t>(key); break;
      case DataType::kInt32: key_datum = static_cast<int32_t>(key); break;
      case DataType::kInt64: key_datum = static_cast<int64_t>(key); break;
      default: key_datum = absl::StrCat("key", key); break;
    }
    entries.push_back({std::move(key_datum),
                       NestedValueDatum(type.map_value(), Mix(h + 17 * i + 10))});
  }
  absl::StatusOr<MapValue> map = MakeMapValue(std::move(entries));
  assert(map.ok());  // unique non-NULL keys of one map key type
  return map.ok() ? Datum(*std::move(map)) : Datum();
}

Datum ValueDatum(const ColumnType& type, uint64_t h) {
  switch (type.id()) {
    case DataType::kBoolean: return (h & 1) == 1;
    case DataType::kInt16: return static_cast<int16_t>(h % 30000);
    case DataType::kInt32: return static_cast<int32_t>(h % 1000000);
    case DataType::kInt64: return static_cast<int64_t>(h >> 1);
    case DataType::kFloat32: return static_cast<float>(h % 100000) / 8.0f;
    case DataType::kFloat64: return static_cast<double>(h % 10000000) / 64.0;
    case DataType::kDecimal: return Decimal::FromParts((h & 1) == 1, h % 100000000, 2);
    case DataType::kVarchar: {
      std::string s(16, 'a');
      for (int i = 0; i < 16; ++i) s[i] = static_cast<char>('a' + (Mix(h + i) % 26));
      return s;
    }
    case DataType::kBytea: return std::string(reinterpret_cast<const char*>(&h), 8);
    case DataType::kDate: return Date{static_cast<int32_t>(h % 40000)};
    case DataType::kTime: return TimeOfDay{static_cast<int64_t>(h % 86400000000)};
    case DataType::kTimestamp: return Timestamp{static_cast<int64_t>(h % 4000000000000000)};
    case DataType::kTimestamptz:
      return Timestamptz{static_cast<int64_t>(h % 4000000000000000) -
                         1000000000000000};
    case DataType::kInterval:
      return Interval{static_cast<int32_t>(h % 25) - 12,
                      static_cast<int32_t>((h >> 8) % 61) - 30,
                      static_cast<int64_t>((h >> 16) % 172800000000) -
                          86400000000};
    case DataType::kJsonb: return ValueJsonb(h);
    case DataType::kSerial: return Serial{static_cast<int64_t>(h >> 2)};
    case DataType::kInt256:
      return Int256::FromWords({h, Mix(h + 1), Mix(h + 2), Mix(h + 3)});
    case DataType::kList: return ValueList(type, h);
    case DataType::kStruct: return ValueStruct(type, h);
    case DataType::kMap: return ValueMap(type, h);
    default: break;
  }
  return Datum();
}

}  // namespace

WorkloadOp NextWorkloadOp(const WorkloadOptions& options, uint64_t offset) {
  const uint64_t h = Mix(options.seed * 0x100000001b3ull ^ Mix(offset));
  WorkloadOp op;
  const double total = std::max(
      options.insert_weight + options.update_weight + options.delete_weight,
      1e-9);
  const double u = Unit(h) * total;
  op.kind = u < options.insert_weight ? WorkloadOpKind::kInsert
            : u < options.insert_weight + options.update_weight
                ? WorkloadOpKind::kUpdate
                : WorkloadOpKind::kDelete;
  const uint64_t key_space = std::max<uint64_t>(options.key_space, 1);
  op.key = Mix(h + 1) % key_space;
  op.target_key = op.key;
  if (op.kind == WorkloadOpKind::kUpdate && options.update_primary_key &&
      (Mix(h + 2) & 1) == 1) {
    op.target_key = Mix(h + 3) % key_space;
  }
  op.version = offset + 1;
  return op;
}

uint64_t WorkloadOpsDue(double ops_per_second, double elapsed_seconds) {
  const double due = ops_per_second * elapsed_seconds;
  if (!(due > 0)) return 0;  // also NaN
  // 2^64 as a double; converting anything at or above it is undefined.
  if (due >= 18446744073709551616.0) return ~uint64_t{0};
  return static_cast<uint64_t>(due);
}

Row WorkloadRow(const TableCatalog& catalog, uint64_t seed, uint64_t key,
                uint64_t version, double null_fraction) {
  Row row(catalog.columns.size());
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    const ColumnDesc& column = catalog.columns[i];
    const bool is_pk = std::find(catalog.pk_indices.begin(),
                                 catalog.pk_indices.end(),
                                 static_cast<int>(i)) != catalog.pk_indices.end();
    if (is_pk) {
      const uint64_t salt = Mix(seed + i);
      if (column.nullable && Unit(Mix(key ^ salt)) < null_fraction) {
        row[i] = Datum();
      } else {
        row[i] = KeyDatum(column.type, key, salt);
      }
      continue;
    }
    const uint64_t h = Mix(Mix(seed + i) ^ Mix(key * 31 + version));
    if (column.nullable && Unit(Mix(h)) < null_fraction) {
      row[i] = Datum();
    } else {
      row[i] = ValueDatum(column.type, h);
    }
  }
  return row;
}

}  // namespace backfill
