#include "tools/snapshot_progress.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::DoubleNear;
using ::testing::Optional;

// `count` vnodes of `bytes` each, nothing read.
std::vector<VnodeSnapshotProgress> Vnodes(int count, uint64_t bytes) {
  return std::vector<VnodeSnapshotProgress>(
      count, VnodeSnapshotProgress{.estimated_bytes = bytes});
}

TEST(SnapshotProgressTest, TracksTheShareReadWithAGoodPrior) {
  // 4 vnodes of 100 rows, 50 bytes a row.
  SnapshotProgress progress({.expected_total_rows = 400});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(4, 5000);
  EXPECT_EQ(progress.Update(0, vnodes).percent, 0);
  vnodes[0].rows_read = 50;
  vnodes[1].rows_read = 50;
  SnapshotProgressEstimate estimate = progress.Update(1, vnodes);
  EXPECT_THAT(estimate.percent, DoubleNear(25, 1e-9));
  EXPECT_EQ(estimate.estimated_total_rows, 400u);
  EXPECT_EQ(estimate.rows_read, 100u);
  vnodes[0] = {.estimated_bytes = 5000, .rows_read = 100, .finished = true};
  vnodes[1].rows_read = 100;
  vnodes[2].rows_read = 100;
  estimate = progress.Update(2, vnodes);
  EXPECT_THAT(estimate.percent, DoubleNear(75, 1e-9));
  EXPECT_EQ(estimate.vnodes_finished, 1u);
  EXPECT_EQ(estimate.vnodes_total, 4u);
}

TEST(SnapshotProgressTest, NeverDecreasesWhenTheTotalIsRefinedUpwards) {
  // The prior says 100 rows; the vnodes turn out to hold 4 x 100.
  SnapshotProgress progress({.expected_total_rows = 100});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(4, 4000);
  vnodes[0].rows_read = 60;
  const double before = progress.Update(1, vnodes).percent;
  EXPECT_GT(before, 40);  // 60 of 60 + 3 x 25
  // Vnode 0 finishes with 100 rows: 40 bytes a row, 400 rows in all.
  vnodes[0] = {.estimated_bytes = 4000, .rows_read = 100, .finished = true};
  SnapshotProgressEstimate estimate = progress.Update(2, vnodes);
  EXPECT_EQ(estimate.estimated_total_rows, 400u);
  EXPECT_EQ(estimate.percent, before);  // 25% now, but it holds
  for (int v = 1; v < 4; ++v) vnodes[v].rows_read = 90;
  EXPECT_THAT(progress.Update(3, vnodes).percent,
              DoubleNear(100.0 * 370 / 400, 1e-9));
}

TEST(SnapshotProgressTest, NeverReaches100BeforeTheEnd) {
  // An underestimate: the store says little, the vnodes hold much more.
  SnapshotProgress progress({.expected_total_rows = 10});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(2, 100);
  double last = 0;
  for (uint64_t rows = 0; rows <= 1000; rows += 50) {
    vnodes[0].rows_read = rows;
    vnodes[1].rows_read = rows;
    SnapshotProgressEstimate estimate = progress.Update(rows / 50.0, vnodes);
    EXPECT_LE(estimate.percent, 99.9) << rows;
    EXPECT_GE(estimate.percent, last) << rows;
    EXPECT_GE(estimate.estimated_total_rows, estimate.rows_read);
    last = estimate.percent;
  }
  vnodes[0].finished = true;
  EXPECT_LE(progress.Update(30, vnodes).percent, 99.9);
  vnodes[1].finished = true;
  SnapshotProgressEstimate estimate = progress.Update(31, vnodes);
  EXPECT_EQ(estimate.percent, 100);
  EXPECT_THAT(estimate.eta_seconds, Optional(0.0));
}

TEST(SnapshotProgressTest, SkewedVnodesAreWeightedByTheirSize) {
  // One vnode holds 90% of the bytes: reading it half-way is 45% even
  // though no vnode is finished (the vnode count would say 0%).
  SnapshotProgress progress({.expected_total_rows = 1000});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(10, 1000);
  vnodes[0].estimated_bytes = 81000;  // 900 rows; the other 9 hold 100
  vnodes[0].rows_read = 450;
  EXPECT_THAT(progress.Update(1, vnodes).percent, DoubleNear(45, 1e-9));
}

TEST(SnapshotProgressTest, AFewFinishedVnodesWithCoarseSizesDoNotSwingIt) {
  // 100 vnodes of 100 rows, 100 bytes a row; the store underestimates the
  // first 5 five times. They finish first: learnt from them alone, the
  // table would hold ~48,000 rows (1% read); pooled with the prior, ~5%.
  SnapshotProgress progress({.expected_total_rows = 10000});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(100, 10000);
  for (int v = 0; v < 5; ++v) {
    vnodes[v] = {.estimated_bytes = 2000, .rows_read = 100, .finished = true};
  }
  const SnapshotProgressEstimate estimate = progress.Update(1, vnodes);
  EXPECT_GT(estimate.percent, 4);
  EXPECT_LT(estimate.percent, 5.5);
}

TEST(SnapshotProgressTest, WithoutSizesOrPriorTheFinishedVnodesStandIn) {
  SnapshotProgress progress;
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(4, 0);
  vnodes[0] = {.rows_read = 7, .finished = true};
  vnodes[1].rows_read = 3;
  SnapshotProgressEstimate estimate = progress.Update(1, vnodes);
  EXPECT_THAT(estimate.percent, DoubleNear(25, 1e-9));
  EXPECT_EQ(estimate.estimated_total_rows, 0u);
  EXPECT_EQ(estimate.eta_seconds, std::nullopt);
}

TEST(SnapshotProgressTest, EtaFollowsTheRecentRate) {
  // 100,000 rows in one vnode; 1,000 rows/s for 20 s, then 4,000 rows/s.
  SnapshotProgress progress(
      {.expected_total_rows = 100000, .eta_window_seconds = 5});
  std::vector<VnodeSnapshotProgress> vnodes = Vnodes(1, 1000000);
  SnapshotProgressEstimate estimate;
  for (int t = 0; t <= 20; ++t) {
    vnodes[0].rows_read = 1000 * t;
    estimate = progress.Update(t, vnodes);
    // The first sample alone gives no rate.
    EXPECT_EQ(estimate.rate_known, t > 0) << t;
  }
  EXPECT_THAT(estimate.rows_per_second, DoubleNear(1000, 1e-9));
  EXPECT_THAT(estimate.eta_seconds, Optional(DoubleNear(80, 1e-9)));
  for (int t = 21; t <= 30; ++t) {
    vnodes[0].rows_read = 20000 + 4000 * (t - 20);
    estimate = progress.Update(t, vnodes);
  }
  // The window (5 s) holds only the new rate: 40,000 rows left at 4,000/s.
  EXPECT_THAT(estimate.rows_per_second, DoubleNear(4000, 1e-9));
  EXPECT_THAT(estimate.eta_seconds, Optional(DoubleNear(10, 1e-9)));
  // A pause: no rows for a whole window, no rate, no ETA.
  for (int t = 31; t <= 37; ++t) estimate = progress.Update(t, vnodes);
  EXPECT_EQ(estimate.rows_per_second, 0);
  EXPECT_TRUE(estimate.rate_known);  // Known to be 0.
  EXPECT_EQ(estimate.eta_seconds, std::nullopt);
}

TEST(SnapshotProgressTest, RandomRunsAreMonotoneAndBelow100UntilTheEnd) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 random(seed);
  for (int run = 0; run < 50; ++run) {
    const int count = 1 + static_cast<int>(random() % 16);
    std::vector<uint64_t> rows(count);
    std::vector<VnodeSnapshotProgress> vnodes(count);
    uint64_t total = 0;
    for (int v = 0; v < count; ++v) {
      rows[v] = random() % 1000;
      total += rows[v];
      // The store's estimate is off by up to a factor of 2 either way.
      vnodes[v].estimated_bytes =
          rows[v] * (25 + random() % 75) + (random() % 2) * 500;
    }
    SnapshotProgress progress(
        {.expected_total_rows = total / 2 + random() % (total + 1)});
    double last = 0;
    for (double t = 0;; t += 0.5) {
      bool all = true;
      for (int v = 0; v < count; ++v) {
        if (vnodes[v].finished) continue;
        vnodes[v].rows_read =
            std::min<uint64_t>(rows[v], vnodes[v].rows_read + random() % 100);
        vnodes[v].finished = vnodes[v].rows_read == rows[v] && random() % 2;
        all = all && vnodes[v].finished;
      }
      const SnapshotProgressEstimate estimate = progress.Update(t, vnodes);
      ASSERT_GE(estimate.percent, last) << "run " << run << " t " << t;
      if (all) {
        ASSERT_EQ(estimate.percent, 100);
        break;
      }
      ASSERT_LT(estimate.percent, 100) << "run " << run << " t " << t;
      last = estimate.percent;
    }
  }
}

}  // namespace
}  // namespace backfill
