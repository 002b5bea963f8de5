#include "executor/runtime/hash_dispatcher.h"

#include "executor/testing/message_literal.h"
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

}  // namespace
}  // namespace backfill
