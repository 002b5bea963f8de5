#include "executor/cluster/barrier_collector.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

EpochPair Pair(uint64_t curr) { return {Epoch(curr), Epoch(curr - 1)}; }

// Records each report.
struct Reports {
  std::vector<absl::Status> seen;
  BarrierCollector::Report Add() {
    return [this](const absl::Status& status) { seen.push_back(status); };
  }
};

TEST(BarrierCollectorTest, ReportsOnceEveryActorEmittedAfterTheInject) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(1, {100, 102});
  collector.Inject(1, Pair(5), {102, 100}, reports.Add());
  collector.Emitted(1, 100, Pair(5));
  EXPECT_TRUE(reports.seen.empty());
  collector.Emitted(1, 100, Pair(5));  // Twice the same actor: still one.
  EXPECT_TRUE(reports.seen.empty());
  collector.Emitted(1, 102, Pair(5));
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_TRUE(reports.seen[0].ok()) << reports.seen[0];
  collector.Emitted(1, 102, Pair(5));  // Late: nothing more.
  EXPECT_EQ(reports.seen.size(), 1u);
  EXPECT_EQ(collector.pending_injects(), 0u);
}

TEST(BarrierCollectorTest, ReportsAtTheInjectWhenTheEmissionsCameFirst) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(1, {100});
  collector.Emitted(1, 100, Pair(5));
  collector.Emitted(1, 100, Pair(6));
  EXPECT_EQ(collector.pending_emissions(), 2u);
  collector.Inject(1, Pair(5), {100}, reports.Add());
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_TRUE(reports.seen[0].ok());
  collector.Inject(1, Pair(6), {100}, reports.Add());
  EXPECT_EQ(reports.seen.size(), 2u);
  EXPECT_EQ(collector.pending_emissions(), 0u);
}

TEST(BarrierCollectorTest, KeepsInjectsUntilTheirAttemptBegins) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(1, {100});
  // Attempt 2's inject arrives before its RunAttempt call.
  collector.Inject(2, Pair(9), {101}, reports.Add());
  collector.Emitted(1, 100, Pair(9));  // Attempt 1's: does not count.
  EXPECT_TRUE(reports.seen.empty());
  EXPECT_EQ(collector.pending_injects(), 1u);
  collector.Begin(2, {101});
  EXPECT_TRUE(reports.seen.empty());
  collector.Emitted(2, 101, Pair(9));
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_TRUE(reports.seen[0].ok());
}

TEST(BarrierCollectorTest, AnAttemptsEndDropsWhatItHadPending) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(3, {100});
  collector.Inject(3, Pair(5), {100}, reports.Add());
  EXPECT_EQ(collector.pending_injects(), 1u);
  collector.End(9);  // Not running: nothing.
  EXPECT_EQ(collector.pending_injects(), 1u);
  collector.End(3);
  EXPECT_EQ(collector.pending_injects(), 0u);
  collector.Emitted(3, 100, Pair(5));  // After its end: ignored.
  EXPECT_TRUE(reports.seen.empty());
}

// A coordinator's next attempt may inject while an older attempt's call
// still waits to run here (e.g. one the coordinator already cancelled):
// that older attempt's Begin and End must not drop the newer one's injects.
TEST(BarrierCollectorTest, AnOlderAttemptBeginningLateKeepsTheNextOnesInjects) {
  BarrierCollector collector;
  Reports reports;
  collector.Inject(5, Pair(9), {101}, reports.Add());
  collector.Begin(4, {100});
  collector.Emitted(4, 100, Pair(9));
  collector.End(4);
  EXPECT_TRUE(reports.seen.empty());
  EXPECT_EQ(collector.pending_injects(), 1u);
  collector.Begin(5, {101});
  collector.Emitted(5, 101, Pair(9));
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_TRUE(reports.seen[0].ok());
}

TEST(BarrierCollectorTest, KeepsTheInjectsOfTheLastFewAttemptsOnly) {
  BarrierCollector collector;
  Reports reports;
  const uint64_t attempts = BarrierCollector::kMaxEarlyAttempts + 2;
  for (uint64_t key = 1; key <= attempts; ++key) {
    collector.Inject(key, Pair(4), {100}, reports.Add());
  }
  EXPECT_EQ(collector.pending_injects(), BarrierCollector::kMaxEarlyAttempts);
  collector.Begin(1, {100});  // Dropped: its inject is gone.
  collector.Emitted(1, 100, Pair(4));
  EXPECT_TRUE(reports.seen.empty());
  collector.Begin(attempts, {100});  // Kept.
  collector.Emitted(attempts, 100, Pair(4));
  EXPECT_EQ(reports.seen.size(), 1u);
}

TEST(BarrierCollectorTest, AnInjectNamingOtherActorsIsAnError) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(1, {100, 101});
  collector.Inject(1, Pair(5), {100}, reports.Add());
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_EQ(reports.seen[0].code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(reports.seen[0].message()),
              testing::HasSubstr("actors [100], but this worker runs actors "
                                 "[100, 101]"));
  // Also when the attempt begins after the inject.
  collector.Inject(2, Pair(5), {100, 102}, reports.Add());
  collector.Begin(2, {100});
  ASSERT_EQ(reports.seen.size(), 2u);
  EXPECT_EQ(reports.seen[1].code(), absl::StatusCode::kInvalidArgument);
}

TEST(BarrierCollectorTest, EmissionsOfActorsNotTheAttemptsDoNotCount) {
  BarrierCollector collector;
  Reports reports;
  collector.Begin(1, {100, 101});
  collector.Inject(1, Pair(5), {100, 101}, reports.Add());
  collector.Emitted(1, 100, Pair(5));
  collector.Emitted(1, 102, Pair(5));
  EXPECT_TRUE(reports.seen.empty());
  collector.Emitted(1, 101, Pair(5));
  EXPECT_EQ(reports.seen.size(), 1u);
}

// Model check: random interleavings of one attempt's injects and emissions
// (the coordinator makes each barrier once the one before was collected;
// each actor emits barriers in order; an emission may come before or after
// its inject) report every barrier exactly once.
TEST(BarrierCollectorTest, EveryInterleavingReportsEachBarrierOnce) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 random(seed);
    const uint32_t actors = 1 + random() % 4;
    const uint64_t barriers = 1 + random() % 6;
    std::set<uint32_t> ids;
    std::vector<uint32_t> list;
    for (uint32_t a = 0; a < actors; ++a) {
      ids.insert(100 + a);
      list.push_back(100 + a);
    }
    BarrierCollector collector;
    collector.Begin(1, ids);
    std::map<uint64_t, int> reported;
    // Next barrier per actor, and next inject.
    std::vector<uint64_t> next_emit(actors, 1);
    uint64_t next_inject = 1;
    int steps = 0;
    while (next_inject <= barriers ||
           std::any_of(next_emit.begin(), next_emit.end(),
                       [&](uint64_t e) { return e <= barriers; })) {
      // A lost report would leave no move: fail with the seed, not hang.
      ASSERT_LT(++steps, 100000) << "seed " << seed << ": stuck";
      const uint32_t pick = random() % (actors + 1);
      if (pick == actors) {
        // The coordinator injects a barrier once the one before was
        // collected.
        if (next_inject > barriers ||
            (next_inject > 1 && !reported.contains(10 + next_inject - 1))) {
          continue;
        }
        const uint64_t curr = 10 + next_inject++;
        collector.Inject(1, Pair(curr), list,
                         [&reported, curr](const absl::Status& status) {
                           EXPECT_TRUE(status.ok()) << status;
                           ++reported[curr];
                         });
      } else {
        // The coordinator decides a barrier once the one before was
        // collected (here: reported); it may reach an actor before its
        // inject reaches the worker.
        const uint64_t k = next_emit[pick];
        if (k > barriers || (k > 1 && !reported.contains(10 + k - 1))) {
          continue;
        }
        collector.Emitted(1, 100 + pick, Pair(10 + next_emit[pick]++));
      }
    }
    ASSERT_EQ(reported.size(), barriers) << "seed " << seed;
    for (const auto& [curr, times] : reported) {
      EXPECT_EQ(times, 1) << "seed " << seed << " barrier " << curr;
    }
    EXPECT_EQ(collector.pending_injects(), 0u) << "seed " << seed;
    EXPECT_EQ(collector.pending_emissions(), 0u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace backfill
