#include "executor/testing/random_table.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "serde/random_datum.h"

namespace backfill {
namespace testing {
namespace {

constexpr DataType kPkTypes[] = {
    DataType::kInt64, DataType::kInt32,   DataType::kInt16,
    DataType::kVarchar, DataType::kBytea, DataType::kFloat64,
    DataType::kFloat32, DataType::kDecimal, DataType::kDate,
    DataType::kTime,  DataType::kTimestamp, DataType::kBoolean};

template <typename T>
T Pick(std::mt19937_64& rng, const std::vector<T>& values) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

bool Chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

// The k-th key value of `type`: distinct k give distinct values (except for
// BOOLEAN, which has two), in an order unrelated to k for strings.
Datum KeyValue(DataType type, uint64_t k) {
  const int64_t v = static_cast<int64_t>(k);
  switch (type) {
    case DataType::kBoolean: return k % 2 == 1;
    case DataType::kInt16: return static_cast<int16_t>(v % 30000 - 15000);
    case DataType::kInt32: return static_cast<int32_t>(v * 7 - 1000);
    case DataType::kInt64: return v * 1'000'003 - 500'000'000;
    case DataType::kFloat32:
      if (k == 3) return std::nanf("");
      return static_cast<float>(v) * 0.25f - 10.0f;
    case DataType::kFloat64:
      if (k == 5) return std::nan("");
      if (k == 6) return -HUGE_VAL;
      return static_cast<double>(v) * 1.5 - 100.0;
    case DataType::kDecimal:
      return Decimal::FromParts(k % 3 == 0, k * 11, static_cast<int>(k % 4));
    case DataType::kVarchar:
      return absl::StrCat(std::string(k % 3, 'z'), k * 37 % 101, "-", k);
    case DataType::kBytea: {
      std::string bytes = absl::StrCat(k);
      bytes.insert(bytes.begin(), static_cast<char>(k % 2 == 0 ? 0x00 : 0xff));
      return bytes;
    }
    case DataType::kDate: return Date{static_cast<int32_t>(v * 3 - 500)};
    case DataType::kTime: return TimeOfDay{v * 1'000'000 % 86'400'000'000};
    case DataType::kTimestamp: return Timestamp{v * 123'456'789 - 99};
    default: break;  // not in catalogs yet (serde/data_type.h)
  }
  return Datum();
}

}  // namespace

RandomShape MakeRandomShape(std::mt19937_64& rng, TableId table_id,
                            const RandomShapeOptions& options) {
  RandomShape shape;
  TableCatalog& catalog = shape.catalog;
  catalog.table_id = table_id;
  catalog.name = absl::StrCat("t", table_id);
  const int num_pk = Chance(rng, 0.6) ? 1 : (Chance(rng, 0.7) ? 2 : 3);
  const int num_other = std::uniform_int_distribution<int>(0, 3)(rng);
  const int num_columns = num_pk + num_other;
  std::vector<int> positions(num_columns);
  for (int i = 0; i < num_columns; ++i) positions[i] = i;
  std::shuffle(positions.begin(), positions.end(), rng);
  catalog.columns.resize(num_columns);
  for (int i = 0; i < num_columns; ++i) {
    ColumnType type = RandomDataType(rng);
    // (pk columns get a key type below.)
    if (options.value_type_probability > 0 &&
        Chance(rng, options.value_type_probability)) {
      type = RandomValueColumnType(rng, /*max_depth=*/2);
    }
    catalog.columns[i] = ColumnDesc{absl::StrCat("c", i), std::move(type),
                                    static_cast<int32_t>(100 + i * 3), true};
  }
  for (int i = 0; i < num_pk; ++i) {
    const int column = positions[i];
    // BOOLEAN keys only as part of a composite key (two values).
    DataType type = kPkTypes[std::uniform_int_distribution<size_t>(
        0, std::size(kPkTypes) - 1)(rng)];
    if (type == DataType::kBoolean && num_pk == 1) type = DataType::kInt32;
    catalog.columns[column].type = type;
    catalog.pk_indices.push_back(column);
    catalog.pk_orders.push_back(RandomOrderType(rng));
  }
  if (!Chance(rng, options.singleton_probability)) {
    std::vector<int> pk = catalog.pk_indices;
    std::shuffle(pk.begin(), pk.end(), rng);
    const int size = std::uniform_int_distribution<int>(1, num_pk)(rng);
    catalog.dist_key_indices.assign(pk.begin(), pk.begin() + size);
  }
  catalog.vnode_count = Pick(rng, options.vnode_counts);
  if (catalog.dist_key_indices.empty() && Chance(rng, 0.5)) catalog.vnode_count = 1;
  catalog.value_encoding =
      Chance(rng, 0.5) ? ValueEncoding::kColumnAware : ValueEncoding::kPositional;
  for (int i = 0; i < num_columns; ++i) catalog.value_indices.push_back(i);

  std::vector<int> s2;
  for (int i = 0; i < num_columns; ++i) {
    const bool is_pk = std::find(catalog.pk_indices.begin(),
                                 catalog.pk_indices.end(),
                                 i) != catalog.pk_indices.end();
    if (is_pk || Chance(rng, 0.6)) s2.push_back(i);
  }
  std::shuffle(s2.begin(), s2.end(), rng);
  for (int column : s2) shape.s2_column_ids.push_back(catalog.columns[column].column_id);
  for (size_t i = 0; i < s2.size(); ++i) shape.output_indices.push_back(static_cast<int>(i));
  std::shuffle(shape.output_indices.begin(), shape.output_indices.end(), rng);
  if (options.allow_pruning && shape.output_indices.size() > 1 && Chance(rng, 0.5)) {
    shape.output_indices.resize(std::uniform_int_distribution<size_t>(
        1, shape.output_indices.size() - 1)(rng));
  }
  return shape;
}

Row RandomTableRow(const TableCatalog& catalog, std::mt19937_64& rng,
                   uint64_t key_space, double null_fraction) {
  Row row(catalog.columns.size());
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    row[i] = RandomColumnDatum(catalog.columns[i].type, rng, 0.2);
  }
  for (int column : catalog.pk_indices) {
    if (Chance(rng, null_fraction)) {
      row[column] = Datum();
    } else {
      const uint64_t k =
          std::uniform_int_distribution<uint64_t>(0, std::max<uint64_t>(key_space, 1) - 1)(rng);
      row[column] = KeyValue(catalog.columns[column].type, k);
    }
  }
  return row;
}

Row RandomValueChange(const TableCatalog& catalog, const Row& row,
                      std::mt19937_64& rng) {
  Row changed = row;
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    if (std::find(catalog.pk_indices.begin(), catalog.pk_indices.end(),
                  static_cast<int>(i)) != catalog.pk_indices.end()) {
      continue;
    }
    changed[i] = RandomColumnDatum(catalog.columns[i].type, rng, 0.2);
  }
  return changed;
}

}  // namespace testing
}  // namespace backfill
