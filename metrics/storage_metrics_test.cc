#include "metrics/storage_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/job_metrics.h"
#include "metrics/promtool.h"
#include "metrics/registry.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(StorageMetricsTest, ExportsEverySeries) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(StorageMetrics metrics,
                                StorageMetrics::Create(registry));
  metrics.read_bytes_total.Increment(1000);
  metrics.written_bytes_total.Increment(2000);
  metrics.compaction_read_bytes_total.Increment(3);
  metrics.compaction_written_bytes_total.Increment(4);
  metrics.flush_written_bytes_total.Increment(5);
  metrics.block_cache_hits_total.Increment(6);
  metrics.block_cache_misses_total.Increment(7);
  metrics.pending_compaction_bytes.Set(8);
  metrics.sst_files.Set(9);
  metrics.sst_bytes.Set(10);
  metrics.memtable_bytes.Set(11);
  metrics.table_readers_bytes.Set(12);
  metrics.block_cache_bytes.Set(13);
  const std::string text = registry.ExportText();
  for (absl::string_view line : {
           "backfill_rocksdb_read_bytes_total 1000",
           "backfill_rocksdb_written_bytes_total 2000",
           "backfill_rocksdb_compaction_read_bytes_total 3",
           "backfill_rocksdb_compaction_written_bytes_total 4",
           "backfill_rocksdb_flush_written_bytes_total 5",
           "backfill_rocksdb_block_cache_hits_total 6",
           "backfill_rocksdb_block_cache_misses_total 7",
           "backfill_rocksdb_pending_compaction_bytes 8",
           "backfill_rocksdb_sst_files 9",
           "backfill_rocksdb_sst_bytes 10",
           "backfill_rocksdb_memtable_bytes 11",
           "backfill_rocksdb_table_readers_bytes 12",
           "backfill_rocksdb_block_cache_bytes 13",
           "# TYPE backfill_rocksdb_read_bytes_total counter",
           "# TYPE backfill_rocksdb_sst_files gauge",
       }) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(line, "\n")));
  }
}

TEST(StorageMetricsTest, CreateIsIdempotentAndConflictsAreErrors) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(StorageMetrics first,
                                StorageMetrics::Create(registry));
  BACKFILL_ASSERT_OK_AND_ASSIGN(StorageMetrics again,
                                StorageMetrics::Create(registry));
  first.read_bytes_total.Increment(2);
  again.read_bytes_total.Increment(3);
  EXPECT_EQ(first.read_bytes_total.value(), 5u);

  Registry conflicting;
  ASSERT_THAT(
      conflicting.AddGaugeFamily(StorageMetrics::kReadBytesTotal, "x", {}),
      IsOk());
  EXPECT_THAT(StorageMetrics::Create(conflicting).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

// Beside the job's series, as the command exports them: promtool has
// nothing to say (exit 0, no output).
TEST(StorageMetricsTest, PromtoolIsSilent) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(StorageMetrics metrics,
                                StorageMetrics::Create(registry));
  ASSERT_THAT(JobMetrics::Create(registry, 7), IsOk());
  metrics.sst_bytes.Set(1 << 20);
  metrics.block_cache_hits_total.Increment(12);
  const std::string text = registry.ExportText();
  absl::StatusOr<PromtoolResult> result = RunPromtoolCheckMetrics(text);
  ASSERT_THAT(result, IsOk())
      << "promtool is required by this test (Debian package `prometheus`)";
  EXPECT_EQ(result->exit_code, 0) << result->output << "\n" << text;
  EXPECT_EQ(result->output, "") << text;
}

}  // namespace
}  // namespace backfill
