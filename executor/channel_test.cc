#include "executor/channel.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::backfill::testing::TestBarrier;

class FlagWaker final : public Waker {
 public:
  void Wake() override {
    woken_.store(true);
    count_.fetch_add(1);
  }
  bool TakeWoken() { return woken_.exchange(false); }
  int count() const { return count_.load(); }

 private:
  std::atomic<bool> woken_{false};
  std::atomic<int> count_{0};
};

Message NumberedBarrier(uint64_t curr) { return TestBarrier(curr); }

uint64_t EpochOf(const Message& message) {
  return std::get<Barrier>(message).epoch.curr.value();
}

TEST(ChannelTest, DeliversInOrderThenEndsWhenTheSenderCloses) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel({.capacity = 4});
  auto waker = std::make_shared<FlagWaker>();
  PollContext cx(waker, clock);
  for (uint64_t i = 1; i <= 3; ++i) {
    Message message = NumberedBarrier(i);
    EXPECT_EQ(tx.TrySend(message), SendResult::kSent);
  }
  EXPECT_EQ(rx.size(), 3u);
  tx.Close();
  for (uint64_t i = 1; i <= 3; ++i) {
    PollResult result = rx.PollReceive(cx);
    ASSERT_TRUE(result.is_ready());
    EXPECT_EQ(EpochOf(result.message()), i);
  }
  EXPECT_TRUE(rx.PollReceive(cx).is_end());
  EXPECT_TRUE(rx.PollReceive(cx).is_end());
}

TEST(ChannelTest, EmptyReceiverIsPendingAndWokenBySend) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel();
  auto waker = std::make_shared<FlagWaker>();
  PollContext cx(waker, clock);
  EXPECT_TRUE(rx.PollReceive(cx).is_pending());
  EXPECT_EQ(waker->count(), 0);
  Message message = NumberedBarrier(1);
  EXPECT_EQ(tx.TrySend(message), SendResult::kSent);
  EXPECT_EQ(waker->count(), 1);
  EXPECT_TRUE(rx.PollReceive(cx).is_ready());
}

TEST(ChannelTest, CloseWakesAWaitingReceiver) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel();
  auto waker = std::make_shared<FlagWaker>();
  PollContext cx(waker, clock);
  EXPECT_TRUE(rx.PollReceive(cx).is_pending());
  tx.Close();
  EXPECT_EQ(waker->count(), 1);
  EXPECT_TRUE(rx.PollReceive(cx).is_end());
}

TEST(ChannelTest, DestroyingTheSenderEndsTheStream) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel();
  { ChannelSender dropped = std::move(tx); }
  PollContext cx(std::make_shared<FlagWaker>(), clock);
  EXPECT_TRUE(rx.PollReceive(cx).is_end());
}

TEST(ChannelTest, FailDeliversTheErrorAfterTheBufferedMessages) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel();
  Message message = NumberedBarrier(1);
  ASSERT_EQ(tx.TrySend(message), SendResult::kSent);
  tx.Fail(absl::UnavailableError("upstream actor died"));
  tx.Close();  // Ignored: already failed.
  PollContext cx(std::make_shared<FlagWaker>(), clock);
  EXPECT_TRUE(rx.PollReceive(cx).is_ready());
  PollResult result = rx.PollReceive(cx);
  ASSERT_TRUE(result.is_error());
  EXPECT_THAT(result.status(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST(ChannelTest, BackPressureWhenFull) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel({.capacity = 2});
  auto sender_waker = std::make_shared<FlagWaker>();
  PollContext sender_cx(sender_waker, clock);
  Message first = NumberedBarrier(1), second = NumberedBarrier(2),
          third = NumberedBarrier(3);
  EXPECT_EQ(tx.PollSend(first, sender_cx), SendResult::kSent);
  EXPECT_EQ(tx.PollSend(second, sender_cx), SendResult::kSent);
  EXPECT_EQ(tx.TrySend(third), SendResult::kFull);
  EXPECT_EQ(tx.PollSend(third, sender_cx), SendResult::kFull);
  // Not taken: still a barrier at epoch 3.
  EXPECT_EQ(EpochOf(third), 3u);
  EXPECT_EQ(sender_waker->count(), 0);

  PollContext receiver_cx(std::make_shared<FlagWaker>(), clock);
  ASSERT_TRUE(rx.PollReceive(receiver_cx).is_ready());
  EXPECT_EQ(sender_waker->count(), 1);  // A slot freed up.
  EXPECT_EQ(tx.PollSend(third, sender_cx), SendResult::kSent);
  EXPECT_EQ(rx.size(), 2u);
}

Message ChunkOfRows(int rows) {
  std::string text = " I";
  for (int i = 0; i < rows; ++i) absl::StrAppend(&text, "\n + ", i);
  return testing::StreamChunkFromPretty(text);
}

TEST(ChannelTest, RowsBoundChunksByTheirRowsAndCapacityTheRest) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel({.capacity = 2, .rows = 4});
  PollContext cx(std::make_shared<FlagWaker>(), clock);
  // Four 1-row chunks: more chunks than `capacity`, within `rows`.
  for (int i = 0; i < 4; ++i) {
    Message chunk = ChunkOfRows(1);
    ASSERT_EQ(tx.TrySend(chunk), SendResult::kSent) << i;
  }
  Message fifth = ChunkOfRows(1);
  EXPECT_EQ(tx.TrySend(fifth), SendResult::kFull);
  // Barriers count against `capacity` alone.
  Message first = NumberedBarrier(1), second = NumberedBarrier(2),
          third = NumberedBarrier(3);
  EXPECT_EQ(tx.TrySend(first), SendResult::kSent);
  EXPECT_EQ(tx.TrySend(second), SendResult::kSent);
  EXPECT_EQ(tx.TrySend(third), SendResult::kFull);
  EXPECT_FALSE(tx.PollReady(cx));
  // Receiving one chunk frees a row: a chunk fits, a barrier still not.
  ASSERT_TRUE(rx.PollReceive(cx).is_ready());
  EXPECT_EQ(tx.TrySend(third), SendResult::kFull);
  EXPECT_FALSE(tx.PollReady(cx));
  EXPECT_EQ(tx.TrySend(fifth), SendResult::kSent);
  // A chunk larger than the bound is taken once the rows fell below it.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(rx.PollReceive(cx).is_ready());
  Message big = ChunkOfRows(10);
  EXPECT_EQ(tx.TrySend(big), SendResult::kSent);
  Message after_big = ChunkOfRows(1);
  EXPECT_EQ(tx.TrySend(after_big), SendResult::kFull);
  // Order is kept across kinds: barrier 2, the 1-row chunk, the 10 rows.
  PollResult next = rx.PollReceive(cx);
  ASSERT_TRUE(next.is_ready());
  EXPECT_EQ(EpochOf(next.message()), 2u);
  // A barrier slot is free, but PollReady promises room for either kind.
  EXPECT_FALSE(tx.PollReady(cx));
  EXPECT_EQ(tx.TrySend(third), SendResult::kSent);
  next = rx.PollReceive(cx);
  ASSERT_TRUE(next.is_ready());
  EXPECT_EQ(std::get<StreamChunk>(next.message()).cardinality(), 1u);
  EXPECT_EQ(tx.TrySend(after_big), SendResult::kFull);  // 10 rows left.
  next = rx.PollReceive(cx);
  ASSERT_TRUE(next.is_ready());
  EXPECT_EQ(std::get<StreamChunk>(next.message()).cardinality(), 10u);
  EXPECT_EQ(tx.TrySend(after_big), SendResult::kSent);
  EXPECT_EQ(rx.size(), 2u);  // Barrier 3 and the last chunk.
}

TEST(ChannelTest, WithoutRowsCapacityBoundsChunksToo) {
  auto [tx, rx] = MakeChannel({.capacity = 2});
  Message a = ChunkOfRows(1), b = ChunkOfRows(1), c = ChunkOfRows(1);
  EXPECT_EQ(tx.TrySend(a), SendResult::kSent);
  EXPECT_EQ(tx.TrySend(b), SendResult::kSent);
  EXPECT_EQ(tx.TrySend(c), SendResult::kFull);
}

TEST(ChannelTest, ClosedReceiverRejectsSendsAndWakesTheSender) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel({.capacity = 1});
  auto sender_waker = std::make_shared<FlagWaker>();
  PollContext cx(sender_waker, clock);
  Message first = NumberedBarrier(1), second = NumberedBarrier(2);
  ASSERT_EQ(tx.PollSend(first, cx), SendResult::kSent);
  ASSERT_EQ(tx.PollSend(second, cx), SendResult::kFull);
  rx.Close();
  EXPECT_EQ(sender_waker->count(), 1);
  EXPECT_EQ(rx.size(), 0u);
  EXPECT_EQ(tx.PollSend(second, cx), SendResult::kClosed);
  EXPECT_THAT(tx.Send(NumberedBarrier(3), clock),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_TRUE(rx.PollReceive(cx).is_end());
}

TEST(ChannelTest, ReceiverExecutorAdaptsTheChannel) {
  SimulatedClock clock;
  auto [tx, rx] = MakeChannel();
  ReceiverExecutor executor(
      ExecutorInfo{.schema = {DataType::kInt64}, .identity = "exchange"},
      std::move(rx));
  EXPECT_EQ(executor.info().identity, "exchange");
  ASSERT_THAT(tx.Send(NumberedBarrier(1), clock), IsOk());
  tx.Close();
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> message,
                                NextMessage(executor, clock));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(EpochOf(*message), 1u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Message> end,
                                NextMessage(executor, clock));
  EXPECT_FALSE(end.has_value());
}

// Threaded runtime: a blocking producer and a consumer thread, capacity 2,
// so the producer is throttled by back-pressure many times.
TEST(ChannelTest, ThreadsWithBlockingSendAndReceive) {
  constexpr uint64_t kNumMessages = 2000;
  auto [tx, rx] = MakeChannel({.capacity = 2});
  std::thread producer([tx = std::move(tx)]() mutable {
    for (uint64_t i = 1; i <= kNumMessages; ++i) {
      ASSERT_THAT(tx.Send(NumberedBarrier(i), Clock::Real()), IsOk());
    }
    tx.Close();
  });
  ReceiverExecutor executor(ExecutorInfo{}, std::move(rx));
  uint64_t expected = 1;
  while (true) {
    absl::StatusOr<std::optional<Message>> message =
        NextMessage(executor, Clock::Real());
    ASSERT_TRUE(message.ok()) << message.status();
    if (!message->has_value()) break;
    ASSERT_EQ(EpochOf(**message), expected);
    ++expected;
  }
  producer.join();
  EXPECT_EQ(expected, kNumMessages + 1);
}

// Deterministic scheduler: one thread steps a producer task (PollSend) and a
// consumer task (PollReceive) in a seeded random order; a task runs only
// when its waker fired. Nothing ever blocks, and every message arrives in
// order whatever the interleaving.
TEST(ChannelTest, DeterministicSchedulerNeverBlocks) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 random(seed);
    constexpr uint64_t kNumMessages = 100;
    SimulatedClock clock;
    auto [tx, rx] = MakeChannel({.capacity = 1 + seed % 3});
    ReceiverExecutor consumer(ExecutorInfo{}, std::move(rx));
    auto producer_waker = std::make_shared<FlagWaker>();
    auto consumer_waker = std::make_shared<FlagWaker>();
    producer_waker->Wake();
    consumer_waker->Wake();
    uint64_t next_to_send = 1, next_expected = 1;
    std::optional<Message> in_hand;
    bool producer_done = false, consumer_done = false;
    int steps = 0;
    while (!consumer_done) {
      ASSERT_LT(++steps, 100000) << "no progress";
      std::vector<int> runnable;
      if (!producer_done && producer_waker->TakeWoken()) runnable.push_back(0);
      if (consumer_waker->TakeWoken()) runnable.push_back(1);
      ASSERT_FALSE(runnable.empty()) << "deadlock: no task is runnable";
      std::shuffle(runnable.begin(), runnable.end(), random);
      // Run one task; the other keeps its wake for the next round.
      if (runnable.size() == 2) {
        (runnable[1] == 0 ? producer_waker : consumer_waker)->Wake();
      }
      if (runnable[0] == 0) {
        PollContext cx(producer_waker, clock);
        if (!in_hand.has_value()) in_hand = NumberedBarrier(next_to_send);
        const SendResult result = tx.PollSend(*in_hand, cx);
        ASSERT_NE(result, SendResult::kClosed);
        if (result == SendResult::kSent) {
          in_hand.reset();
          if (++next_to_send > kNumMessages) {
            tx.Close();
            producer_done = true;
          } else {
            producer_waker->Wake();  // Still has work: stay runnable.
          }
        }
      } else {
        PollContext cx(consumer_waker, clock);
        PollResult result = consumer.PollNext(cx);
        ASSERT_FALSE(result.is_error());
        if (result.is_end()) {
          consumer_done = true;
        } else if (result.is_ready()) {
          ASSERT_EQ(EpochOf(result.message()), next_expected);
          ++next_expected;
          consumer_waker->Wake();
        }
      }
    }
    EXPECT_EQ(next_expected, kNumMessages + 1);
  }
}

}  // namespace
}  // namespace backfill
