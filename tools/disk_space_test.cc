#include "tools/disk_space.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include "executor/runtime/demo/bulk_load.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

ScenarioSpec DefaultSpec(uint64_t initial_rows) {
  tools::Scenario scenario = DefaultScenario();
  scenario.set_initial_rows(initial_rows);
  scenario.mutable_workload()->set_key_space(0);  // 4 x initial_rows
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(scenario);
  EXPECT_THAT(spec, IsOk());
  return *spec;
}

uint64_t DirectoryBytes(const std::filesystem::path& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  return bytes;
}

TEST(DiskSpaceTest, EstimateScalesWithRowsAndSaturates) {
  const DiskEstimate small = EstimateDiskBytes(DefaultSpec(1000));
  const DiskEstimate large = EstimateDiskBytes(DefaultSpec(1000000));
  EXPECT_GT(small.table_row_bytes, 40u);
  EXPECT_LT(small.table_row_bytes, 200u);
  EXPECT_EQ(large.table_row_bytes, small.table_row_bytes);
  EXPECT_EQ(large.total_bytes / 1000, small.total_bytes);
  // The typo of issue 16: a trillion rows is hundreds of terabytes.
  const DiskEstimate typo = EstimateDiskBytes(DefaultSpec(1000000000000));
  EXPECT_GT(typo.total_bytes, uint64_t{100} * 1000 * 1000 * 1000 * 1000);
  ScenarioSpec huge = DefaultSpec(1000);
  huge.job.initial_rows = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(EstimateDiskBytes(huge).total_bytes,
            std::numeric_limits<uint64_t>::max());
}

// The estimate errs on the large side of what RocksDB really stores for the
// table, but not wildly: the bulk-loaded table (and its log) takes between
// a tenth and all of the estimate's table share.
TEST(DiskSpaceTest, EstimateBoundsARealLoad) {
  const ScenarioSpec spec = DefaultSpec(20000);
  const std::filesystem::path dir =
      std::filesystem::path(std::getenv("TEST_TMPDIR")) / "load";
  std::filesystem::remove_all(dir);
  {
    RocksDbStateStoreOptions options;
    options.path = dir.string();
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStateStore> store,
                                  RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK(
        LoadInitialRows(*store, spec.job).status());
  }
  const uint64_t actual = DirectoryBytes(dir);
  const DiskEstimate estimate = EstimateDiskBytes(spec);
  const uint64_t table_share = spec.job.initial_rows * estimate.table_row_bytes;
  EXPECT_LE(actual, table_share * 12 / 10) << actual << " vs " << table_share;
  EXPECT_GE(actual, table_share / 10) << actual << " vs " << table_share;
}

TEST(DiskSpaceTest, CheckFitsRefusesWithTheEstimate) {
  DiskEstimate estimate;
  estimate.initial_rows = 1000000000000;
  estimate.table_row_bytes = 100;
  estimate.view_row_bytes = 90;
  estimate.total_bytes = 228000000000000;
  EXPECT_THAT(CheckFits(estimate, estimate.total_bytes, "/data"), IsOk());
  EXPECT_THAT(
      CheckFits(estimate, 50200000000, "/data"),
      StatusIs(
          absl::StatusCode::kResourceExhausted,
          AllOf(HasSubstr("1000000000000 initial rows need about 228.0 TB "
                          "in /data (table and view, 100 + 90 bytes a row)"),
                HasSubstr("only 50.2 GB are free"), HasSubstr("--force"))));
}

TEST(DiskSpaceTest, FreeBytesOfAPathNotCreatedYet) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  BACKFILL_ASSERT_OK_AND_ASSIGN(uint64_t free, FreeBytes(tmp));
  EXPECT_GT(free, 0u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(uint64_t below,
                                FreeBytes(tmp + "/not/yet/made"));
  EXPECT_GT(below, 0u);
  EXPECT_FALSE(std::filesystem::exists(tmp + "/not"));
}

TEST(DiskSpaceTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(999), "999 B");
  EXPECT_EQ(FormatBytes(1500), "1.5 KB");
  EXPECT_EQ(FormatBytes(204000000000000), "204.0 TB");
  EXPECT_EQ(FormatBytes(std::numeric_limits<uint64_t>::max()), "18.4 EB");
}

}  // namespace
}  // namespace backfill
