#include "executor/cluster/remote_exchange.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/cluster/blackhole_proxy.h"
#include "executor/cluster/grpc_keepalive.h"
#include "executor/testing/chunk_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ChunkEq;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr ActorId kUp = 1;
constexpr ActorId kDown = 101;

MessageCodec Codec() {
  absl::StatusOr<MessageCodec> codec = MessageCodec::Create(
      {{"k", DataType::kInt64, 1}, {"v", DataType::kVarchar, 2}});
  EXPECT_TRUE(codec.ok()) << codec.status();
  return *std::move(codec);
}

StreamChunk ChunkOf(int64_t key) {
  return StreamChunk::FromRows(
      {DataType::kInt64, DataType::kVarchar}, {Op::kInsert, Op::kDelete},
      {Row{key, absl::StrCat("v", key)}, Row{key + 1, Datum()}});
}

// The next result of `rx`, waiting up to `timeout`; Pending if none came.
PollResult NextWithin(ChannelReceiver& rx, absl::Duration timeout) {
  auto waker = std::make_shared<BlockingWaker>();
  Clock& clock = Clock::Real();
  PollContext cx(waker, clock);
  const absl::Time deadline = clock.Now() + timeout;
  while (true) {
    waker->Reset();
    PollResult result = rx.PollReceive(cx);
    if (!result.is_pending() || clock.Now() >= deadline) return result;
    waker->WaitUntil(clock, deadline);
  }
}

struct Edge {
  std::unique_ptr<ExchangeServer> server;
  std::optional<ChannelSender> upstream;      // the upstream actor's end
  std::optional<ChannelReceiver> downstream;  // the downstream actor's end
  std::unique_ptr<RemoteInput> input;
};

Edge Connect(size_t up_capacity = 16, size_t down_capacity = 16,
             uint32_t permits = 16) {
  Edge edge;
  absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
      ExchangeServer::Start();
  EXPECT_TRUE(server.ok()) << server.status();
  edge.server = *std::move(server);
  auto [up_tx, up_rx] = MakeChannel({.capacity = up_capacity});
  BACKFILL_EXPECT_OK(
      edge.server->AddOutput(kUp, kDown, std::move(up_rx), Codec()));
  auto [down_tx, down_rx] = MakeChannel({.capacity = down_capacity});
  edge.input = RemoteInput::Start({.address = edge.server->address(),
                                   .upstream = kUp,
                                   .downstream = kDown,
                                   .permits = permits},
                                  Codec(), std::move(down_tx));
  edge.upstream.emplace(std::move(up_tx));
  edge.downstream.emplace(std::move(down_rx));
  return edge;
}

// Chunks, barriers (with a mutation) and a watermark arrive in order, and
// the upstream's end of stream is the downstream's.
TEST(RemoteExchangeTest, MessagesArriveInOrderAndTheEndIsForwarded) {
  Edge edge = Connect();
  std::thread producer([&] {
    for (int64_t i = 0; i < 600; ++i) {
      Message message =
          i % 10 == 9 ? Message(Barrier{
                            .epoch = EpochPair{Epoch(i + 1), Epoch(i)},
                            .kind = BarrierKind::kCheckpoint,
                            .mutation = std::make_shared<const Mutation>(
                                ThrottleMutation{.rate_limits = {{10, i}}})})
                      : Message(ChunkOf(i));
      BACKFILL_ASSERT_OK(
          edge.upstream->Send(std::move(message), Clock::Real()));
    }
    BACKFILL_ASSERT_OK(edge.upstream->Send(
        Watermark{
            .column_index = 0, .type = DataType::kInt64, .value = int64_t{7}},
        Clock::Real()));
    edge.upstream->Close();
  });
  for (int64_t i = 0; i < 600; ++i) {
    PollResult next = NextWithin(*edge.downstream, absl::Seconds(30));
    ASSERT_TRUE(next.is_ready()) << i << ": " << next.DebugString();
    if (i % 10 == 9) {
      const auto* barrier = std::get_if<Barrier>(&next.message());
      ASSERT_NE(barrier, nullptr) << i;
      EXPECT_EQ(barrier->epoch.curr, Epoch(i + 1));
      const auto* throttle = barrier->MutationAs<ThrottleMutation>();
      ASSERT_NE(throttle, nullptr);
      EXPECT_EQ(throttle->rate_limits.at(10), std::optional<uint32_t>(i));
    } else {
      ASSERT_TRUE(std::holds_alternative<StreamChunk>(next.message())) << i;
      EXPECT_THAT(std::get<StreamChunk>(next.message()), ChunkEq(ChunkOf(i)));
    }
  }
  PollResult watermark = NextWithin(*edge.downstream, absl::Seconds(30));
  ASSERT_TRUE(watermark.is_ready());
  EXPECT_TRUE(std::holds_alternative<Watermark>(watermark.message()));
  EXPECT_TRUE(NextWithin(*edge.downstream, absl::Seconds(30)).is_end());
  producer.join();
  BACKFILL_EXPECT_OK(edge.input->status());
}

// A downstream actor that stops reading stops the upstream actor: the
// upstream channel fills after a bounded number of messages (the two
// channels, the permits, one message held at each end); once the
// downstream reads again every message arrives, in order.
TEST(RemoteExchangeTest, BackPressureReachesTheUpstreamActor) {
  constexpr size_t kUpCapacity = 2;
  constexpr size_t kDownCapacity = 2;
  constexpr uint32_t kPermits = 4;
  Edge edge = Connect(kUpCapacity, kDownCapacity, kPermits);
  std::atomic<int64_t> sent{0};
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    while (!stop.load()) {
      Message message = ChunkOf(sent.load());
      if (edge.upstream->TrySend(message) == SendResult::kSent) {
        sent.fetch_add(1);
      } else {
        absl::SleepFor(absl::Milliseconds(5));
      }
    }
  });
  // Let it run into the back-pressure.
  absl::SleepFor(absl::Seconds(1));
  const int64_t stalled = sent.load();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(sent.load(), stalled) << "the upstream kept sending";
  EXPECT_LE(stalled,
            static_cast<int64_t>(kUpCapacity + kPermits + kDownCapacity + 2));
  EXPECT_GE(stalled, static_cast<int64_t>(kUpCapacity + kDownCapacity));
  // The server sees a receiver that stopped reading: no permit for 500 ms.
  EXPECT_THAT(edge.server->EdgesOutOfPermits(absl::Milliseconds(400)),
              ElementsAre(std::make_pair(kUp, kDown)));
  EXPECT_THAT(edge.server->EdgesOutOfPermits(absl::Seconds(30)), IsEmpty());
  // Now read 200 messages: the upstream moves again, in order.
  for (int64_t i = 0; i < 200; ++i) {
    PollResult next = NextWithin(*edge.downstream, absl::Seconds(30));
    ASSERT_TRUE(next.is_ready()) << i;
    EXPECT_THAT(std::get<StreamChunk>(next.message()), ChunkEq(ChunkOf(i)));
  }
  stop.store(true);
  producer.join();
  EXPECT_GE(sent.load(), 200);
  // Read what is left: the receiver grants permits again.
  while (NextWithin(*edge.downstream, absl::Milliseconds(300)).is_ready()) {
  }
  EXPECT_THAT(edge.server->EdgesOutOfPermits(absl::ZeroDuration()), IsEmpty());
}

// The server records the last barrier each edge carried, and when; the
// receiving end how long a message has waited for room in its channel.
TEST(RemoteExchangeTest, EdgesRecordTheirLastBarrierAndInputsTheirWait) {
  Edge edge = Connect(/*up_capacity=*/16, /*down_capacity=*/1,
                      /*permits=*/4);
  std::vector<ExchangeServer::EdgeBarrier> none = edge.server->EdgeBarriers();
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].epoch, Epoch());
  EXPECT_EQ(none[0].sent_at, absl::InfinitePast());
  EXPECT_EQ(edge.input->blocked_since(), absl::InfiniteFuture());
  const absl::Time before = absl::Now();
  for (uint64_t e : {7, 9}) {
    BACKFILL_ASSERT_OK(edge.upstream->Send(
        Barrier{.epoch = EpochPair{Epoch(e), Epoch(e - 1)}}, Clock::Real()));
  }
  BACKFILL_ASSERT_OK(edge.upstream->Send(ChunkOf(1), Clock::Real()));
  // The first barrier fills the one-message channel: the second waits.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline &&
         (edge.server->EdgeBarriers()[0].epoch != Epoch(9) ||
          edge.input->blocked_since() == absl::InfiniteFuture())) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  std::vector<ExchangeServer::EdgeBarrier> sent = edge.server->EdgeBarriers();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].upstream, kUp);
  EXPECT_EQ(sent[0].downstream, kDown);
  EXPECT_EQ(sent[0].epoch, Epoch(9));  // The last one, not the first.
  EXPECT_GE(sent[0].sent_at, before);
  EXPECT_LE(sent[0].sent_at, absl::Now());
  const absl::Time blocked = edge.input->blocked_since();
  EXPECT_GE(blocked, before);
  EXPECT_LE(blocked, absl::Now());
  // Reading the channel empty ends the wait (the receiving thread notes it
  // just after its send).
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(NextWithin(*edge.downstream, absl::Seconds(30)).is_ready());
  }
  const absl::Time read_deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < read_deadline &&
         edge.input->blocked_since() != absl::InfiniteFuture()) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(edge.input->blocked_since(), absl::InfiniteFuture());
}

TEST(RemoteExchangeTest, TheUpstreamErrorFailsTheDownstreamChannel) {
  Edge edge = Connect();
  BACKFILL_ASSERT_OK(edge.upstream->Send(ChunkOf(1), Clock::Real()));
  edge.upstream->Fail(absl::InternalError("disk on fire"));
  PollResult first = NextWithin(*edge.downstream, absl::Seconds(30));
  ASSERT_TRUE(first.is_ready());
  PollResult end = NextWithin(*edge.downstream, absl::Seconds(30));
  ASSERT_TRUE(end.is_error()) << end.DebugString();
  EXPECT_THAT(end.status(),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("exchange edge 1 -> 101 from ")));
  EXPECT_THAT(end.status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("disk on fire")));
}

// A lost upstream is never taken for a finished one.
TEST(RemoteExchangeTest, AServerShutDownFailsTheDownstreamChannel) {
  Edge edge = Connect();
  BACKFILL_ASSERT_OK(edge.upstream->Send(ChunkOf(1), Clock::Real()));
  ASSERT_TRUE(NextWithin(*edge.downstream, absl::Seconds(30)).is_ready());
  edge.server->Shutdown();
  PollResult end = NextWithin(*edge.downstream, absl::Seconds(30));
  ASSERT_TRUE(end.is_error()) << end.DebugString();
  EXPECT_THAT(end.status(), StatusIs(absl::StatusCode::kUnavailable,
                                     HasSubstr("exchange edge 1 -> 101")));
  // The upstream actor's sends are Cancelled, as for a closed receiver.
  EXPECT_THAT(edge.upstream->Send(ChunkOf(2), Clock::Real()),
              StatusIs(absl::StatusCode::kCancelled));
}

// An upstream process that vanished without closing the connection (its
// machine died: a black-holing proxy in between) fails the edge through the
// keepalive pings as one that shut down does: UNAVAILABLE, never an end.
TEST(RemoteExchangeTest, AVanishedUpstreamFailsTheDownstreamChannel) {
  constexpr Keepalive kFast{absl::Milliseconds(200), absl::Seconds(3)};
  absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
      ExchangeServer::Start({.keepalive = kFast});
  BACKFILL_ASSERT_OK(server.status());
  auto [up_tx, up_rx] = MakeChannel();
  BACKFILL_ASSERT_OK(
      (*server)->AddOutput(kUp, kDown, std::move(up_rx), Codec()));
  BlackholeProxy proxy((*server)->address());
  BACKFILL_ASSERT_OK(proxy.status());
  auto [down_tx, down_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> input =
      RemoteInput::Start({.address = proxy.address(),
                          .upstream = kUp,
                          .downstream = kDown,
                          .keepalive = kFast},
                         Codec(), std::move(down_tx));
  BACKFILL_ASSERT_OK(up_tx.Send(ChunkOf(1), Clock::Real()));
  ASSERT_TRUE(NextWithin(down_rx, absl::Seconds(30)).is_ready());
  proxy.Blackhole();
  PollResult end = NextWithin(down_rx, absl::Seconds(30));
  ASSERT_TRUE(end.is_error()) << end.DebugString();
  EXPECT_THAT(end.status(), StatusIs(absl::StatusCode::kUnavailable,
                                     HasSubstr("exchange edge 1 -> 101")));
  input.reset();
  proxy.Close();
}

// The downstream actor went away: the upstream actor's sends are
// Cancelled (its receiver closed), and the call ends.
TEST(RemoteExchangeTest, ADownstreamCloseCancelsTheUpstreamSends) {
  Edge edge = Connect(/*up_capacity=*/1, /*down_capacity=*/1, /*permits=*/1);
  BACKFILL_ASSERT_OK(edge.upstream->Send(ChunkOf(1), Clock::Real()));
  ASSERT_TRUE(NextWithin(*edge.downstream, absl::Seconds(30)).is_ready());
  edge.downstream->Close();
  absl::Status status;
  for (int i = 0; i < 1000 && status.ok(); ++i) {
    status = edge.upstream->Send(ChunkOf(i), Clock::Real());
  }
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kCancelled));
  edge.input.reset();  // joins
}

// A downstream that stops reading (its actor hangs, its process answers)
// must not hold the upstream actor for ever once the attempt failed:
// CancelOutputs ends the call, and the upstream's blocked send is
// Cancelled.
TEST(RemoteExchangeTest, CancelOutputsReleasesAnUpstreamBlockedOnAStuckReader) {
  Edge edge = Connect(/*up_capacity=*/1, /*down_capacity=*/1, /*permits=*/1);
  absl::Status status;
  std::thread producer([&] {
    for (int i = 0; i < 1000 && status.ok(); ++i) {
      status = edge.upstream->Send(ChunkOf(i), Clock::Real());
    }
  });
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_TRUE(status.ok()) << "nothing reads, yet the upstream is not held";
  edge.server->CancelOutputs();
  producer.join();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kCancelled));
  EXPECT_TRUE(edge.server->WaitUntilNoCall(absl::Seconds(30)));
  edge.input.reset();  // joins
}

TEST(RemoteExchangeTest, CancelFailsTheDownstreamChannel) {
  Edge edge = Connect();
  edge.input->Cancel();
  PollResult end = NextWithin(*edge.downstream, absl::Seconds(30));
  ASSERT_TRUE(end.is_error()) << end.DebugString();
  EXPECT_THAT(end.status(), StatusIs(absl::StatusCode::kCancelled,
                                     HasSubstr("exchange edge 1 -> 101")));
}

// An edge may be added after the downstream connected (within edge_wait);
// one never added is NOT_FOUND; an edge is received once and added once.
TEST(RemoteExchangeTest, EdgesAreWaitedForReceivedOnceAndAddedOnce) {
  absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
      ExchangeServer::Start({.edge_wait = absl::Seconds(1)});
  BACKFILL_ASSERT_OK(server.status());
  auto [down_tx, down_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> input = RemoteInput::Start(
      {.address = (*server)->address(), .upstream = kUp, .downstream = kDown},
      Codec(), std::move(down_tx));
  absl::SleepFor(absl::Milliseconds(200));
  auto [up_tx, up_rx] = MakeChannel();
  BACKFILL_ASSERT_OK(
      (*server)->AddOutput(kUp, kDown, std::move(up_rx), Codec()));
  BACKFILL_ASSERT_OK(up_tx.Send(ChunkOf(5), Clock::Real()));
  PollResult first = NextWithin(down_rx, absl::Seconds(30));
  ASSERT_TRUE(first.is_ready()) << first.DebugString();

  auto [again_tx, again_rx] = MakeChannel();
  EXPECT_THAT((*server)->AddOutput(kUp, kDown, std::move(again_rx), Codec()),
              StatusIs(absl::StatusCode::kAlreadyExists));

  auto [second_tx, second_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> second = RemoteInput::Start(
      {.address = (*server)->address(), .upstream = kUp, .downstream = kDown},
      Codec(), std::move(second_tx));
  PollResult refused = NextWithin(second_rx, absl::Seconds(30));
  ASSERT_TRUE(refused.is_error()) << refused.DebugString();
  EXPECT_THAT(refused.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                         HasSubstr("received already")));

  auto [missing_tx, missing_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> missing = RemoteInput::Start(
      {.address = (*server)->address(), .upstream = kUp, .downstream = 999},
      Codec(), std::move(missing_tx));
  PollResult not_found = NextWithin(missing_rx, absl::Seconds(30));
  ASSERT_TRUE(not_found.is_error()) << not_found.DebugString();
  EXPECT_THAT(not_found.status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("exchange edge 1 -> 999 was not added")));
}

// A later attempt of a job serves the same edges again: an edge whose call
// ended may be added anew; ClearUntaken drops what nobody received.
TEST(RemoteExchangeTest, AnEdgeIsServedAgainAfterItsCallEnded) {
  absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
      ExchangeServer::Start({.edge_wait = absl::Milliseconds(300)});
  BACKFILL_ASSERT_OK(server.status());
  for (int attempt = 0; attempt < 3; ++attempt) {
    SCOPED_TRACE(absl::StrCat("attempt ", attempt));
    auto [up_tx, up_rx] = MakeChannel();
    BACKFILL_ASSERT_OK(
        (*server)->AddOutput(kUp, kDown, std::move(up_rx), Codec()));
    auto [down_tx, down_rx] = MakeChannel();
    std::unique_ptr<RemoteInput> input = RemoteInput::Start(
        {.address = (*server)->address(), .upstream = kUp, .downstream = kDown},
        Codec(), std::move(down_tx));
    BACKFILL_ASSERT_OK(up_tx.Send(ChunkOf(attempt), Clock::Real()));
    // Received and not ended yet: a call is open.
    ASSERT_TRUE(NextWithin(down_rx, absl::Seconds(30)).is_ready());
    EXPECT_FALSE((*server)->WaitUntilNoCall(absl::Milliseconds(100)));
    BACKFILL_ASSERT_OK(up_tx.Send(ChunkOf(attempt), Clock::Real()));
    up_tx.Close();
    PollResult first = NextWithin(down_rx, absl::Seconds(30));
    ASSERT_TRUE(first.is_ready()) << first.DebugString();
    EXPECT_THAT(std::get<StreamChunk>(first.message()),
                ChunkEq(ChunkOf(attempt)));
    ASSERT_TRUE(NextWithin(down_rx, absl::Seconds(30)).is_end());
    // The call ended (the downstream saw its end, which gRPC sends after
    // the handler returned and released the edge): the next attempt adds
    // the same edge.
    EXPECT_TRUE((*server)->WaitUntilNoCall(absl::Seconds(30)));
  }
  // Edges added and never received are dropped: their senders are Cancelled.
  auto [untaken_tx, untaken_rx] = MakeChannel();
  BACKFILL_ASSERT_OK(
      (*server)->AddOutput(kUp, 900, std::move(untaken_rx), Codec()));
  (*server)->ClearUntaken();
  EXPECT_THAT(untaken_tx.Send(ChunkOf(1), Clock::Real()),
              StatusIs(absl::StatusCode::kCancelled));
  auto [again_tx, again_rx] = MakeChannel();
  BACKFILL_EXPECT_OK(
      (*server)->AddOutput(kUp, 900, std::move(again_rx), Codec()));
}

// An attempt's receiver takes only its own attempt's edge: an earlier
// attempt's edge that its process still holds (it has not ended that
// attempt yet) is waited past, and its messages never reach the later
// attempt.
TEST(RemoteExchangeTest, AnEarlierAttemptsEdgeIsNotReceivedByALaterOne) {
  absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
      ExchangeServer::Start({.edge_wait = absl::Seconds(30)});
  BACKFILL_ASSERT_OK(server.status());
  auto [first_tx, first_rx] = MakeChannel();
  BACKFILL_ASSERT_OK((*server)->AddOutput(kUp, kDown, std::move(first_rx),
                                          Codec(), /*attempt_key=*/1));
  BACKFILL_ASSERT_OK(first_tx.Send(ChunkOf(1), Clock::Real()));

  auto [down_tx, down_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> input =
      RemoteInput::Start({.address = (*server)->address(),
                          .upstream = kUp,
                          .downstream = kDown,
                          .attempt_key = 2},
                         Codec(), std::move(down_tx));
  EXPECT_TRUE(NextWithin(down_rx, absl::Milliseconds(500)).is_pending());
  // Attempt 1 ends in its process, and attempt 2 adds the edge.
  (*server)->ClearUntaken();
  auto [second_tx, second_rx] = MakeChannel();
  BACKFILL_ASSERT_OK((*server)->AddOutput(kUp, kDown, std::move(second_rx),
                                          Codec(), /*attempt_key=*/2));
  BACKFILL_ASSERT_OK(second_tx.Send(ChunkOf(2), Clock::Real()));
  PollResult next = NextWithin(down_rx, absl::Seconds(30));
  ASSERT_TRUE(next.is_ready()) << next.DebugString();
  EXPECT_THAT(std::get<StreamChunk>(next.message()), ChunkEq(ChunkOf(2)));

  // An edge only ever added for another attempt is not found, and the error
  // says there is one (a receiver of either attempt may come too early or
  // too late).
  absl::StatusOr<std::unique_ptr<ExchangeServer>> other =
      ExchangeServer::Start({.edge_wait = absl::Milliseconds(300)});
  BACKFILL_ASSERT_OK(other.status());
  auto [stale_tx, stale_rx] = MakeChannel();
  BACKFILL_ASSERT_OK((*other)->AddOutput(kUp, kDown, std::move(stale_rx),
                                         Codec(), /*attempt_key=*/1));
  auto [late_tx, late_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> late =
      RemoteInput::Start({.address = (*other)->address(),
                          .upstream = kUp,
                          .downstream = kDown,
                          .attempt_key = 2},
                         Codec(), std::move(late_tx));
  PollResult refused = NextWithin(late_rx, absl::Seconds(30));
  ASSERT_TRUE(refused.is_error()) << refused.DebugString();
  EXPECT_THAT(refused.status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("(only another attempt's)")));
}

TEST(RemoteExchangeTest, AnUnreachableUpstreamFailsTheDownstreamChannel) {
  // A port nothing listens on: a server started and shut down.
  std::string address;
  {
    absl::StatusOr<std::unique_ptr<ExchangeServer>> server =
        ExchangeServer::Start();
    BACKFILL_ASSERT_OK(server.status());
    address = (*server)->address();
  }
  auto [down_tx, down_rx] = MakeChannel();
  std::unique_ptr<RemoteInput> input = RemoteInput::Start(
      {.address = address, .upstream = kUp, .downstream = kDown}, Codec(),
      std::move(down_tx));
  PollResult end = NextWithin(down_rx, absl::Seconds(60));
  ASSERT_TRUE(end.is_error()) << end.DebugString();
  EXPECT_THAT(end.status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(address)));
}

TEST(RemoteExchangeTest, BadOptionsAreRefused) {
  EXPECT_THAT(
      ExchangeServer::Start({.listen_address = "no-port"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("host:port")));
}

}  // namespace
}  // namespace backfill
