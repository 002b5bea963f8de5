#include "executor/runtime/actor.h"

#include <memory>
#include <vector>

#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::StatusIs;
using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;
using ::testing::ElementsAre;

// Counts wake-ups; never blocks.
class CountingWaker final : public Waker {
 public:
  void Wake() override { ++wakes; }
  int wakes = 0;
};

constexpr ActorId kActor = 7;

Barrier StopBarrier(uint64_t curr, ActorId actor) {
  StopMutation stop;
  stop.actors.insert(actor);
  return TestBarrier(curr, BarrierKind::kCheckpoint,
                     std::make_shared<const Mutation>(std::move(stop)));
}

struct Fixture {
  explicit Fixture(size_t capacity = 16) {
    auto [tx, rx] = MakeChannel({capacity});
    receiver.emplace(std::move(rx));
    auto root =
        std::make_unique<ScriptedExecutor>(ExecutorInfo{{}, {}, "Scripted(7)"});
    script = root.get();
    ActorCallbacks callbacks;
    callbacks.on_barrier = [this](const Barrier& barrier, absl::Time) {
      barriers.push_back(barrier.epoch.curr.value());
    };
    callbacks.on_end = [this](const Actor& actor) {
      ++ends;
      ended_state = actor.state();
    };
    actor = std::make_unique<Actor>(
        kActor, std::move(root), std::make_unique<ChannelOutput>(std::move(tx)),
        std::move(callbacks));
  }
  // Polls until the actor is not making progress.
  Actor::Step Run() {
    Actor::Step step;
    while ((step = actor->Poll(cx)) == Actor::Step::kProgress) {
    }
    return step;
  }
  // Everything in the channel, as "B<curr>" / "C<rows>" / "End".
  std::vector<std::string> Drain() {
    std::vector<std::string> out;
    while (true) {
      PollResult r = receiver->PollReceive(cx);
      if (r.is_end()) {
        out.push_back("End");
        return out;
      }
      if (!r.is_ready()) return out;
      if (const auto* b = std::get_if<Barrier>(&r.message())) {
        out.push_back(absl::StrCat("B", b->epoch.curr.value()));
      } else if (const auto* c = std::get_if<StreamChunk>(&r.message())) {
        out.push_back(absl::StrCat("C", c->capacity()));
      }
    }
  }

  SimulatedClock clock;
  std::shared_ptr<CountingWaker> waker = std::make_shared<CountingWaker>();
  PollContext cx{waker, clock};
  std::optional<ChannelReceiver> receiver;
  ScriptedExecutor* script = nullptr;
  std::unique_ptr<Actor> actor;
  std::vector<uint64_t> barriers;
  int ends = 0;
  Actor::State ended_state = Actor::State::kRunning;
};

TEST(ActorTest, DeliversInOrderAndStopsAfterItsStopBarrier) {
  Fixture f;
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  f.script->Push(StreamChunkFromPretty(" I\n + 1\n + 2"));
  f.script->Push(TestBarrier(2));
  f.script->Push(StopBarrier(3, kActor));
  f.script->Push(StreamChunkFromPretty(" I\n + 9"));  // never polled
  EXPECT_EQ(f.Run(), Actor::Step::kDone);
  EXPECT_EQ(f.actor->state(), Actor::State::kStopped);
  BACKFILL_EXPECT_OK(f.actor->status());
  EXPECT_THAT(f.barriers, ElementsAre(1, 2, 3));
  EXPECT_EQ(f.ends, 1);
  // The output is closed after the stop barrier.
  EXPECT_THAT(f.Drain(), ElementsAre("B1", "C2", "B2", "B3", "End"));
  // Done is sticky and polls nothing.
  EXPECT_EQ(f.actor->Poll(f.cx), Actor::Step::kDone);
  EXPECT_EQ(f.ends, 1);
}

TEST(ActorTest, AStopBarrierForAnotherActorDoesNotStopIt) {
  Fixture f;
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  f.script->Push(StopBarrier(2, kActor + 1));
  f.script->Close();
  EXPECT_EQ(f.Run(), Actor::Step::kDone);
  // Its input ended before its own stop barrier.
  EXPECT_EQ(f.actor->state(), Actor::State::kEnded);
  EXPECT_THAT(f.Drain(), ElementsAre("B1", "B2", "End"));
}

TEST(ActorTest, WaitsWhileTheOutputIsFullWithoutLosingTheMessage) {
  Fixture f(/*capacity=*/1);
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  f.script->Push(TestBarrier(2));
  f.script->Push(StopBarrier(3, kActor));
  // B1 fills the channel; B2 is taken from the root and waits.
  EXPECT_EQ(f.Run(), Actor::Step::kPending);
  EXPECT_THAT(f.barriers, ElementsAre(1, 2));
  const int wakes = f.waker->wakes;
  EXPECT_THAT(f.Drain(), ElementsAre("B1"));
  EXPECT_GT(f.waker->wakes, wakes);  // a freed slot wakes the actor
  EXPECT_EQ(f.Run(), Actor::Step::kPending);
  EXPECT_THAT(f.Drain(), ElementsAre("B2"));
  EXPECT_EQ(f.Run(), Actor::Step::kDone);
  EXPECT_EQ(f.actor->state(), Actor::State::kStopped);
  EXPECT_THAT(f.Drain(), ElementsAre("B3", "End"));
}

TEST(ActorTest, PendingRootIsPending) {
  Fixture f;
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  f.script->PushPendingUntil(f.clock.Now() + absl::Seconds(1));
  EXPECT_EQ(f.Run(), Actor::Step::kPending);
  EXPECT_EQ(f.cx.wake_deadline(), f.clock.Now() + absl::Seconds(1));
  EXPECT_EQ(f.actor->state(), Actor::State::kRunning);
}

TEST(ActorTest, ARootErrorFailsTheActorAndClosesTheOutput) {
  Fixture f;
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  f.script->PushError(absl::UnavailableError("disk"));
  EXPECT_EQ(f.Run(), Actor::Step::kDone);
  EXPECT_EQ(f.actor->state(), Actor::State::kFailed);
  EXPECT_THAT(f.actor->status(),
              StatusIs(absl::StatusCode::kUnavailable, "disk"));
  EXPECT_EQ(f.ends, 1);
  EXPECT_EQ(f.ended_state, Actor::State::kFailed);
  EXPECT_THAT(f.Drain(), ElementsAre("B1", "End"));
  EXPECT_EQ(f.actor->identity(), "Scripted(7)");
  f.actor->Abandon();  // destroys the root
}

TEST(ActorTest, AGoneReceiverFailsTheActorWithCancelled) {
  Fixture f;
  f.receiver->Close();
  f.script->Push(TestBarrier(1, BarrierKind::kInitial));
  EXPECT_EQ(f.Run(), Actor::Step::kDone);
  EXPECT_EQ(f.actor->state(), Actor::State::kFailed);
  EXPECT_THAT(f.actor->status(), StatusIs(absl::StatusCode::kCancelled));
}

// Records whether it was closed.
class ProbeOutput final : public ActorOutput {
 public:
  explicit ProbeOutput(bool* closed) : closed_(closed) {}
  absl::Status Push(Message) override { return absl::OkStatus(); }
  absl::StatusOr<bool> PollFlush(PollContext&) override { return true; }
  void Close() override { *closed_ = true; }

 private:
  bool* closed_;
};

TEST(ActorTest, OnEndRunsBeforeTheOutputCloses) {
  auto root = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  root->Push(TestBarrier(1, BarrierKind::kInitial));
  root->PushError(absl::InternalError("boom"));
  bool closed = false;
  std::optional<bool> closed_at_end;
  ActorCallbacks callbacks;
  callbacks.on_end = [&](const Actor& actor) {
    closed_at_end = closed;
    EXPECT_EQ(actor.state(), Actor::State::kFailed);
  };
  Actor actor(kActor, std::move(root), std::make_unique<ProbeOutput>(&closed),
              std::move(callbacks));
  SimulatedClock clock;
  PollContext cx(std::make_shared<CountingWaker>(), clock);
  EXPECT_EQ(actor.Poll(cx), Actor::Step::kProgress);
  EXPECT_EQ(actor.Poll(cx), Actor::Step::kDone);
  EXPECT_EQ(closed_at_end, std::optional<bool>(false));
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace backfill
