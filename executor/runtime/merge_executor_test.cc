#include "executor/runtime/merge_executor.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::MessageIsBarrierAt;
using ::backfill::testing::MessageIsChunk;
using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;

// Every message of `merge` until its end; its first error instead.
absl::StatusOr<std::vector<Message>> DrainAll(MergeExecutor& merge,
                                              Clock& clock) {
  std::vector<Message> out;
  while (true) {
    BACKFILL_ASSIGN_OR_RETURN(std::optional<Message> next,
                              NextMessage(merge, clock));
    if (!next.has_value()) return out;
    out.push_back(std::move(*next));
  }
}

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
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<Message> out,
                                DrainAll(merge, clock));
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

// A rescale: input 10 (actor 10) is replaced by actors 11 and 12 at
// barrier 2, whose Update names the merge's actor (7). The barrier is
// aligned across the old input and the new ones (their first message), then
// the old input leaves and the new ones' chunks flow.
TEST(MergeExecutorTest, RescaleSwapsInputsAtTheUpdateBarrier) {
  UpdateMutation update;
  update.dropped_actors = {10};
  update.merges[7] = MergeUpdate{.added_upstream_actors = {11, 12},
                                 .removed_upstream_actors = {10}};
  const Barrier rescale = TestBarrier(
      2, BarrierKind::kCheckpoint, std::make_shared<const Mutation>(update));
  auto old_input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  old_input->Push(TestBarrier(1));
  old_input->Push(StreamChunkFromPretty(" I\n + 1"));
  old_input->Push(rescale);
  old_input->Push(StreamChunkFromPretty(" I\n + 99"));  // never read
  Exchange exchange;
  std::vector<ChannelSender> new_senders;
  for (ActorId actor : {11, 12}) {
    auto [tx, rx] = MakeChannel({8});
    exchange.PutReceiver(actor, 7, std::move(rx));
    new_senders.push_back(std::move(tx));
  }
  SimulatedClock clock;
  for (ChannelSender& tx : new_senders) {
    BACKFILL_ASSERT_OK(tx.Send(rescale, clock));
  }
  BACKFILL_ASSERT_OK(new_senders[0].Send(StreamChunkFromPretty(" I\n + 2"), clock));
  BACKFILL_ASSERT_OK(new_senders[1].Send(StreamChunkFromPretty(" I\n + 3"), clock));
  BACKFILL_ASSERT_OK(new_senders[0].Send(TestBarrier(3), clock));
  BACKFILL_ASSERT_OK(new_senders[1].Send(TestBarrier(3), clock));
  for (ChannelSender& tx : new_senders) tx.Close();
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(old_input));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{{}, {}, "merge"},
                      ExchangeEndpoint{7, {10}, &exchange});
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<Message> out,
                                DrainAll(merge, clock));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_THAT(out[0], MessageIsBarrierAt(1));
  EXPECT_THAT(out[1], MessageIsChunk(::backfill::testing::ChunkEq(
                          StreamChunkFromPretty(" I\n + 1"))));
  EXPECT_THAT(out[2], MessageIsBarrierAt(2));
  EXPECT_NE(std::get<Barrier>(out[2]).MutationAs<UpdateMutation>(), nullptr);
  EXPECT_THAT(out[5], MessageIsBarrierAt(3));
  // Both new inputs' chunks, in either order; the old input's 99 never.
  std::vector<int64_t> keys;
  for (int i : {3, 4}) {
    keys.push_back(std::get<int64_t>(std::get<StreamChunk>(out[i]).RowAt(0)[0]));
  }
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre(2, 3));
}

TEST(MergeExecutorTest, ARescaledInputMustStartWithTheBarrier) {
  UpdateMutation update;
  update.merges[7] = MergeUpdate{.added_upstream_actors = {11},
                                 .removed_upstream_actors = {10}};
  const Barrier rescale = TestBarrier(
      2, BarrierKind::kCheckpoint, std::make_shared<const Mutation>(update));
  auto old_input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  old_input->Push(rescale);
  Exchange exchange;
  auto [tx, rx] = MakeChannel({8});
  exchange.PutReceiver(11, 7, std::move(rx));
  SimulatedClock clock;
  BACKFILL_ASSERT_OK(tx.Send(StreamChunkFromPretty(" I\n + 2"), clock));
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(old_input));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{{}, {}, "merge"},
                      ExchangeEndpoint{7, {10}, &exchange});
  EXPECT_THAT(NextMessage(merge, clock),
              ::backfill::testing::StatusIs(
                  absl::StatusCode::kInternal,
                  ::testing::HasSubstr("before its first barrier")));
}

TEST(MergeExecutorTest, AnUpdateWithoutAnExchangeIsAnError) {
  UpdateMutation update;
  update.merges[7] = MergeUpdate{.added_upstream_actors = {11}};
  auto input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  input->Push(TestBarrier(2, BarrierKind::kCheckpoint,
                          std::make_shared<const Mutation>(update)));
  std::vector<BoxedExecutor> inputs;
  inputs.push_back(std::move(input));
  MergeExecutor merge(std::move(inputs), ExecutorInfo{{}, {}, "merge"},
                      ExchangeEndpoint{7, {10}, nullptr});
  SimulatedClock clock;
  EXPECT_THAT(NextMessage(merge, clock),
              ::backfill::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            ::testing::HasSubstr("no exchange")));
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
