#include "executor/runtime/barrier_coordinator.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "executor/runtime/demo/bulk_load.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/job_state_table.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

StreamingJobOptions Job() {
  StreamingJobOptions options;
  TableCatalog& catalog = options.upstream;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kInt32, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 8;
  catalog.value_indices = {0, 1};
  options.initial_rows = 10;
  options.parallelism = 2;
  options.rate_limit = RateLimit::Fixed(1000);
  options.checkpoint_frequency = 2;
  options.extra_checkpoints_after_finish = 0;
  options.max_duration = absl::Seconds(10);
  options.actions = {{1, JobAction::Kind::kPause, 0},
                     {2, JobAction::Kind::kResume, 0},
                     {2, JobAction::Kind::kSetRateLimit, 4000}};
  return options;
}

// A defined, loaded job; a coordinator and its graph (never polled: the
// test plays the graph's part through the listener).
struct Fixture {
  explicit Fixture(bool creating = true,
                   const StreamingJobOptions& job = Job())
      : options(job) {
    store = NewMemoryStateStore();
    EXPECT_TRUE(DefineJob(*store, options).ok());
    EXPECT_TRUE(LoadInitialRows(*store, options).ok());
    AttemptStart attempt;
    attempt.creating = creating;
    attempt.job_start = clock.Now();
    attempt.observer = [this](const JobProgress& progress) {
      observed.push_back(progress);
    };
    auto created =
        BarrierCoordinator::Create(*store, options, attempt, clock, &result);
    EXPECT_TRUE(created.ok()) << created.status();
    coordinator = std::move(*created);
    auto built = BuildJobGraph(*store, options, coordinator->state(),
                               {&clock, nullptr, coordinator.get()});
    EXPECT_TRUE(built.ok()) << built.status();
    graph = std::move(*built);
  }

  StreamingJobOptions options;
  SimulatedClock clock;
  std::unique_ptr<StateStore> store;
  JobResult result;
  std::vector<JobProgress> observed;
  std::unique_ptr<BarrierCoordinator> coordinator;
  std::unique_ptr<JobGraph> graph;
  // DriveBarriers' actors: each one's rate in force (rows/s; from the
  // Throttles) and its rows read so far.
  std::map<ActorId, double> actor_rate;
  std::map<ActorId, uint64_t> actor_rows;
};

TEST(BarrierCoordinatorTest, CreateNeedsADefinedJob) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  JobResult result;
  const StreamingJobOptions options = Job();
  EXPECT_THAT(
      BarrierCoordinator::Create(*store, options, {}, clock, &result).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("job state (table 1004) is missing")));
}

TEST(BarrierCoordinatorTest, CreateAppliesTheOverridesOnlyWhenAsked) {
  StreamingJobOptions options = Job();
  options.overrides.parallelism = 3;
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK(DefineJob(*store, options));
  SimulatedClock clock;
  JobResult result;
  AttemptStart attempt;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto saved, BarrierCoordinator::Create(*store, options, attempt, clock,
                                             &result));
  EXPECT_EQ(saved->state().parallelism, 2u);
  attempt.apply_overrides = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto overridden, BarrierCoordinator::Create(*store, options, attempt,
                                                  clock, &result));
  EXPECT_EQ(overridden->state().parallelism, 3u);
  EXPECT_EQ(result.parallelism, 3u);
}

TEST(BarrierCoordinatorTest, TheFirstBarrierIsInitialWithAddOrUpdate) {
  for (bool creating : {true, false}) {
    SCOPED_TRACE(creating ? "creating" : "restarting");
    Fixture f(creating);
    const Epoch committed = f.store->CommittedEpoch(1);
    BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                  f.coordinator->NextBarrier(*f.graph));
    EXPECT_EQ(first.kind, BarrierKind::kInitial);
    EXPECT_EQ(first.epoch.prev, committed);
    EXPECT_EQ(first.epoch.curr.value(), committed.value() + 1);
    if (creating) {
      const auto* add = first.MutationAs<AddMutation>();
      ASSERT_NE(add, nullptr);
      EXPECT_THAT(add->added_actors, UnorderedElementsAre(1, 2, 100, 101));
    } else {
      EXPECT_NE(first.MutationAs<UpdateMutation>(), nullptr);
    }
    EXPECT_FALSE(f.coordinator->IsCollected(first.epoch.curr));
    f.coordinator->Collected(first);
    EXPECT_TRUE(f.coordinator->IsCollected(first.epoch.curr));
    BACKFILL_EXPECT_OK(f.coordinator->WaitCollected());
  }
}

TEST(BarrierCoordinatorTest, ActionsComposeIntoOneThrottlePerBarrier) {
  Fixture f;
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.coordinator->Collected(first);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  EXPECT_TRUE(f.observed.empty());  // not for the first barrier

  // Epoch 1: pause. A plain barrier (every 2nd is a checkpoint).
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b1, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b1.kind, BarrierKind::kBarrier);
  EXPECT_EQ(b1.epoch.prev, first.epoch.curr);
  const auto* pause = b1.MutationAs<ThrottleMutation>();
  ASSERT_NE(pause, nullptr);
  EXPECT_EQ(pause->rate_limits.at(JobGraph::kBackfillFragment), 0u);
  EXPECT_EQ(pause->actor_rate_limits.at(100), 0u);
  EXPECT_EQ(pause->actor_rate_limits.at(101), 0u);
  EXPECT_TRUE(f.coordinator->state().paused);
  f.coordinator->Collected(b1);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  ASSERT_EQ(f.observed.size(), 1u);
  EXPECT_EQ(f.observed[0].vnodes_total, 8u);
  EXPECT_FALSE(f.observed[0].backfill_done);

  // Epoch 2: resume + a new rate at one barrier: one Throttle, shares of
  // the new rate; a checkpoint, which commits the job state.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b2, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b2.kind, BarrierKind::kCheckpoint);
  const auto* resume = b2.MutationAs<ThrottleMutation>();
  ASSERT_NE(resume, nullptr);
  EXPECT_EQ(resume->rate_limits.at(JobGraph::kBackfillFragment), 4000u);
  EXPECT_EQ(resume->actor_rate_limits.at(100), 2000u);
  EXPECT_EQ(resume->actor_rate_limits.at(101), 2000u);
  EXPECT_FALSE(f.coordinator->state().paused);
  EXPECT_EQ(f.coordinator->state().epochs_since_creation, 2u);

  // (b2 is not collected here: its checkpoint needs the graph's tables.)
  EXPECT_EQ(f.result.epochs, 2u);
}

// A rescale action at a barrier that is not a checkpoint changes the job
// state at once but the actors at the next checkpoint barrier: it carries
// the Update (old actors dropped, dispatcher and merge rescheduled) instead
// of a Throttle, the new actors are added to the graph with the rate in
// force, and after its checkpoint the old ones are retired.
TEST(BarrierCoordinatorTest, RescalesAtTheNextCheckpointBarrier) {
  StreamingJobOptions options = Job();
  options.actions = {{1, JobAction::Kind::kRescale, 0, 3},
                     {2, JobAction::Kind::kSetRateLimit, 3000}};
  Fixture f(true, options);
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.coordinator->Collected(first);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  const size_t actors_before = f.graph->actors.size();
  // Epoch 1 (not a checkpoint): the state says 3, the graph still has 2.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b1, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b1.kind, BarrierKind::kBarrier);
  EXPECT_EQ(b1.MutationAs<UpdateMutation>(), nullptr);
  EXPECT_EQ(f.coordinator->state().parallelism, 3u);
  EXPECT_EQ(f.graph->actors.size(), actors_before);
  f.coordinator->Collected(b1);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  EXPECT_TRUE(f.coordinator->TakeRetiredActors().empty());
  // Epoch 2 (a checkpoint): the rescale.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b2, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b2.kind, BarrierKind::kCheckpoint);
  const auto* update = b2.MutationAs<UpdateMutation>();
  ASSERT_NE(update, nullptr);
  EXPECT_THAT(update->dropped_actors, UnorderedElementsAre(100, 101));
  ASSERT_EQ(update->dispatchers.count(JobGraph::kSourceActor), 1u);
  const DispatcherUpdate& dispatcher =
      update->dispatchers.at(JobGraph::kSourceActor);
  EXPECT_THAT(dispatcher.added_downstream_actors,
              ::testing::ElementsAre(102, 103, 104));
  EXPECT_THAT(dispatcher.removed_downstream_actors,
              UnorderedElementsAre(100, 101));
  EXPECT_EQ(dispatcher.vnode_owners.size(), 8u);
  ASSERT_EQ(update->merges.count(JobGraph::kViewActor), 1u);
  EXPECT_THAT(update->merges.at(JobGraph::kViewActor).added_upstream_actors,
              ::testing::ElementsAre(102, 103, 104));
  EXPECT_EQ(f.graph->actors.size(), actors_before + 3);
  EXPECT_THAT(f.graph->in_force().actor_ids,
              ::testing::ElementsAre(102, 103, 104));
  EXPECT_THAT(f.graph->ActorIds(), UnorderedElementsAre(1, 2, 102, 103, 104));
  // Its checkpoint commits the new parallelism; the old actors retire.
  f.coordinator->Collected(b2);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  std::vector<Actor*> retired = f.coordinator->TakeRetiredActors();
  ASSERT_EQ(retired.size(), 2u);
  EXPECT_EQ(retired[0]->id(), 100u);
  EXPECT_EQ(retired[1]->id(), 101u);
  EXPECT_TRUE(f.coordinator->TakeRetiredActors().empty());
  EXPECT_EQ(f.result.rescales, 1u);
  EXPECT_EQ(f.result.parallelism, 3u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> saved,
                                ReadCommittedJob(*f.store, options.job_state_table_id));
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->state.parallelism, 3u);
  EXPECT_EQ(saved->state.rate_limit, RateLimit::Fixed(3000));
  // The rate set at the rescale's epoch was built into the new actors: no
  // later barrier carries a Throttle for it.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b3, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b3.mutation, nullptr);
}

TEST(BarrierCoordinatorTest, StopsEveryActorAtTheCheckpointAfterTheBackfillIsDone) {
  StreamingJobOptions options = Job();
  options.actions = {};
  options.checkpoint_frequency = 1;
  Fixture f(true, options);
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.coordinator->Collected(first);
  BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  // Not done: a checkpoint barrier without a mutation.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b1, f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(b1.kind, BarrierKind::kCheckpoint);
  EXPECT_EQ(b1.mutation, nullptr);
  EXPECT_FALSE(f.graph->stop_generating->load());
  // The actors finish (as their reporters would say).
  for (ActorId actor : f.graph->in_force().actor_ids) {
    ProgressEvent event;
    event.actor = actor;
    event.epoch = b1.epoch;
    event.done = true;
    event.consumed_epoch = b1.epoch.prev;
    event.consumed_rows = 5;
    BACKFILL_ASSERT_OK(f.graph->in_force().tracker->Report(event));
  }
  f.coordinator->Collected(b1);
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier b2, f.coordinator->NextBarrier(*f.graph));
  const auto* stop = b2.MutationAs<StopMutation>();
  ASSERT_NE(stop, nullptr);
  EXPECT_THAT(stop->actors, UnorderedElementsAre(1, 2, 100, 101));
  EXPECT_TRUE(f.graph->stop_generating->load());
  EXPECT_FALSE(f.coordinator->finished());
}

// Adaptive mode: a job at a 50 ms target, no checkpoints in the way (the
// test plays the graph, whose tables a checkpoint would need).
StreamingJobOptions AdaptiveJob() {
  StreamingJobOptions options = Job();
  options.actions = {};
  options.rate_limit = RateLimit::Disabled();
  options.adaptive_target_barrier_latency = absl::Milliseconds(50);
  options.checkpoint_frequency = 1'000'000;
  options.barrier_interval = absl::Milliseconds(100);
  options.chunk_size = 256;  // floor: 256 rows per 4 barriers = 640 rows/s
  return options;
}

// Drives barriers 100 ms apart whose backfill latency is `latency`; returns
// the job-wide rate of each Throttle the barriers carried. The actors read
// at the rate in force, or `read_at_most` rows/s between them if lower, and
// report it at each barrier as the executors do.
std::vector<uint32_t> DriveBarriers(Fixture& f, int count,
                                    absl::Duration latency,
                                    double read_at_most = 1e12) {
  std::vector<uint32_t> throttles;
  const std::vector<ActorId>& actors = f.graph->in_force().actor_ids;
  if (f.actor_rate.empty()) {
    const std::optional<uint32_t> job =
        f.coordinator->state().EffectiveRateLimit().ToOptionalU32();
    for (ActorId actor : actors) {
      f.actor_rate[actor] =
          job.has_value() ? static_cast<double>(*job) / actors.size() : 1e12;
    }
  }
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<Barrier> barrier = f.coordinator->NextBarrier(*f.graph);
    EXPECT_TRUE(barrier.ok()) << barrier.status();
    if (!barrier.ok()) break;
    // This barrier closes an epoch read at the rates in force before it.
    if (barrier->kind != BarrierKind::kInitial) {
      for (ActorId actor : actors) {
        f.actor_rows[actor] += static_cast<uint64_t>(
            std::min(f.actor_rate[actor], read_at_most / actors.size()) * 0.1);
        ProgressEvent event;
        event.actor = actor;
        event.epoch = barrier->epoch;
        event.consumed_epoch = barrier->epoch.prev;
        event.consumed_rows = f.actor_rows[actor];
        EXPECT_TRUE(f.graph->in_force().tracker->Report(event).ok());
      }
    }
    if (const auto* throttle = barrier->MutationAs<ThrottleMutation>()) {
      for (const auto& [actor, share] : throttle->actor_rate_limits) {
        f.actor_rate[actor] = share.has_value() ? *share : 1e12;
      }
      const std::optional<uint32_t> job =
          throttle->rate_limits.at(JobGraph::kBackfillFragment);
      EXPECT_TRUE(job.has_value());
      // The actors' shares add up to the job-wide rate.
      uint32_t sum = 0;
      for (const auto& [actor, share] : throttle->actor_rate_limits) {
        sum += share.value_or(0);
      }
      EXPECT_EQ(sum, job.value_or(0));
      throttles.push_back(job.value_or(0));
    }
    f.clock.AdvanceTime(latency);
    f.coordinator->BackfillEmitted(JobGraph::kFirstBackfillActor, *barrier,
                                   f.clock.Now());
    f.coordinator->Collected(*barrier);
    EXPECT_TRUE(f.coordinator->OnCollected(*f.graph).ok());
    f.clock.AdvanceTime(absl::Milliseconds(100) - latency);
  }
  return throttles;
}

TEST(BarrierCoordinatorTest, AdaptiveLatencyBelowTheTargetRaisesAboveLowers) {
  Fixture f(true, AdaptiveJob());
  // A new adaptive job starts at the controller's initial rate.
  EXPECT_EQ(f.coordinator->state().adaptive_rows_per_second, 1024u);
  EXPECT_EQ(f.coordinator->state().EffectiveRateLimit(), RateLimit::Fixed(1024));
  std::vector<uint32_t> raised =
      DriveBarriers(f, 25, absl::Milliseconds(10));  // the first is Initial
  // Slow start: each window well under the target doubles the rate.
  ASSERT_GE(raised.size(), 1u);
  EXPECT_EQ(raised[0], 2048u);
  for (size_t i = 1; i < raised.size(); ++i) {
    EXPECT_EQ(raised[i], 2 * raised[i - 1]);
  }
  const uint32_t before = f.coordinator->state().adaptive_rows_per_second;
  EXPECT_EQ(before, raised.back());
  // Over the target: multiplicative decrease, through a Throttle.
  // Each barrier over it lowers the rate at once (no window to wait for),
  // the barrier carrying the change aside: it closes an epoch read at the
  // old rate. The first one ends slow start and halves the rate (back to
  // the last one that ran clean); the next ones take 30% off.
  std::vector<uint32_t> lowered = DriveBarriers(f, 5, absl::Milliseconds(80));
  ASSERT_EQ(lowered.size(), 2u);
  EXPECT_EQ(lowered[0], before / 2);
  EXPECT_EQ(lowered[1], static_cast<uint32_t>(lowered[0] * 0.7));
  EXPECT_EQ(f.coordinator->state().adaptive_rows_per_second, lowered[1]);
  EXPECT_EQ(f.observed.back().rate_limit, RateLimit::Fixed(lowered[1]));
  EXPECT_FALSE(f.observed.back().adaptive_target_unreachable);
  // Long over the target at a latency the rate does not change (80 ms at
  // any rate): the cuts buy nothing. The next one would take the rate below
  // a quarter of where they started, so the controller first holds it for
  // a probe (20 barriers), finds them as slow, and judges the target
  // unreachable at this load: the observer says so, and the rate goes back
  // up to 0.7 x where the cuts started instead of on down to the floor.
  std::vector<uint32_t> held = DriveBarriers(f, 21, absl::Milliseconds(80));
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0], static_cast<uint32_t>(before * 0.7));
  EXPECT_TRUE(f.observed.back().adaptive_target_unreachable);
  // Judged against that background, no worse, it climbs again.
  std::vector<uint32_t> unreachable =
      DriveBarriers(f, 50, absl::Milliseconds(80));
  ASSERT_GE(unreachable.size(), 1u);
  for (uint32_t rate : unreachable) EXPECT_GT(rate, held[0]);
  EXPECT_TRUE(f.observed.back().adaptive_target_unreachable);
  // Back under the target: the background is gone, the target rules again.
  std::vector<uint32_t> recovered =
      DriveBarriers(f, 30, absl::Milliseconds(10));
  ASSERT_GE(recovered.size(), 1u);
  EXPECT_GT(recovered[0], unreachable.back());
  EXPECT_FALSE(f.observed.back().adaptive_target_unreachable);
}

// A backfill that reads 1,000 rows/s whatever its limit (bound by its own
// work) under barriers well under the target: slow start doubles the rate
// while the actors read at least half of it (1024 -> 2048) and holds there
// once they read less (as the rows they report at each barrier show),
// instead of doubling a limit nobody reaches. Once the rate has allowed
// enough rows that two actors' 256-row chunks cannot account for the
// shortfall, slow start ends below the actors' ceiling (0.7 x 1,000) and
// the rate climbs back toward it cautiously. Over-target barriers then
// decrease from the rate in force (which they read), to the floor at
// least: the first is taken for a spike after a calm run, the second
// decreases, the third carries it.
TEST(BarrierCoordinatorTest, AdaptiveRateTheActorsDoNotReachDoesNotClimb) {
  Fixture f(true, AdaptiveJob());
  std::vector<uint32_t> raised =
      DriveBarriers(f, 100, absl::Milliseconds(10), /*read_at_most=*/1000);
  ASSERT_GE(raised.size(), 2u);
  EXPECT_EQ(raised[0], 2048u);
  EXPECT_NEAR(raised[1], 700, 2);  // the measure's rounding
  for (size_t i = 1; i < raised.size(); ++i) EXPECT_LE(raised[i], 1000u);
  const uint32_t before = f.coordinator->state().adaptive_rows_per_second;
  EXPECT_EQ(before, raised.back());
  std::vector<uint32_t> lowered =
      DriveBarriers(f, 3, absl::Milliseconds(80), /*read_at_most=*/1000);
  ASSERT_EQ(lowered.size(), 1u);
  EXPECT_NEAR(lowered[0], std::max(640.0, 0.7 * before), 2);  // the floor
}

// set_rate_limit while adaptive caps the controller (one Throttle to the
// cap at once), and a paused epoch neither feeds nor moves the controller.
TEST(BarrierCoordinatorTest, ASetRateLimitWhileAdaptiveCapsTheController) {
  StreamingJobOptions options = AdaptiveJob();
  options.actions = {{20, JobAction::Kind::kSetRateLimit, 1500},
                     {22, JobAction::Kind::kPause, 0},
                     {60, JobAction::Kind::kResume, 0}};
  Fixture f(true, options);
  std::vector<uint32_t> throttles =
      DriveBarriers(f, 21, absl::Milliseconds(10));  // epochs 0..20
  ASSERT_FALSE(throttles.empty());
  EXPECT_GT(throttles.size(), 1u);
  EXPECT_EQ(throttles.back(), 1500u);
  EXPECT_TRUE(f.coordinator->state().adaptive());
  EXPECT_EQ(f.coordinator->state().rate_limit, RateLimit::Fixed(1500));
  // Paused from epoch 22 to 60 with latencies far over the target: only
  // the barrier closing the one epoch run under the cap (21; 20 carried the
  // cap, 22 the pause and its epoch ran at the lowered rate) lowers it; the
  // controller was still in slow start, so by half.
  DriveBarriers(f, 40, absl::Milliseconds(90));
  EXPECT_EQ(f.coordinator->state().epochs_since_creation, 60u);
  EXPECT_EQ(f.coordinator->state().EffectiveRateLimit(), RateLimit::Fixed(750));
  EXPECT_EQ(f.coordinator->state().adaptive_rows_per_second, 750u);
}

// A cap below the floor at the start lowers the floor only while it is in
// force: once set_rate_limit 0 lifts it, slow barriers lower the rate to
// the configured floor and no further.
TEST(BarrierCoordinatorTest, LiftingAStartTimeCapRestoresTheAdaptiveFloor) {
  StreamingJobOptions options = AdaptiveJob();
  options.rate_limit = RateLimit::Fixed(300);  // under the 640 rows/s floor
  options.actions = {{1, JobAction::Kind::kSetRateLimit, 0}};
  Fixture f(true, options);
  EXPECT_EQ(f.coordinator->state().adaptive_rows_per_second, 300u);
  std::vector<uint32_t> throttles =
      DriveBarriers(f, 300, absl::Milliseconds(80));
  ASSERT_FALSE(throttles.empty());
  for (uint32_t rate : throttles) EXPECT_GE(rate, 640u);
  EXPECT_EQ(f.coordinator->state().rate_limit, RateLimit::Disabled());
  EXPECT_EQ(f.coordinator->state().adaptive_rows_per_second, 640u);
}

// An actor over a scripted root that ends after `messages`.
std::unique_ptr<Actor> ScriptedActor(ActorId id, std::vector<Message> messages,
                                     absl::Status error = absl::OkStatus()) {
  auto root = std::make_unique<testing::ScriptedExecutor>(
      ExecutorInfo{{}, {}, absl::StrCat("Scripted(", id, ")")});
  for (Message& message : messages) root->Push(std::move(message));
  if (!error.ok()) root->PushError(error);
  return std::make_unique<Actor>(id, std::move(root),
                                 std::make_unique<DiscardOutput>());
}

void RunToEnd(Actor& actor, Clock& clock) {
  class NoopWaker final : public Waker {
   public:
    void Wake() override {}
  };
  PollContext cx(std::make_shared<NoopWaker>(), clock);
  while (actor.Poll(cx) != Actor::Step::kDone) {
  }
}

TEST(BarrierCoordinatorTest, ActorsEndingBeforeTheirStopBarrierFailTheAttempt) {
  Fixture f;
  BACKFILL_EXPECT_OK(f.coordinator->error());
  // Stopped at its stop barrier: no error.
  StopMutation stop;
  stop.actors.insert(7);
  auto stopped = ScriptedActor(
      7, {testing::TestBarrier(1, BarrierKind::kCheckpoint,
                               std::make_shared<const Mutation>(stop))});
  RunToEnd(*stopped, f.clock);
  ASSERT_EQ(stopped->state(), Actor::State::kStopped);
  f.coordinator->ActorEnded(*stopped);
  BACKFILL_EXPECT_OK(f.coordinator->error());
  // Its input ended first: Internal naming it.
  auto ended = ScriptedActor(8, {testing::TestBarrier(1)});
  RunToEnd(*ended, f.clock);
  f.coordinator->ActorEnded(*ended);
  EXPECT_THAT(f.coordinator->error(),
              StatusIs(absl::StatusCode::kInternal,
                       "Scripted(8): input ended before the stop barrier"));
  // The first error wins.
  auto failed = ScriptedActor(9, {}, absl::UnavailableError("disk"));
  RunToEnd(*failed, f.clock);
  f.coordinator->ActorEnded(*failed);
  f.coordinator->Fail(absl::InternalError("later"));
  EXPECT_THAT(f.coordinator->error(), StatusIs(absl::StatusCode::kInternal,
                                               HasSubstr("Scripted(8)")));
  EXPECT_THAT(f.coordinator->WaitCollected(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("Scripted(8)")));
}

TEST(BarrierCoordinatorTest, AFailedActorReportsItsOwnError) {
  Fixture f;
  auto failed = ScriptedActor(9, {}, absl::UnavailableError("disk"));
  RunToEnd(*failed, f.clock);
  f.coordinator->ActorEnded(*failed);
  EXPECT_THAT(f.coordinator->error(),
              StatusIs(absl::StatusCode::kUnavailable, "disk"));
}

TEST(BarrierCoordinatorTest, CollectedRemotelyNeedsTheGraphAndEveryProcess) {
  Fixture f;
  std::vector<EpochPair> injected;
  f.coordinator->CollectRemotely(
      2, [&](const Barrier& barrier) { injected.push_back(barrier.epoch); });
  for (int i = 0; i < 3; ++i) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier barrier,
                                  f.coordinator->NextBarrier(*f.graph));
    // Each barrier goes to the processes as NextBarrier makes it.
    ASSERT_EQ(injected.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(injected.back(), barrier.epoch);
    const Epoch curr = barrier.epoch.curr;
    // The processes' answers and the graph's collection, in either order.
    if (i % 2 == 0) {
      f.coordinator->Collected(barrier);
      EXPECT_FALSE(f.coordinator->IsCollected(curr));
      f.coordinator->RemoteCollected(curr);
      EXPECT_FALSE(f.coordinator->IsCollected(curr));
      f.coordinator->RemoteCollected(curr);
    } else {
      f.coordinator->RemoteCollected(curr);
      f.coordinator->RemoteCollected(curr);
      EXPECT_FALSE(f.coordinator->IsCollected(curr));
      f.coordinator->Collected(barrier);
    }
    EXPECT_TRUE(f.coordinator->IsCollected(curr));
    BACKFILL_EXPECT_OK(f.coordinator->WaitCollected());
    // A late answer to a collected barrier counts for nothing later.
    f.coordinator->RemoteCollected(curr);
    BACKFILL_ASSERT_OK(f.coordinator->OnCollected(*f.graph));
  }
  // Turned off: the graph's collection alone suffices again.
  f.coordinator->CollectRemotely(0, nullptr);
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier last,
                                f.coordinator->NextBarrier(*f.graph));
  EXPECT_EQ(injected.size(), 3u);
  f.coordinator->Collected(last);
  EXPECT_TRUE(f.coordinator->IsCollected(last.epoch.curr));
}

TEST(BarrierCoordinatorTest, AProcessThatNeverCollectsTimesTheBarrierOut) {
  StreamingJobOptions job = Job();
  job.barrier_timeout = absl::Seconds(2);
  Fixture f(/*creating=*/true, job);
  f.coordinator->CollectRemotely(2, [](const Barrier&) {});
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.coordinator->Collected(first);
  f.coordinator->RemoteCollected(first.epoch.curr);
  f.clock.AdvanceTime(absl::Seconds(3));
  const absl::Status timeout = f.coordinator->WaitCollected();
  EXPECT_THAT(timeout, StatusIs(absl::StatusCode::kUnavailable,
                                HasSubstr("not collected within the barrier "
                                          "timeout 2s")));
  EXPECT_EQ(BarrierTimeoutEpoch(timeout), first.epoch.curr);
}

TEST(BarrierCoordinatorTest, StopCheckpointsReleasesWaiters) {
  Fixture f;
  f.coordinator->StopCheckpoints();
  f.coordinator->WaitUntilCheckpointsStopped();  // returns at once
}

TEST(BarrierCoordinatorTest, AnUncollectedBarrierPastTheDeadlineIsDeadlineExceeded) {
  Fixture f;
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.clock.AdvanceTime(absl::Seconds(11));  // past job_start + 10 s
  EXPECT_THAT(
      f.coordinator->WaitCollected(),
      StatusIs(absl::StatusCode::kDeadlineExceeded,
               HasSubstr("did not finish within its max_duration of 10s")));
}

TEST(BarrierCoordinatorTest,
     AnUncollectedBarrierPastItsTimeoutFailsTheAttempt) {
  StreamingJobOptions job = Job();
  job.barrier_timeout = absl::Seconds(2);
  Fixture f(/*creating=*/true, job);
  BACKFILL_ASSERT_OK_AND_ASSIGN(Barrier first,
                                f.coordinator->NextBarrier(*f.graph));
  f.clock.AdvanceTime(absl::Seconds(3));  // Within the job's 10 s.
  // Unavailable: the recovery policy retries it (not DeadlineExceeded).
  const absl::Status timeout = f.coordinator->WaitCollected();
  EXPECT_THAT(timeout, StatusIs(absl::StatusCode::kUnavailable,
                                HasSubstr("not collected within the barrier "
                                          "timeout 2s")));
  // It names the barrier for whoever looks into it (a placement).
  EXPECT_EQ(BarrierTimeoutEpoch(timeout), first.epoch.curr);
  EXPECT_EQ(BarrierTimeoutEpoch(absl::UnavailableError(timeout.message())),
            std::nullopt);
  // Past the job's deadline the job's error wins.
  f.clock.AdvanceTime(absl::Seconds(10));
  const absl::Status past = f.coordinator->WaitCollected();
  EXPECT_THAT(
      past,
      StatusIs(absl::StatusCode::kDeadlineExceeded,
               HasSubstr("did not finish within its max_duration of 10s")));
  EXPECT_EQ(BarrierTimeoutEpoch(past), std::nullopt);
}

}  // namespace
}  // namespace backfill
