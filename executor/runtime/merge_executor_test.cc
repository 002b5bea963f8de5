#include "executor/runtime/merge_executor.h"

#include <memory>

#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::MessageIsBarrierAt;
using ::backfill::testing::MessageIsChunk;
using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;

TEST(MergeExecutorTest, AlignsBarriersAndPassesChunks) {
  auto a = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  auto b = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  a->Push(TestBarrier(1));
  a->Push(StreamChunkFromPretty(" I\n + 1"));
  a->Push(TestBarrier(2));
  a->Push(StreamChunkFromPretty(" I\n + 3"));  // after barrier 2: held back
  b->Push(TestBarrier(1));
  b->PushPending();
  b->Push(StreamChunkFromPretty(" I\n + 2"));
  b->Push(TestBarrier(2));
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(a));
  inputs.push_back(std::move(b));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{});
  SimulatedClock clock;
  std::vector<Message> out;
  while (true) {
    auto next = NextMessage(merge, clock);
    ASSERT_TRUE(next.ok()) << next.status();
    if (!next->has_value()) break;
    out.push_back(std::move(**next));
  }
  ASSERT_EQ(out.size(), 5u);
  EXPECT_THAT(out[0], MessageIsBarrierAt(1));
  // Both chunks of epoch 2 come before barrier 2; chunk 3 after it.
  int barrier2 = -1, chunk3 = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (const auto* barrier = std::get_if<Barrier>(&out[i])) {
      if (barrier->epoch.curr.value() == 2) barrier2 = static_cast<int>(i);
    } else if (const auto* chunk = std::get_if<StreamChunk>(&out[i])) {
      if (std::get<int64_t>(chunk->RowAt(0)[0]) == 3) chunk3 = static_cast<int>(i);
    }
  }
  EXPECT_EQ(barrier2, 3);
  EXPECT_EQ(chunk3, 4);
}

TEST(MergeExecutorTest, MisalignedBarriersAreAnError) {
  auto a = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  auto b = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  a->Push(TestBarrier(1));
  b->Push(TestBarrier(2));
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(a));
  inputs.push_back(std::move(b));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{{}, {}, "merge"});
  SimulatedClock clock;
  EXPECT_THAT(NextMessage(merge, clock),
              ::backfill::testing::StatusIs(absl::StatusCode::kInternal,
                                            ::testing::HasSubstr("misaligned")));
}

TEST(MergeExecutorTest, ErrorsPropagate) {
  auto a = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  a->PushError(absl::UnavailableError("gone"));
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(a));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{});
  SimulatedClock clock;
  EXPECT_THAT(NextMessage(merge, clock),
              ::backfill::testing::StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace backfill
