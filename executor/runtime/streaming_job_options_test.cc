#include "executor/runtime/streaming_job_options.h"

#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/snapshot_backfill_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"customer", DataType::kVarchar, 2, true},
                     {"region", DataType::kInt32, 3, false}};
  catalog.pk_indices = {2, 0};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending()};
  catalog.dist_key_indices = {2};
  catalog.vnode_count = 8;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

StreamingJobOptions Job() {
  StreamingJobOptions options;
  options.upstream = Table();
  return options;
}

TEST(StreamingJobOptionsTest, TheDefaultChunkSizeIsTheExecutors) {
  EXPECT_EQ(kDefaultChunkSize, ArrangementBackfillOptions().chunk_size);
  EXPECT_EQ(StreamingJobOptions().chunk_size, kDefaultChunkSize);
}

TEST(StreamingJobOptionsTest, TheDefaultUpstreamBufferBudgetIsTheExecutors) {
  EXPECT_EQ(kDefaultUpstreamBufferBudgetBytes,
            ArrangementBackfillOptions().upstream_buffer_budget_bytes);
  EXPECT_EQ(StreamingJobOptions().upstream_buffer_budget_bytes,
            kDefaultUpstreamBufferBudgetBytes);
}

TEST(StreamingJobOptionsTest, TheDefaultSnapshotLogBudgetIsTheExecutors) {
  EXPECT_EQ(StreamingJobOptions().snapshot_log_budget_bytes,
            SnapshotBackfillOptions().log_budget_bytes);
  EXPECT_EQ(StreamingJobOptions().snapshot_log_budget_bytes,
            kDefaultSnapshotLogBudgetBytes);
}

TEST(StreamingJobOptionsTest, ValidAcceptsAGoodJob) {
  BACKFILL_EXPECT_OK(ValidateStreamingJobOptions(Job()));
}

TEST(StreamingJobOptionsTest, ValidateNamesTheBadField) {
  StreamingJobOptions options = Job();
  options.parallelism = 9;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("parallelism = 9 must be in [1, 8]")));
  options = Job();
  options.parallelism = 0;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = Job();
  options.output_columns = {0, 3};
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("output column 3 is out of range")));
  options = Job();
  options.overrides.parallelism = 9;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("overrides.parallelism = 9")));
  options = Job();
  options.rate_limit = RateLimit::Pause();
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must not be Pause")));
  options = Job();
  options.overrides.rate_limit = RateLimit::Pause();
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = Job();
  options.adaptive_target_barrier_latency = absl::Milliseconds(-5);
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("adaptive_target_barrier_latency = -5ms "
                                 "must not be negative")));
  options = Job();
  options.overrides.adaptive_target = absl::Milliseconds(-1);
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("overrides.adaptive_target = -1ms must not "
                                 "be negative")));
  // Each check names its own field and value: a valid override does not
  // stand in for the invalid option.
  options = Job();
  options.adaptive_target_barrier_latency = absl::Milliseconds(-1);
  options.overrides.adaptive_target = absl::Milliseconds(5);
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("adaptive_target_barrier_latency = -1ms "
                                 "must not be negative")));
  options = Job();
  options.upstream_buffer_budget_bytes = kMaxUpstreamBufferBudgetBytes + 1;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("upstream_buffer_budget_bytes")));
  options = Job();
  options.upstream_buffer_budget_bytes = 0;  // never buffer: valid
  BACKFILL_EXPECT_OK(ValidateStreamingJobOptions(options));
  options = Job();
  options.channel_capacity = 0;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("channel_capacity")));
  options = Job();
  options.barrier_timeout = absl::ZeroDuration();
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("barrier_timeout = 0 must be > 0")));
  options = Job();
  options.actions = {{5, JobAction::Kind::kPause, 0},
                     {5, JobAction::Kind::kResume, 0}};
  EXPECT_THAT(
      ValidateStreamingJobOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("contradict")));
  options = Job();
  options.actions = {{5, JobAction::Kind::kRescale, 0, 9}};
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("actions[0] (rescale 9 at epoch 5): the "
                                 "parallelism must be in [1, 8]")));
  options = Job();
  options.progress_table_id = options.upstream.table_id;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("table id 1 is used twice")));
  options = Job();
  options.upstream.vnode_count = 0;
  EXPECT_FALSE(ValidateStreamingJobOptions(options).ok());
}

TEST(StreamingJobOptionsTest, OnlyAnArrangementJobHasRescaleActions) {
  EXPECT_TRUE(BackfillKindRescales(BackfillKind::kArrangement));
  for (const BackfillKind kind :
       {BackfillKind::kNoShuffle, BackfillKind::kSnapshot}) {
    SCOPED_TRACE(BackfillKindName(kind));
    EXPECT_FALSE(BackfillKindRescales(kind));
    StreamingJobOptions options = Job();
    options.backfill_kind = kind;
    EXPECT_THAT(ValidateStreamingJobOptions(options), IsOk());
    options.actions = {{3, JobAction::Kind::kPause, 0},
                       {5, JobAction::Kind::kRescale, 0, 4}};
    EXPECT_THAT(
        ValidateStreamingJobOptions(options),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr(absl::StrCat("actions[1] (rescale 4 at epoch 5): a ",
                                        BackfillKindName(kind),
                                        " backfill cannot be rescaled"))));
    options.backfill_kind = BackfillKind::kArrangement;
    EXPECT_THAT(ValidateStreamingJobOptions(options), IsOk());
    options.backfill_kind = kind;
    options.actions.pop_back();
    EXPECT_THAT(ValidateStreamingJobOptions(options), IsOk());
  }
  EXPECT_STREQ(BackfillKindName(BackfillKind::kNoShuffle), "no_shuffle");
}

TEST(StreamingJobOptionsTest, ASnapshotJobsTablesAndLogBudgetAreChecked) {
  StreamingJobOptions options = Job();
  options.backfill_kind = BackfillKind::kSnapshot;
  options.snapshot_log_table_id = options.view_table_id;
  EXPECT_THAT(
      ValidateStreamingJobOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is used twice")));
  options.backfill_kind = BackfillKind::kArrangement;  // not its tables
  EXPECT_THAT(ValidateStreamingJobOptions(options), IsOk());
  options = Job();
  options.backfill_kind = BackfillKind::kSnapshot;
  options.snapshot_log_budget_bytes = kMaxUpstreamBufferBudgetBytes + 1;
  EXPECT_THAT(ValidateStreamingJobOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("snapshot_log_budget_bytes")));
}

TEST(StreamingJobOptionsTest, TheAdaptiveFloorIsOneChunkPerFourBarriers) {
  StreamingJobOptions options = Job();
  options.chunk_size = 256;
  options.barrier_interval = absl::Milliseconds(100);
  EXPECT_EQ(AdaptiveFloorRowsPerSecond(options), 640u);
  options.chunk_size = 0;  // the default chunk size
  EXPECT_EQ(AdaptiveFloorRowsPerSecond(options), 640u);
  options.chunk_size = 2;
  options.barrier_interval = absl::Seconds(10);
  EXPECT_EQ(AdaptiveFloorRowsPerSecond(options), 1u);
  options.adaptive_min_rows_per_second = 77;
  EXPECT_EQ(AdaptiveFloorRowsPerSecond(options), 77u);
}

TEST(StreamingJobOptionsTest, TheViewKeepsTheUpstreamPkAsHiddenColumns) {
  StreamingJobOptions options = Job();
  EXPECT_THAT(JobOutputColumns(options), ElementsAre(0, 1, 2));
  EXPECT_THAT(ViewColumns(options), ElementsAre(0, 1, 2));
  options.output_columns = {1};
  EXPECT_THAT(JobOutputColumns(options), ElementsAre(1));
  // The pk columns, in pk order, after the output columns.
  EXPECT_THAT(ViewColumns(options), ElementsAre(1, 2, 0));

  const TableCatalog view = ViewCatalog(options);
  BACKFILL_EXPECT_OK(ValidateTableCatalog(view));
  EXPECT_EQ(view.table_id, options.view_table_id);
  EXPECT_EQ(view.name, "orders_view");
  ASSERT_EQ(view.columns.size(), 3u);
  EXPECT_EQ(view.columns[0].name, "customer");
  EXPECT_EQ(view.columns[1].name, "region");
  EXPECT_EQ(view.columns[2].name, "id");
  EXPECT_EQ(view.columns[2].column_id, 3);
  EXPECT_THAT(view.pk_indices, ElementsAre(1, 2));
  EXPECT_EQ(view.pk_orders, Table().pk_orders);
  EXPECT_THAT(view.dist_key_indices, ElementsAre(1));
  EXPECT_EQ(view.vnode_count, 8);
  EXPECT_THAT(view.value_indices, ElementsAre(0, 1, 2));

  const JobDefinition definition = JobDefinitionOf(options);
  EXPECT_EQ(definition.view.columns.size(), 3u);
  EXPECT_THAT(definition.output_columns, ElementsAre(1));
  EXPECT_EQ(definition.progress_table_id, options.progress_table_id);
  EXPECT_EQ(definition.source_offset_table_id, options.source_offset_table_id);
  BACKFILL_EXPECT_OK(CheckSameJob(definition, JobDefinitionOf(options)));
}

}  // namespace
}  // namespace backfill
