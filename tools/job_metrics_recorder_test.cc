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

TEST(JobMetricsRecorderTest, CountersFollowTheRuntimesFiguresAcrossARecovery) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto recorder, JobMetricsRecorder::Create(registry, 1, 2, clock));
  const JobMetrics& m = recorder->metrics();
  recorder->Observe(Progress(100, 1, 0, 10, 0));
  recorder->Observe(Progress(250, 2, 1, 300, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 250u);
  EXPECT_EQ(m.epochs_total.value(), 2u);
  EXPECT_EQ(m.checkpoints_total.value(), 1u);
  EXPECT_EQ(m.barrier_latency_seconds.count(), 2u);
  EXPECT_DOUBLE_EQ(m.barrier_latency_seconds.sum(), 0.04);
  // A recovery: the source replays from the checkpoint (offset 200).
  recorder->OnRecovery();
  EXPECT_EQ(m.recoveries_total.value(), 1u);
  recorder->Observe(Progress(200, 3, 2, 300, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 250u);
  recorder->Observe(Progress(260, 4, 2, 320, 0));
  EXPECT_EQ(m.upstream_ops_total.value(), 310u);
  EXPECT_EQ(m.epochs_total.value(), 4u);
}

TEST(JobMetricsRecorderTest,
     ProgressIsTheSnapshotShareMonotoneAndOneOnlyWhenDone) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto recorder, JobMetricsRecorder::Create(registry, 1, 2, clock));
  const JobMetrics& m = recorder->metrics();
  recorder->Observe(Progress(0, 1, 0, 250, 0));
  recorder->ObserveSnapshotPercent(25);
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.25);
  recorder->ObserveSnapshotPercent(50);
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.5);
  recorder->ObserveSnapshotPercent(10);  // a lower figure: kept
  EXPECT_DOUBLE_EQ(m.progress_ratio.value(), 0.5);
  recorder->Observe(Progress(0, 4, 0, 5000, 8));
  recorder->ObserveSnapshotPercent(100);  // not done yet: below 1
  EXPECT_LT(m.progress_ratio.value(), 1.0);
  EXPECT_EQ(m.backfill_done.value(), 0);
  JobProgress done = Progress(0, 5, 0, 5000, 8);
  done.backfill_done = true;
  recorder->Observe(done);
  EXPECT_EQ(m.progress_ratio.value(), 1.0);
  EXPECT_EQ(m.backfill_done.value(), 1);
  EXPECT_THAT(registry.ExportText(),
              HasSubstr("backfill_job_progress_ratio{table_id=\"1\"} 1\n"));
}

// RocksDB's tickers become counters (a reopened store's restart from 0 is
// counted, not lost), its properties gauges.
TEST(JobMetricsRecorderTest, StorageFiguresFollowRocksDbAcrossAReopen) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto recorder, JobMetricsRecorder::Create(registry, 1, 2, clock));
  const StorageMetrics& m = recorder->storage_metrics();
  RocksDbStats stats;
  stats.read_bytes = 1000;
  stats.written_bytes = 5000;
  stats.block_cache_hits = 7;
  stats.block_cache_misses = 3;
  stats.sst_files = 4;
  stats.sst_bytes = 1 << 20;
  stats.pending_compaction_bytes = 4096;
  recorder->RecordStorage(stats);
  stats.read_bytes = 1500;
  stats.sst_files = 2;
  recorder->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 1500u);
  EXPECT_EQ(m.written_bytes_total.value(), 5000u);
  EXPECT_EQ(m.block_cache_hits_total.value(), 7u);
  EXPECT_EQ(m.block_cache_misses_total.value(), 3u);
  EXPECT_EQ(m.sst_files.value(), 2);
  EXPECT_EQ(m.sst_bytes.value(), 1 << 20);
  EXPECT_EQ(m.pending_compaction_bytes.value(), 4096);
  RocksDbStats reopened;  // tickers start again
  reopened.read_bytes = 200;
  recorder->RecordStorage(reopened);
  EXPECT_EQ(m.read_bytes_total.value(), 1700u);
  EXPECT_EQ(m.written_bytes_total.value(), 5000u);
  EXPECT_EQ(m.sst_files.value(), 0);
  EXPECT_THAT(registry.ExportText(),
              HasSubstr("backfill_rocksdb_read_bytes_total 1700\n"));
}

// A reopened store's tickers count from 0 even when they already passed the
// old store's last values before the first RecordStorage after the reopen.
TEST(JobMetricsRecorderTest, StorageTickersOfAReopenedStoreCountFromZero) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto recorder, JobMetricsRecorder::Create(registry, 1, 2, clock));
  const StorageMetrics& m = recorder->storage_metrics();
  std::unique_ptr<StateStore> first = NewMemoryStateStore();
  std::unique_ptr<StateStore> second = NewMemoryStateStore();
  recorder->Meter(first.get());
  RocksDbStats stats;
  stats.read_bytes = 1000;
  recorder->RecordStorage(stats);
  recorder->Meter(second.get());  // the reopen
  stats.read_bytes = 1200;
  recorder->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 2200u);
  stats.read_bytes = 1300;
  recorder->RecordStorage(stats);
  EXPECT_EQ(m.read_bytes_total.value(), 2300u);
}

TEST(JobMetricsRecorderTest,
     MeterCountsViewAndUpstreamWritesAndFollowsReopens) {
  Registry registry;
  SimulatedClock clock;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto recorder, JobMetricsRecorder::Create(registry, 1, 2, clock));
  std::unique_ptr<StateStore> first = NewMemoryStateStore();
  std::unique_ptr<StateStore> second = NewMemoryStateStore();
  MeteredStateStore& metered = recorder->Meter(first.get());
  EXPECT_EQ(&recorder->Meter(second.get()), &metered);  // the same, retargeted
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
  EXPECT_EQ(recorder->metrics().view_written_rows_total.value(), 1u);
  EXPECT_EQ(recorder->metrics().upstream_written_rows_total.value(), 2u);
  EXPECT_EQ(recorder->metrics().checkpoint_duration_seconds.count(), 1u);
  EXPECT_EQ(second->CommittedEpoch(2), Epoch(2));
}

TEST(JobMetricsRecorderTest, ConflictingRegistryIsAnError) {
  Registry registry;
  ASSERT_TRUE(registry.AddGaugeFamily(JobMetrics::kEpochsTotal, "x", {}).ok());
  SimulatedClock clock;
  EXPECT_THAT(JobMetricsRecorder::Create(registry, 1, 2, clock).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

}  // namespace
}  // namespace backfill
