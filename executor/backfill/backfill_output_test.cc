#include "executor/backfill/backfill_output.h"

#include <variant>

#include "absl/time/time.h"
#include "executor/testing/message_literal.h"
#include "gtest/gtest.h"
#include "metrics/backfill_metrics.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::TestBarrier;

TEST(BackfillOutputTest, EmitsInOrderAndMeasuresBarriersFromTheirArrival) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(BackfillMetrics metrics,
                                BackfillMetrics::Create(registry, 1, 7));
  const Histogram latency = metrics.barrier_latency_seconds;
  BackfillOutput output(latency);
  const absl::Time t0 = absl::FromUnixSeconds(100);
  // The first barrier is queued without an arrival: not measured.
  output.Push(TestBarrier(2, BarrierKind::kInitial));
  EXPECT_TRUE(std::holds_alternative<Barrier>(output.Pop(t0)));
  EXPECT_EQ(latency.count(), 0u);
  // A chunk, then a barrier that arrived at t0 and leaves 2 s later.
  output.BarrierArrived(t0);
  output.Push(StreamChunk::FromRows({DataType::kInt64}, {Op::kInsert},
                                    {Row{int64_t{1}}}));
  output.Push(TestBarrier(3));
  EXPECT_TRUE(std::holds_alternative<StreamChunk>(output.Pop(t0)));
  EXPECT_EQ(latency.count(), 0u);
  EXPECT_TRUE(
      std::holds_alternative<Barrier>(output.Pop(t0 + absl::Seconds(2))));
  EXPECT_EQ(latency.count(), 1u);
  EXPECT_DOUBLE_EQ(latency.sum(), 2.0);
  EXPECT_TRUE(output.empty());
  output.Push(TestBarrier(4));
  output.Clear();
  EXPECT_TRUE(output.empty());
}

}  // namespace
}  // namespace backfill
