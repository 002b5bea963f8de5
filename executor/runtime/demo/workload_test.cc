#include "executor/runtime/demo/workload.h"

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "serde/column_type.h"
#include "serde/datum.h"
#include "serde/interval.h"
#include "serde/jsonb.h"
#include "gtest/gtest.h"
#include "serde/schema.h"

namespace backfill {
namespace {

TableCatalog Catalog() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.columns = {{"id", DataType::kInt64, 1, true},
                     {"name", DataType::kVarchar, 2, true},
                     {"price", DataType::kDecimal, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

TEST(WorkloadTest, OpsAreAPureFunctionOfSeedAndOffset) {
  WorkloadOptions options;
  options.seed = 9;
  options.key_space = 100;
  options.update_primary_key = true;
  int kinds[3] = {0, 0, 0};
  for (uint64_t offset = 0; offset < 3000; ++offset) {
    const WorkloadOp a = NextWorkloadOp(options, offset);
    const WorkloadOp b = NextWorkloadOp(options, offset);
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.target_key, b.target_key);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_LT(a.key, 100u);
    ++kinds[static_cast<int>(a.kind)];
  }
  for (int count : kinds) EXPECT_GT(count, 700);  // equal weights
  options.seed = 10;
  int different = 0;
  WorkloadOptions other = options;
  other.seed = 11;
  for (uint64_t offset = 0; offset < 100; ++offset) {
    different += NextWorkloadOp(options, offset).key != NextWorkloadOp(other, offset).key;
  }
  EXPECT_GT(different, 50);
}

TEST(WorkloadTest, RowsDependOnKeyAndVersion) {
  const TableCatalog catalog = Catalog();
  const Row a = WorkloadRow(catalog, 1, 42, 0, 0.0);
  EXPECT_TRUE(RowsEqual(a, WorkloadRow(catalog, 1, 42, 0, 0.0)));
  const Row b = WorkloadRow(catalog, 1, 42, 7, 0.0);
  EXPECT_TRUE(DatumsEqual(a[0], b[0])) << "same key, same pk";
  EXPECT_FALSE(RowsEqual(a, b)) << "another version, other values";
  EXPECT_FALSE(DatumsEqual(a[0], WorkloadRow(catalog, 1, 43, 0, 0.0)[0]));
  int nulls = 0;
  for (uint64_t key = 0; key < 1000; ++key) {
    nulls += IsNull(WorkloadRow(catalog, 1, key, 0, 0.3)[0]);
  }
  EXPECT_GT(nulls, 200);
  EXPECT_LT(nulls, 400);
}

// Keys anywhere in [0, 2^64) give rows (the scenario validation allows key
// spaces and initial_rows up to 2^64 - 1 for wide pk types): no overflow (run
// under --config=ubsan), and the usual values for small keys. Found by
// //tools:scenario_fuzz (TIMESTAMP pk, 10^18 initial rows).
TEST(WorkloadTest, RowsOfKeysAtTheTopOfTheKeySpace) {
  TableCatalog catalog;
  catalog.table_id = 1;
  for (int i = 0; i < 12; ++i) {
    catalog.columns.push_back(
        {absl::StrCat("c", i), kAllDataTypes[i], i + 1, false});
    catalog.pk_indices.push_back(i);
    catalog.pk_orders.push_back(OrderType::Ascending());
    catalog.value_indices.push_back(i);
  }
  for (uint64_t seed : {uint64_t{0}, uint64_t{7}, ~uint64_t{0}}) {
    for (uint64_t key : {uint64_t{0}, uint64_t{1'000'000'000'000'000'000},
                         uint64_t{1} << 63, ~uint64_t{0}}) {
      const Row row = WorkloadRow(catalog, seed, key, ~uint64_t{0}, 0.0);
      ASSERT_TRUE(ValidateRow(catalog.columns, row).ok())
          << "seed " << seed << " key " << key;
    }
  }
  EXPECT_EQ(std::get<Timestamp>(WorkloadRow(catalog, 0, 5, 0, 0.0)[11]).micros,
            1'600'000'000'005'000);
}

// The source's ops due at a time: no float-to-integer overflow (UB) for any
// finite rate a scenario may ask for.
TEST(WorkloadTest, OpsDueSaturate) {
  EXPECT_EQ(WorkloadOpsDue(100, 2.5), 250u);
  EXPECT_EQ(WorkloadOpsDue(0, 1e9), 0u);
  EXPECT_EQ(WorkloadOpsDue(1, -1), 0u);
  EXPECT_EQ(WorkloadOpsDue(1e300, 1e-3), ~uint64_t{0});
  EXPECT_EQ(WorkloadOpsDue(1e300, 1e300), ~uint64_t{0});
  EXPECT_EQ(WorkloadOpsDue(18446744073709551616.0, 1), ~uint64_t{0});
}

// Issue 21: a table of the added types, nested ones included, as a
// scenario may declare it (pk of every added key type).
TableCatalog NewTypesCatalog() {
  TableCatalog catalog;
  catalog.table_id = 1;
  const ColumnType point = ColumnType::Struct(
      {{"x", DataType::kFloat64, 1},
       {"labels", ColumnType::List(DataType::kVarchar), 2},
       {"at", DataType::kTimestamptz, 3}});
  catalog.columns = {
      {"at", DataType::kTimestamptz, 1, false},
      {"span", DataType::kInterval, 2, true},
      {"serial", DataType::kSerial, 3, false},
      {"big", DataType::kInt256, 4, false},
      {"doc", DataType::kJsonb, 5, true},
      {"samples", ColumnType::List(DataType::kFloat64), 6, true},
      {"point", point, 7, true},
      {"attrs", ColumnType::Map(DataType::kVarchar,
                                ColumnType::List(DataType::kInt32)),
       8, true},
      {"counts", ColumnType::Map(DataType::kInt16, DataType::kInterval), 9,
       true},
      {"grid", ColumnType::List(ColumnType::List(DataType::kFloat32)), 10,
       true}};
  catalog.pk_indices = {0, 1, 2, 3};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending(),
                       OrderType::Ascending(), OrderType::Ascending()};
  catalog.dist_key_indices = {1};
  for (int i = 0; i < 10; ++i) catalog.value_indices.push_back(i);
  return catalog;
}

TEST(WorkloadTest, NewTypesHaveValuesOfTheirTypes) {
  const TableCatalog catalog = NewTypesCatalog();
  for (uint64_t seed : {uint64_t{1}, uint64_t{21}}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    for (uint64_t key = 0; key < 500; ++key) {
      const Row row = WorkloadRow(catalog, seed, key, key % 7, 0.2);
      ASSERT_TRUE(ValidateRow(catalog.columns, row).ok())
          << "key " << key << ": " << ValidateRow(catalog.columns, row);
      // Deterministic, NaNs inside lists included (DatumsEqual: NaN == NaN).
      ASSERT_TRUE(RowsEqual(row, WorkloadRow(catalog, seed, key, key % 7, 0.2)));
    }
  }
}

// The values cover what makes these types hard: NULLs, -0.0 and NaN inside
// lists, empty lists, every JSONB kind, intervals not in their canonical
// form; the pk's TIMESTAMPTZ, INTERVAL (by span), SERIAL and INT256 are
// distinct for distinct keys.
TEST(WorkloadTest, NewTypeValuesCoverTheirHardCases) {
  const TableCatalog catalog = NewTypesCatalog();
  std::set<int64_t> timestamps;
  std::set<absl::int128> spans;
  std::set<std::string> big;
  int null_elements = 0, negative_zeros = 0, nans = 0, empty_lists = 0,
      null_fields = 0, non_canonical_intervals = 0, null_map_values = 0,
      negative_int256 = 0;
  std::set<Jsonb::Kind> jsonb_kinds;
  for (uint64_t key = 0; key < 2000; ++key) {
    const Row row = WorkloadRow(catalog, 5, key, 1, 0.0);
    timestamps.insert(std::get<Timestamptz>(row[0]).micros);
    const Interval span = std::get<Interval>(row[1]);
    spans.insert(IntervalSpan(span));
    const std::optional<Interval> canonical =
        IntervalFromSpan(IntervalSpan(span));
    if (!canonical.has_value() || !IdenticalIntervals(*canonical, span)) {
      ++non_canonical_intervals;
    }
    big.insert(std::get<Int256>(row[3]).ToString());
    negative_int256 += std::get<Int256>(row[3]).negative() ? 1 : 0;
    jsonb_kinds.insert(std::get<Jsonb>(row[4]).kind());
    const ListValue& samples = std::get<ListValue>(row[5]);
    empty_lists += samples.elements.empty() ? 1 : 0;
    for (const Datum& element : samples.elements) {
      if (IsNull(element)) {
        ++null_elements;
        continue;
      }
      const double value = std::get<double>(element);
      nans += std::isnan(value) ? 1 : 0;
      negative_zeros += (value == 0 && std::signbit(value)) ? 1 : 0;
    }
    for (const Datum& field : std::get<StructValue>(row[6]).fields) {
      null_fields += IsNull(field) ? 1 : 0;
    }
    for (const MapEntry& entry : std::get<MapValue>(row[7]).entries) {
      null_map_values += IsNull(entry.value) ? 1 : 0;
    }
  }
  EXPECT_EQ(timestamps.size(), 2000u);
  EXPECT_EQ(spans.size(), 2000u);
  EXPECT_EQ(big.size(), 2000u);
  EXPECT_GT(negative_int256, 500);
  EXPECT_GT(non_canonical_intervals, 500);
  EXPECT_GT(null_elements, 50);
  EXPECT_GT(negative_zeros, 10);
  EXPECT_GT(nans, 10);
  EXPECT_GT(empty_lists, 100);
  EXPECT_GT(null_fields, 100);
  EXPECT_GT(null_map_values, 10);
  EXPECT_EQ(jsonb_kinds.size(), 4u);  // null, number, string, object
}

TEST(WorkloadTest, NewKeyTypesAtTheTopOfTheKeySpace) {
  const TableCatalog catalog = NewTypesCatalog();
  for (uint64_t key : {uint64_t{0}, uint64_t{1} << 63, ~uint64_t{0}}) {
    const Row row = WorkloadRow(catalog, 3, key, ~uint64_t{0}, 0.0);
    ASSERT_TRUE(ValidateRow(catalog.columns, row).ok()) << "key " << key;
  }
  // Keys 0 and 2^64 - 1 give distinct pks (no wrap onto each other).
  const Row low = WorkloadRow(catalog, 3, 0, 0, 0.0);
  const Row high = WorkloadRow(catalog, 3, ~uint64_t{0}, 0, 0.0);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(DatumsEqual(low[i], high[i])) << i;
}

// Issue 21: LIST and STRUCT pk columns. Distinct keys give distinct pks
// (under SQL equality: -0.0 == 0.0), with the hard cases of their order:
// the empty list, lists that prefix others, NULL, NaN and -0.0 elements,
// NULL struct fields; the values are of their types up to the top key.
TEST(WorkloadTest, ListAndStructKeysAreDistinctAndCoverTheirHardCases) {
  TableCatalog catalog;
  catalog.table_id = 1;
  const ColumnType point = ColumnType::Struct(
      {{"id", DataType::kInt64, 1},
       {"labels", ColumnType::List(DataType::kVarchar), 2},
       {"flag", DataType::kBoolean, 3}});
  catalog.columns = {{"samples", ColumnType::List(DataType::kFloat64), 1,
                      false},
                     {"point", point, 2, false},
                     {"flags", ColumnType::List(DataType::kBoolean), 3, false},
                     {"v", DataType::kInt32, 4, true}};
  catalog.pk_indices = {0, 1, 2};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending(),
                       OrderType::Ascending()};
  catalog.value_indices = {0, 1, 2, 3};
  for (int column = 0; column < 3; ++column) {
    SCOPED_TRACE(absl::StrCat("column ", column));
    std::vector<Datum> values;
    int empty = 0, null_elements = 0, nans = 0, negative_zeros = 0,
        null_fields = 0, prefixes = 0;
    for (uint64_t key = 0; key < 400; ++key) {
      const Row row = WorkloadRow(catalog, 9, key, 0, 0.0);
      ASSERT_TRUE(ValidateRow(catalog.columns, row).ok()) << "key " << key;
      values.push_back(row[column]);
      if (const ListValue* list = std::get_if<ListValue>(&row[column])) {
        empty += list->elements.empty() ? 1 : 0;
        for (const Datum& element : list->elements) {
          if (IsNull(element)) {
            ++null_elements;
          } else if (const double* d = std::get_if<double>(&element)) {
            nans += std::isnan(*d) ? 1 : 0;
            negative_zeros += (*d == 0 && std::signbit(*d)) ? 1 : 0;
          }
        }
      } else {
        for (const Datum& field : std::get<StructValue>(row[column]).fields) {
          null_fields += IsNull(field) ? 1 : 0;
        }
      }
    }
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = 0; j < values.size(); ++j) {
        if (i == j) continue;
        ASSERT_FALSE(DatumsEqual(values[i], values[j]))
            << "keys " << i << " and " << j << ": "
            << DatumDebugString(values[i]);
        const ListValue* a = std::get_if<ListValue>(&values[i]);
        const ListValue* b = std::get_if<ListValue>(&values[j]);
        if (a != nullptr && !a->elements.empty() &&
            a->elements.size() < b->elements.size() &&
            DatumsEqual(ListValue{std::vector<Datum>(
                            b->elements.begin(),
                            b->elements.begin() + a->elements.size())},
                        *a)) {
          ++prefixes;
        }
      }
    }
    if (column == 1) {
      EXPECT_GT(null_fields, 20);
      continue;
    }
    EXPECT_EQ(empty, 1);  // key 0
    EXPECT_GT(null_elements, 50);
    EXPECT_GT(prefixes, 100);
    if (column == 0) {
      EXPECT_GT(nans, 50);
      EXPECT_GT(negative_zeros, 10);
    }
  }
  for (uint64_t key : {uint64_t{1} << 63, ~uint64_t{0}}) {
    const Row row = WorkloadRow(catalog, 3, key, 0, 0.0);
    ASSERT_TRUE(ValidateRow(catalog.columns, row).ok()) << "key " << key;
  }
}

}  // namespace
}  // namespace backfill
