#include "metrics/job_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/backfill_metrics.h"
#include "metrics/promtool.h"
#include "metrics/registry.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(JobMetricsTest, ExportsEverySeriesWithTheTableLabel) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobMetrics metrics,
                                JobMetrics::Create(registry, 7));
  metrics.upstream_ops_total.Increment(120);
  metrics.view_written_rows_total.Increment(130);
  metrics.upstream_written_rows_total.Increment(140);
  metrics.epochs_total.Increment(10);
  metrics.checkpoints_total.Increment(5);
  metrics.recoveries_total.Increment();
  metrics.checkpoint_duration_seconds.Observe(0.004);
  metrics.barrier_latency_seconds.Observe(0.02);
  metrics.progress_ratio.Set(0.5);
  metrics.backfill_done.Set(0);
  metrics.adaptive_target_unreachable.Set(1);
  const std::string text = registry.ExportText();
  const std::string labels = "{table_id=\"7\"}";
  for (const std::string& line : {
           "backfill_job_upstream_ops_total" + labels + " 120",
           "backfill_job_view_written_rows_total" + labels + " 130",
           "backfill_job_upstream_written_rows_total" + labels + " 140",
           "backfill_job_epochs_total" + labels + " 10",
           "backfill_job_checkpoints_total" + labels + " 5",
           "backfill_job_recoveries_total" + labels + " 1",
           std::string("backfill_job_checkpoint_duration_seconds_bucket{"
                       "table_id=\"7\",le=\"0.005\"} 1"),
           "backfill_job_checkpoint_duration_seconds_count" + labels + " 1",
           std::string("backfill_job_barrier_latency_seconds_bucket{"
                       "table_id=\"7\",le=\"0.025\"} 1"),
           "backfill_job_progress_ratio" + labels + " 0.5",
           "backfill_job_backfill_done" + labels + " 0",
           "backfill_job_adaptive_target_unreachable" + labels + " 1",
           std::string("# TYPE backfill_job_upstream_ops_total counter"),
           std::string("# TYPE backfill_job_progress_ratio gauge"),
       }) {
    EXPECT_THAT(text, HasSubstr(line + "\n"));
  }
}

TEST(JobMetricsTest, CreateIsIdempotentAndConflictsAreErrors) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobMetrics first,
                                JobMetrics::Create(registry, 7));
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobMetrics again,
                                JobMetrics::Create(registry, 7));
  first.upstream_ops_total.Increment(2);
  again.upstream_ops_total.Increment(3);
  EXPECT_EQ(first.upstream_ops_total.value(), 5u);

  Registry conflicting;
  ASSERT_THAT(conflicting.AddGaugeFamily(JobMetrics::kUpstreamOpsTotal, "x",
                                         {"table_id"}),
              IsOk());
  EXPECT_THAT(JobMetrics::Create(conflicting, 7).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

// With the backfill series beside them, as the command exports them:
// promtool has nothing to say (exit 0, no output).
TEST(JobMetricsTest, PromtoolIsSilentOnJobAndBackfillMetrics) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobMetrics metrics,
                                JobMetrics::Create(registry, 7));
  ASSERT_THAT(BackfillMetrics::Create(registry, 7, 1), IsOk());
  metrics.checkpoint_duration_seconds.Observe(0.01);
  metrics.progress_ratio.Set(1);
  const std::string text = registry.ExportText();
  absl::StatusOr<PromtoolResult> result = RunPromtoolCheckMetrics(text);
  ASSERT_THAT(result, IsOk())
      << "promtool is required by this test (Debian package `prometheus`)";
  EXPECT_EQ(result->exit_code, 0) << result->output << "\n" << text;
  EXPECT_EQ(result->output, "") << text;
}

}  // namespace
}  // namespace backfill
