#include "executor/runtime/running_quantile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(PercentileTest, ByHand) {
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({5.0, 1.0, 3.0}, 0.0), 1.0);
  EXPECT_EQ(Percentile({5.0, 1.0, 3.0}, 0.5), 3.0);
  // Index min(2, floor(2.97)) = 2.
  EXPECT_EQ(Percentile({5.0, 1.0, 3.0}, 0.99), 5.0);
  EXPECT_EQ(Percentile({5.0, 1.0, 3.0}, 1.0), 5.0);
  // An even count: the upper middle value.
  EXPECT_EQ(Percentile({4.0, 1.0, 3.0, 2.0}, 0.5), 3.0);
}

TEST(RunningQuantileTest, EmptyIsZero) {
  RunningQuantile q(0.99);
  EXPECT_EQ(q.Get(), 0);
  EXPECT_EQ(q.size(), 0u);
}

TEST(RunningQuantileTest, SmallSeriesByHand) {
  RunningQuantile p50(0.5);
  RunningQuantile p99(0.99);
  for (double v : {5.0, 1.0, 3.0}) {
    p50.Add(v);
    p99.Add(v);
  }
  // Sorted 1 3 5: p50 reads index 1, p99 index min(2, floor(2.97)) = 2.
  EXPECT_EQ(p50.Get(), 3.0);
  EXPECT_EQ(p99.Get(), 5.0);
  p50.Add(2.0);  // 1 2 3 5: index 2.
  EXPECT_EQ(p50.Get(), 3.0);
}

TEST(RunningQuantileTest, NanIsIgnored) {
  RunningQuantile q(0.5);
  q.Add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.Get(), 0);
  q.Add(4.0);
  q.Add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.Get(), 4.0);
}

// Model-based: after every Add, on random series (heavy ties, sorted,
// reverse-sorted, infinities), every quantile equals Percentile's (sorting
// the whole series).
TEST(RunningQuantileTest, MatchesPercentileAfterEveryAdd) {
  const std::vector<double> ps = {0.0, 0.01, 0.3, 0.5, 0.9, 0.99, 0.999, 1.0};
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937_64 rng(seed);
    const int n = static_cast<int>(rng() % 700) + 1;
    const int shape = static_cast<int>(seed % 4);
    std::vector<RunningQuantile> quantiles;
    for (double p : ps) quantiles.emplace_back(p);
    std::vector<double> series;
    for (int i = 0; i < n; ++i) {
      double v = 0;
      switch (shape) {
        case 0:  // Few distinct values: ties everywhere.
          v = static_cast<double>(rng() % 5);
          break;
        case 1:  // Ascending.
          v = i * 0.5;
          break;
        case 2:  // Descending.
          v = 1000.0 - i;
          break;
        default:  // Spread, with an occasional infinity.
          v = std::ldexp(static_cast<double>(rng() % 10000), -4);
          if (rng() % 97 == 0) v = std::numeric_limits<double>::infinity();
          break;
      }
      series.push_back(v);
      for (size_t k = 0; k < ps.size(); ++k) {
        quantiles[k].Add(v);
        ASSERT_EQ(quantiles[k].Get(), Percentile(series, ps[k]))
            << "p " << ps[k] << " after " << series.size() << " values";
        ASSERT_EQ(quantiles[k].size(), series.size());
      }
    }
  }
}

}  // namespace
}  // namespace backfill
