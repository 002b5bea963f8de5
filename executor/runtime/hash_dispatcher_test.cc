#include "executor/runtime/hash_dispatcher.h"

#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;

TEST(HashDispatcherTest, RoutesByVnodeSplitsCrossActorUpdatesBroadcastsBarriers) {
  std::vector<ChannelSender> senders;
  std::vector<ChannelReceiver> receivers;
  for (int i = 0; i < 2; ++i) {
    auto [tx, rx] = MakeChannel({64});
    senders.push_back(std::move(tx));
    receivers.push_back(std::move(rx));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher, VnodeHasher::Create({0}, 8));
  // vnodes 0-3 -> actor 0, 4-7 -> actor 1; S2 = (column 1, column 0).
  std::vector<int> owner = {0, 0, 0, 0, 1, 1, 1, 1};
  HashDispatcher dispatcher(std::move(senders), hasher, owner, {1, 0},
                            Clock::Real());
  // Find two keys owned by different actors.
  int64_t a = 0, b = 1;
  while (owner[hasher.VnodeOf(Row{a, Datum()})] != 0) ++a;
  while (owner[hasher.VnodeOf(Row{b, Datum()})] != 1) ++b;
  const std::string text = absl::StrCat(" I T\n + ", a, " x\n U- ", a, " x\n U+ ", b, " y");
  BACKFILL_ASSERT_OK(dispatcher.Dispatch(StreamChunkFromPretty(text)));
  BACKFILL_ASSERT_OK(dispatcher.Dispatch(TestBarrier(2)));
  dispatcher.Close();
  PollContext cx(std::make_shared<BlockingWaker>(), Clock::Real());
  // Actor 0: + a, - a (the U- became a Delete), then the barrier.
  PollResult r0 = receivers[0].PollReceive(cx);
  ASSERT_TRUE(r0.is_ready());
  const StreamChunk& c0 = std::get<StreamChunk>(r0.message());
  ASSERT_EQ(c0.capacity(), 2u);
  EXPECT_EQ(c0.op(0), Op::kInsert);
  EXPECT_EQ(c0.op(1), Op::kDelete);
  EXPECT_EQ(c0.num_columns(), 2);
  EXPECT_TRUE(DatumsEqual(c0.RowAt(0)[1], Datum(a)));  // S2 reorders columns
  EXPECT_TRUE(std::holds_alternative<Barrier>(receivers[0].PollReceive(cx).message()));
  // Actor 1: + b (the U+ became an Insert), then the barrier.
  PollResult r1 = receivers[1].PollReceive(cx);
  ASSERT_TRUE(r1.is_ready());
  const StreamChunk& c1 = std::get<StreamChunk>(r1.message());
  ASSERT_EQ(c1.capacity(), 1u);
  EXPECT_EQ(c1.op(0), Op::kInsert);
  EXPECT_TRUE(std::holds_alternative<Barrier>(receivers[1].PollReceive(cx).message()));
  EXPECT_TRUE(receivers[1].PollReceive(cx).is_end());
}

// A rescale: 2 outputs (actors 100, 101) become 3 (102, 103, 104) at a
// barrier whose Update names the dispatcher's actor (1): the barrier reaches
// the old and the new outputs, the old ones are closed after it, and the
// changes after it go by the new vnode owners.
TEST(HashDispatcherTest, RescaleSwitchesOutputsAndMappingAtTheBarrier) {
  std::vector<ChannelSender> senders;
  std::vector<ChannelReceiver> old_receivers;
  for (int i = 0; i < 2; ++i) {
    auto [tx, rx] = MakeChannel({64});
    senders.push_back(std::move(tx));
    old_receivers.push_back(std::move(rx));
  }
  Exchange exchange;
  std::vector<ChannelReceiver> new_receivers;
  for (ActorId actor : {102, 103, 104}) {
    auto [tx, rx] = MakeChannel({64});
    exchange.PutSender(1, actor, std::move(tx));
    new_receivers.push_back(std::move(rx));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher, VnodeHasher::Create({0}, 6));
  HashDispatcher dispatcher(std::move(senders), hasher, {0, 0, 0, 1, 1, 1},
                            {0, 1}, Clock::Real(),
                            ExchangeEndpoint{1, {100, 101}, &exchange});
  UpdateMutation update;
  update.dropped_actors = {100, 101};
  update.dispatchers[1] = DispatcherUpdate{
      .added_downstream_actors = {102, 103, 104},
      .removed_downstream_actors = {100, 101},
      .vnode_owners = {102, 102, 103, 103, 104, 104}};
  BACKFILL_ASSERT_OK(dispatcher.Dispatch(TestBarrier(
      2, BarrierKind::kCheckpoint, std::make_shared<const Mutation>(update))));
  // One insert per vnode after the rescale.
  std::string text = " I T";
  std::vector<int> expected(3, 0);
  for (int64_t key = 0, seen = 0; seen < 6; ++key) {
    const VirtualNode vnode = hasher.VnodeOf(Row{key, Datum()});
    if (vnode != seen) continue;
    absl::StrAppend(&text, "\n + ", key, " x");
    ++expected[vnode / 2];
    ++seen;
  }
  BACKFILL_ASSERT_OK(dispatcher.Dispatch(StreamChunkFromPretty(text)));
  dispatcher.Close();
  PollContext cx(std::make_shared<BlockingWaker>(), Clock::Real());
  for (ChannelReceiver& rx : old_receivers) {
    EXPECT_TRUE(std::holds_alternative<Barrier>(rx.PollReceive(cx).message()));
    EXPECT_TRUE(rx.PollReceive(cx).is_end());  // closed after the barrier
  }
  for (size_t i = 0; i < new_receivers.size(); ++i) {
    PollResult first = new_receivers[i].PollReceive(cx);
    ASSERT_TRUE(first.is_ready());
    EXPECT_TRUE(std::holds_alternative<Barrier>(first.message()));
    PollResult chunk = new_receivers[i].PollReceive(cx);
    ASSERT_TRUE(chunk.is_ready());
    EXPECT_EQ(std::get<StreamChunk>(chunk.message()).capacity(),
              static_cast<size_t>(expected[i]));
  }
  EXPECT_EQ(dispatcher.max_rescale_blocked(), absl::ZeroDuration());
}

// The upstream's blocked time around a rescale: from the rescale barrier
// until the barrier after it reached every new output; here a full new
// output holds the upstream for 3 s of simulated time.
TEST(HashDispatcherTest, MeasuresTheUpstreamsBlockedTimeAroundARescale) {
  auto [old_tx, old_rx] = MakeChannel({64});
  std::vector<ChannelSender> senders;
  senders.push_back(std::move(old_tx));
  Exchange exchange;
  auto [new_tx, new_rx] = MakeChannel({1});
  exchange.PutSender(1, 101, std::move(new_tx));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher, VnodeHasher::Create({0}, 2));
  SimulatedClock clock;
  HashDispatcher dispatcher(std::move(senders), hasher, {0, 0}, {0, 1}, clock,
                            ExchangeEndpoint{1, {100}, &exchange});
  UpdateMutation update;
  update.dropped_actors = {100};
  update.dispatchers[1] = DispatcherUpdate{.added_downstream_actors = {101},
                                           .removed_downstream_actors = {100},
                                           .vnode_owners = {101, 101}};
  class NoopWaker final : public Waker {
   public:
    void Wake() override {}
  };
  PollContext cx(std::make_shared<NoopWaker>(), clock);
  BACKFILL_ASSERT_OK(dispatcher.Push(TestBarrier(
      2, BarrierKind::kCheckpoint, std::make_shared<const Mutation>(update))));
  EXPECT_THAT(dispatcher.PollFlush(cx), ::backfill::testing::IsOkAndHolds(true));
  // The new actor has not taken its first barrier: its channel is full.
  BACKFILL_ASSERT_OK(dispatcher.Push(StreamChunkFromPretty(" I T\n + 1 x")));
  EXPECT_THAT(dispatcher.PollFlush(cx), ::backfill::testing::IsOkAndHolds(false));
  clock.AdvanceTime(absl::Seconds(3));
  ASSERT_TRUE(new_rx.PollReceive(cx).is_ready());  // the barrier
  EXPECT_THAT(dispatcher.PollFlush(cx), ::backfill::testing::IsOkAndHolds(true));
  // Not counted yet: the window closes with the next barrier's delivery.
  EXPECT_EQ(dispatcher.max_rescale_blocked(), absl::ZeroDuration());
  ASSERT_TRUE(new_rx.PollReceive(cx).is_ready());  // the chunk
  BACKFILL_ASSERT_OK(dispatcher.Push(TestBarrier(3)));
  EXPECT_THAT(dispatcher.PollFlush(cx), ::backfill::testing::IsOkAndHolds(true));
  EXPECT_EQ(dispatcher.max_rescale_blocked(), absl::Seconds(3));
  // The old output got the rescale barrier, then its end.
  EXPECT_TRUE(std::holds_alternative<Barrier>(old_rx.PollReceive(cx).message()));
  EXPECT_TRUE(old_rx.PollReceive(cx).is_end());
}

TEST(HashDispatcherTest, AnUpdateItCannotFollowIsInvalidArgument) {
  auto [tx, rx] = MakeChannel({64});
  std::vector<ChannelSender> senders;
  senders.push_back(std::move(tx));
  Exchange exchange;
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher, VnodeHasher::Create({0}, 2));
  HashDispatcher dispatcher(std::move(senders), hasher, {0, 0}, {0, 1},
                            Clock::Real(), ExchangeEndpoint{1, {100}, &exchange});
  UpdateMutation update;
  update.dispatchers[1] = DispatcherUpdate{.vnode_owners = {100, 7}};
  EXPECT_THAT(dispatcher.Push(TestBarrier(
                  2, BarrierKind::kCheckpoint,
                  std::make_shared<const Mutation>(update))),
              ::backfill::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            ::testing::HasSubstr("actor 7")));
}

}  // namespace
}  // namespace backfill
