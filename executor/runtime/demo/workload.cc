#include "executor/runtime/demo/workload.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

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

Datum KeyDatum(DataType type, uint64_t key, uint64_t salt) {
  const int64_t k = static_cast<int64_t>(key);
  switch (type) {
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
    default: break;  // not in catalogs yet (serde/data_type.h)
  }
  return Datum();
}

Datum ValueDatum(DataType type, uint64_t h) {
  switch (type) {
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
    default: break;  // not in catalogs yet (serde/data_type.h)
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
