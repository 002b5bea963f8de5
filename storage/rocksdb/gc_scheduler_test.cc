// GcScheduler with fake hooks: no database.
#include "storage/rocksdb/gc_scheduler.h"

#include <atomic>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;

// Counts compactions; the estimate of stored versions is settable.
struct FakeStore {
  std::atomic<int> compactions{0};
  std::atomic<uint64_t> stored{0};
  absl::Status result;

  GcHooks Hooks() {
    return GcHooks{
        .full_compaction =
            [this] {
              ++compactions;
              return result;
            },
        .estimate_stored_versions = [this] { return stored.load(); },
        .abort_compaction = [] {},
    };
  }
};

TEST(GcSchedulerTest, WithoutAFractionOnlyCounts) {
  FakeStore store;
  GcScheduler gc({.tombstone_fraction = 0, .min_tombstones = 1}, store.Hooks());
  gc.NoteTombstones(1000);
  GcStats stats = gc.WaitForGc();
  EXPECT_EQ(stats.full_compactions, 0u);
  EXPECT_EQ(stats.pending_tombstones, 1000u);
  EXPECT_EQ(store.compactions, 0);
  // An explicit compaction resets the count.
  EXPECT_THAT(gc.RunFullCompaction(), IsOk());
  stats = gc.WaitForGc();
  EXPECT_EQ(stats.full_compactions, 1u);
  EXPECT_EQ(stats.pending_tombstones, 0u);
  EXPECT_EQ(store.compactions, 1);
}

TEST(GcSchedulerTest, CompactsOnceBothThresholdsAreReached) {
  FakeStore store;
  store.stored = 100;  // Fraction 0.5: 50 tombstones.
  GcScheduler gc({.tombstone_fraction = 0.5, .min_tombstones = 10},
                 store.Hooks());
  gc.NoteTombstones(20);
  GcStats stats = gc.WaitForGc();
  EXPECT_EQ(stats.full_compactions, 0u);
  EXPECT_EQ(stats.pending_tombstones, 20u);
  gc.NoteTombstones(30);
  stats = gc.WaitForGc();
  EXPECT_EQ(stats.full_compactions, 1u);
  EXPECT_EQ(stats.pending_tombstones, 0u);
  EXPECT_THAT(stats.last_error, IsOk());
  EXPECT_EQ(store.compactions, 1);
}

TEST(GcSchedulerTest, MinTombstonesAppliesToSmallStores) {
  FakeStore store;
  store.stored = 0;
  GcScheduler gc({.tombstone_fraction = 0.2, .min_tombstones = 100},
                 store.Hooks());
  gc.NoteTombstones(99);
  EXPECT_EQ(gc.WaitForGc().full_compactions, 0u);
  gc.NoteTombstones(1);
  EXPECT_EQ(gc.WaitForGc().full_compactions, 1u);
}

TEST(GcSchedulerTest, BackgroundErrorIsReportedNotThrown) {
  FakeStore store;
  store.result = absl::InternalError("disk on fire");
  GcScheduler gc({.tombstone_fraction = 1, .min_tombstones = 1}, store.Hooks());
  gc.NoteTombstones(5);
  EXPECT_THAT(gc.WaitForGc().last_error, StatusIs(absl::StatusCode::kInternal));
  // Retried at the next trigger.
  store.result = absl::OkStatus();
  gc.NoteTombstones(5);
  const GcStats stats = gc.WaitForGc();
  EXPECT_EQ(stats.full_compactions, 2u);
  EXPECT_THAT(stats.last_error, IsOk());
}

TEST(GcSchedulerTest, StopAbortsARunningCompaction) {
  Mutex mu;
  CondVar cv;
  bool started = false;
  bool aborted = false;
  GcHooks hooks{
      .full_compaction =
          [&] {
            MutexLock lock(&mu);
            started = true;
            cv.SignalAll();
            while (!aborted) cv.Wait(&mu);
            return absl::AbortedError("aborted");
          },
      .estimate_stored_versions = [] { return uint64_t{0}; },
      .abort_compaction =
          [&] {
            MutexLock lock(&mu);
            aborted = true;
            cv.SignalAll();
          },
  };
  GcScheduler gc({.tombstone_fraction = 1, .min_tombstones = 1}, hooks);
  gc.NoteTombstones(1);
  {
    MutexLock lock(&mu);
    while (!started) cv.Wait(&mu);
  }
  gc.Stop();  // Returns: the compaction was aborted and the thread joined.
  EXPECT_TRUE(aborted);
  // The error of a compaction aborted by Stop is not reported.
  EXPECT_THAT(gc.WaitForGc().last_error, IsOk());
  gc.Stop();  // Idempotent.
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
