#include "executor/runtime/demo/workload.h"

#include "absl/strings/str_cat.h"
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

}  // namespace
}  // namespace backfill
