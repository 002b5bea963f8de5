#include "tools/job_metrics_recorder.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

JobProgress Progress(uint64_t ops, uint64_t epochs, uint64_t checkpoints,
                     uint64_t rows, uint64_t vnodes_completed) {
  JobProgress progress;
  progress.upstream_ops = ops;
  progress.epochs = epochs;
  progress.checkpoints = checkpoints;
  progress.snapshot_rows = rows;
  progress.vnodes_completed = vnodes_completed;
  progress.vnodes_total = 8;
  progress.last_backfill_barrier_latency_ms = 20;
  return progress;
}

// A recorder of upstream table 1 and view table 2 over its own registry.
class JobMetricsRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        recorder_, JobMetricsRecorder::Create(registry_, 1, 2, clock_));
  }

  Registry registry_;
  SimulatedClock clock_;
  std::unique_ptr<JobMetricsRecorder> recorder_;
};

TEST_F(JobMetricsRecorderTest,
       CountersFollowTheRuntimesFiguresAcrossARecovery) {
  const JobMetrics& m = recorder_->metrics();
  recorder_->Observe(Progress(100, 1, 0, 10, 0));
  recorder_->Observe(Progress(250, 2, 1, 300, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 250u);
  EXPECT_EQ(m.epochs_total.value(), 2u);
  EXPECT_EQ(m.checkpoints_total.value(), 1u);
  EXPECT_EQ(m.barrier_latency_seconds.count(), 2u);
  EXPECT_DOUBLE_EQ(m.barrier_latency_seconds.sum(), 0.04);
  // A recovery: the source replays from the checkpoint (offset 200).
  recorder_->OnRecovery();
  EXPECT_EQ(m.recoveries_total.value(), 1u);
  recorder_->Observe(Progress(200, 3, 2, 300, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 250u);
  recorder_->Observe(Progress(260, 4, 2, 320, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 310u);
  EXPECT_EQ(m.epochs_total.value(), 4u);
}

TEST_F(JobMetricsRecorderTest,
       ProgressIsTheSnapshotShareMonotoneAndOneOnlyWhenDone) {
  const JobMetrics& m = recorder_->metrics();
  recorder_->Observe(Progress(0, 1, 0, 250, 0));
  recorder_->ObserveSnapshotPercent(25);
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.25);
  recorder_->ObserveSnapshotPercent(50);
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.5);
  recorder_->ObserveSnapshotPercent(10);  // a lower figure: kept
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.5);
  recorder_->Observe(Progress(0, 4, 0, 5000, 8));
  recorder_->ObserveSnapshotPercent(100);  // not done yet: below 1
  EXPECT_LT(m.progress_ratio.value(), 1.0);
  EXPECT_EQ(m.backfill_done.value(), 0);
  JobProgress done = Progress(0, 5, 0, 5000, 8);
  done.backfill_done = true;
  recorder_->Observe(done);
  EXPECT_EQ(m.progress_ratio.value(), 1.0);
  EXPECT_EQ(m.backfill_done.value(), 1);
  EXPECT_THAT(registry_.ExportText(),
              HasSubstr("backfill_job_progress_ratio{table_id=\"1\"} 1\n"));
}

// The adaptive controller's verdict follows each progress report, both ways.
TEST_F(JobMetricsRecorderTest, TargetUnreachableFollowsTheController) {
  const JobMetrics& m = recorder_->metrics();
  JobProgress progress = Progress(0, 1, 0, 250, 0);
  recorder_->Observe(progress);
  EXPECT_EQ(m.adaptive_target_unreachable.value(), 0);
  progress.adaptive_target_unreachable = true;
  recorder_->Observe(progress);
  EXPECT_EQ(m.adaptive_target_unreachable.value(), 1);
  EXPECT_THAT(registry_.ExportText(),
              HasSubstr("backfill_job_adaptive_target_unreachable{table_id="
                        "\"1\"} 1\n"));
  progress.adaptive_target_unreachable = false;
  recorder_->Observe(progress);
  EXPECT_EQ(m.adaptive_target_unreachable.value(), 0);
}

// RocksDB's tickers become counters (a reopened store's restart from 0 is
// counted, not lost), its properties gauges.
TEST_F(JobMetricsRecorderTest, StorageFiguresFollowRocksDbAcrossAReopen) {
  const StorageMetrics& m = recorder_->storage_metrics();
  RocksDbStats stats;
  stats.read_bytes = 1000;
  stats.written_bytes = 5000;
  stats.block_cache_hits = 7;
  stats.block_cache_misses = 3;
  stats.sst_files = 4;
  stats.sst_bytes = 1 << 20;
  stats.pending_compaction_bytes = 4096;
  stats.table_readers_bytes = 2048;
  stats.block_cache_bytes = 65536;
  recorder_->RecordStorage(stats);
  stats.read_bytes = 1500;
  stats.sst_files = 2;
  recorder_->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 1500u);
  EXPECT_EQ(m.written_bytes_total.value(), 5000u);
  EXPECT_EQ(m.block_cache_hits_total.value(), 7u);
  EXPECT_EQ(m.block_cache_misses_total.value(), 3u);
  EXPECT_EQ(m.sst_files.value(), 2);
  EXPECT_EQ(m.sst_bytes.value(), 1 << 20);
  EXPECT_EQ(m.pending_compaction_bytes.value(), 4096);
  EXPECT_EQ(m.table_readers_bytes.value(), 2048);
  EXPECT_EQ(m.block_cache_bytes.value(), 65536);
  RocksDbStats reopened;  // tickers start again
  reopened.read_bytes = 200;
  recorder_->RecordStorage(reopened);
  EXPECT_EQ(m.read_bytes_total.value(), 1700u);
  EXPECT_EQ(m.written_bytes_total.value(), 5000u);
  EXPECT_EQ(m.sst_files.value(), 0);
  EXPECT_THAT(registry_.ExportText(),
              HasSubstr("backfill_rocksdb_read_bytes_total 1700\n"));
}

// A reopened store's tickers count from 0 even when they already passed the
// old store's last values before the first RecordStorage after the reopen.
TEST_F(JobMetricsRecorderTest, StorageTickersOfAReopenedStoreCountFromZero) {
  const StorageMetrics& m = recorder_->storage_metrics();
  std::unique_ptr<StateStore> first = NewMemoryStateStore();
  std::unique_ptr<StateStore> second = NewMemoryStateStore();
  recorder_->Meter(first.get());
  RocksDbStats stats;
  stats.read_bytes = 1000;
  recorder_->RecordStorage(stats);
  recorder_->Meter(second.get());  // the reopen
  stats.read_bytes = 1200;
  recorder_->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 2200u);
  stats.read_bytes = 1300;
  recorder_->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 2300u);
}

TEST_F(JobMetricsRecorderTest,
       MeterCountsViewAndUpstreamWritesAndFollowsReopens) {
  std::unique_ptr<StateStore> first = NewMemoryStateStore();
  std::unique_ptr<StateStore> second = NewMemoryStateStore();
  MeteredStateStore& metered = recorder_->Meter(first.get());
  EXPECT_EQ(&recorder_->Meter(second.get()), &metered);  // the same, retargeted
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto view,
                                metered.NewLocalStateStore(2, LocalOptions{}));
  BACKFILL_ASSERT_OK(view->Init(EpochPair::ForInitial(Epoch(2))));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto upstream,
                                metered.NewLocalStateStore(1, LocalOptions{}));
  BACKFILL_ASSERT_OK(upstream->Init(EpochPair::ForInitial(Epoch(2))));
  BACKFILL_ASSERT_OK(view->Insert(VirtualNode(0), "k", "v"));
  BACKFILL_ASSERT_OK(upstream->Insert(VirtualNode(0), "k", "v"));
  BACKFILL_ASSERT_OK(upstream->Delete(VirtualNode(0), "j"));
  BACKFILL_ASSERT_OK(view->Seal(EpochPair{Epoch(3), Epoch(2)}));
  BACKFILL_ASSERT_OK(upstream->Seal(EpochPair{Epoch(3), Epoch(2)}));
  BACKFILL_ASSERT_OK(metered.Checkpoint(Epoch(2)));
  EXPECT_EQ(recorder_->metrics().view_written_rows_total.value(), 1u);
  EXPECT_EQ(recorder_->metrics().upstream_written_rows_total.value(), 2u);
  EXPECT_EQ(recorder_->metrics().checkpoint_duration_seconds.count(), 1u);
  EXPECT_EQ(second->CommittedEpoch(2), Epoch(2));
}

// A registry that already holds one of the metrics under another kind.
TEST_F(JobMetricsRecorderTest, ConflictingRegistryIsAnError) {
  Registry registry;
  ASSERT_TRUE(registry.AddGaugeFamily(JobMetrics::kEpochsTotal, "x", {}).ok());
  EXPECT_THAT(JobMetricsRecorder::Create(registry, 1, 2, clock_).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

}  // namespace
}  // namespace backfill
