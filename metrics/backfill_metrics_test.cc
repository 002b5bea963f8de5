#include "metrics/backfill_metrics.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/promtool.h"
#include "metrics/registry.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(BackfillMetricsTest, ExportsEverySeriesWithTableAndActorLabels) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics metrics,
                                BackfillMetrics::Create(registry, 7, 3));
  metrics.snapshot_read_row_count.Increment(256);
  metrics.upstream_output_row_count.Increment(10);
  metrics.rate_limit_rows_per_second.Set(1000);
  metrics.upstream_buffer_rows.Set(10);
  metrics.upstream_buffer_bytes.Set(640);
  metrics.barrier_latency_seconds.Observe(0.02);
  metrics.vnodes_completed.Set(2);
  metrics.vnodes_assigned.Set(64);
  const std::string text = registry.ExportText();
  const std::string labels = "{table_id=\"7\",actor_id=\"3\"}";
  for (const std::string& line : {
           "stream_backfill_snapshot_read_rows_total" + labels + " 256",
           "stream_backfill_upstream_output_rows_total" + labels + " 10",
           "stream_backfill_rate_limit_rows_per_second" + labels + " 1000",
           "stream_backfill_upstream_buffer_rows" + labels + " 10",
           "stream_backfill_upstream_buffer_bytes" + labels + " 640",
           "stream_backfill_vnodes_completed" + labels + " 2",
           "stream_backfill_vnodes_assigned" + labels + " 64",
           std::string("stream_backfill_barrier_latency_seconds_bucket{"
                       "table_id=\"7\",actor_id=\"3\",le=\"0.025\"} 1"),
           "stream_backfill_barrier_latency_seconds_count" + labels + " 1",
           std::string("# TYPE stream_backfill_snapshot_read_rows_total "
                       "counter"),
           std::string("# TYPE stream_backfill_barrier_latency_seconds "
                       "histogram"),
       }) {
    EXPECT_THAT(text, HasSubstr(line + "\n"));
  }
}

TEST(BackfillMetricsTest, ActorsShareFamiliesAndCreateIsIdempotent) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics first,
                                BackfillMetrics::Create(registry, 7, 1));
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics second,
                                BackfillMetrics::Create(registry, 7, 2));
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics first_again,
                                BackfillMetrics::Create(registry, 7, 1));
  first.snapshot_read_row_count.Increment(5);
  first_again.snapshot_read_row_count.Increment(1);
  second.snapshot_read_row_count.Increment(100);
  EXPECT_EQ(first.snapshot_read_row_count.value(), 6u);
  EXPECT_EQ(second.snapshot_read_row_count.value(), 100u);
  const std::string text = registry.ExportText();
  EXPECT_THAT(text, HasSubstr("stream_backfill_snapshot_read_rows_total{"
                              "table_id=\"7\",actor_id=\"1\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("stream_backfill_snapshot_read_rows_total{"
                              "table_id=\"7\",actor_id=\"2\"} 100\n"));
  // One HELP line per family, whatever the number of actors.
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& line) {
                            return line.starts_with("# HELP");
                          }),
            8);
}

TEST(BackfillMetricsTest, ConflictingFamilyIsAnError) {
  Registry registry;
  ASSERT_THAT(registry.AddGaugeFamily(BackfillMetrics::kSnapshotReadRowsTotal,
                                      "Something else.", {}),
              IsOk());
  EXPECT_THAT(BackfillMetrics::Create(registry, 1, 1),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST(BackfillMetricsTest, DefaultHandlesAreDetached) {
  BackfillMetrics metrics;
  metrics.snapshot_read_row_count.Increment();
  metrics.barrier_latency_seconds.Observe(1);
  SUCCEED();
}

TEST(BackfillMetricsTest, BarrierTimerOnTheInjectedClock) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics metrics,
                                BackfillMetrics::Create(registry, 1, 1));
  {
    HistogramTimer timer(metrics.barrier_latency_seconds, clock);
    clock.AdvanceTime(absl::Milliseconds(300));
  }
  EXPECT_EQ(metrics.barrier_latency_seconds.sum(), 0.3);
  EXPECT_THAT(registry.ExportText(),
              HasSubstr("stream_backfill_barrier_latency_seconds_bucket{"
                        "table_id=\"1\",actor_id=\"1\",le=\"0.5\"} 1\n"));
}

// promtool parses the exposition and has nothing to say about it: exit 0,
// no output (counters end in _total, units in the names).
TEST(BackfillMetricsTest, PromtoolIsSilent) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics metrics,
                                BackfillMetrics::Create(registry, 7, 3));
  ASSERT_THAT(BackfillMetrics::Create(registry, 7, 4), IsOk());
  metrics.snapshot_read_row_count.Increment(3);
  metrics.rate_limit_rows_per_second.Set(
      std::numeric_limits<double>::infinity());
  metrics.barrier_latency_seconds.Observe(0.5);
  const std::string text = registry.ExportText();
  absl::StatusOr<PromtoolResult> result = RunPromtoolCheckMetrics(text);
  ASSERT_THAT(result, IsOk())
      << "promtool is required by this test (Debian package `prometheus`)";
  EXPECT_EQ(result->exit_code, 0) << result->output << "\n" << text;
  EXPECT_EQ(result->output, "") << text;
}

}  // namespace
}  // namespace backfill
