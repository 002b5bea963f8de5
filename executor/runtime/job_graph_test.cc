#include "executor/runtime/job_graph.h"

#include <memory>
#include <vector>

#include "executor/runtime/demo/bulk_load.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kInt32, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 10;
  catalog.value_indices = {0, 1};
  return catalog;
}

// Records what the graph reports.
class RecordingListener final : public BarrierListener {
 public:
  void BackfillEmitted(ActorId, const Barrier& barrier, absl::Time) override {
    emitted.push_back(barrier.epoch.curr.value());
  }
  void Collected(const Barrier& barrier) override {
    collected.push_back(barrier.epoch.curr.value());
  }
  void ActorEnded(const Actor& actor) override { ended.push_back(actor.id()); }
  std::vector<ActorId> ended;
  std::vector<uint64_t> emitted;
  std::vector<uint64_t> collected;
};

class NoopWaker final : public Waker {
 public:
  void Wake() override {}
};

TEST(JobGraphTest, BuildsSourceBackfillActorsAndViewForTheJobState) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  StreamingJobOptions options;
  options.upstream = Table();
  options.initial_rows = 50;
  options.parallelism = 2;  // the job state below wins
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  JobState state;
  state.parallelism = 3;
  state.rate_limit = RateLimit::Fixed(90);
  SimulatedClock clock;
  RecordingListener listener;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<JobGraph> graph,
      BuildJobGraph(*store, options, state, {&clock, nullptr, &listener}));
  ASSERT_EQ(graph->actors.size(), 5u);
  EXPECT_EQ(graph->actors.front()->id(), JobGraph::kSourceActor);
  EXPECT_EQ(graph->actors.back()->id(), JobGraph::kViewActor);
  EXPECT_THAT(graph->in_force().actor_ids, ElementsAre(100, 101, 102));
  EXPECT_EQ(graph->actors[1]->id(), 100u);
  EXPECT_THAT(graph->in_force().owned_vnodes,
              ElementsAre(4, 3, 3));  // an even split of 10
  EXPECT_EQ(graph->in_force().tracker->num_actors(), 3u);
  ASSERT_EQ(graph->backfill_sets.size(), 1u);
  EXPECT_EQ(graph->backfill_sets[0]->peak_buffer_bytes.size(), 3u);
  EXPECT_THAT(graph->ActorIds(), UnorderedElementsAre(1, 2, 100, 101, 102));
  ASSERT_NE(graph->source, nullptr);
  ASSERT_NE(graph->dispatcher, nullptr);

  // No threads: one thread polls every actor until the first barrier comes
  // out of the view.
  Barrier first;
  first.epoch = EpochPair{Epoch(store->CommittedEpoch(1).value() + 1),
                          store->CommittedEpoch(1)};
  first.kind = BarrierKind::kInitial;
  first.mutation = std::make_shared<const Mutation>(UpdateMutation{});
  BACKFILL_ASSERT_OK(graph->barriers->Send(first, clock));
  PollContext cx(std::make_shared<NoopWaker>(), clock);
  for (int round = 0; round < 100 && listener.collected.empty(); ++round) {
    for (auto& actor : graph->actors) {
      cx.ResetWakeDeadline();
      actor->Poll(cx);
    }
  }
  EXPECT_THAT(listener.collected, ElementsAre(first.epoch.curr.value()));
  EXPECT_EQ(listener.emitted.size(), 3u);  // once per backfill actor
  for (auto& actor : graph->actors) {
    EXPECT_EQ(actor->state(), Actor::State::kRunning);
  }
  EXPECT_TRUE(listener.ended.empty());
  // Closing the barrier stream ends the source, and so every actor after it,
  // each reported to the listener.
  graph->barriers->Close();
  for (int round = 0; round < 100 && listener.ended.size() < 5; ++round) {
    for (auto& actor : graph->actors) actor->Poll(cx);
  }
  EXPECT_THAT(listener.ended, UnorderedElementsAre(1, 2, 100, 101, 102));
  for (auto& actor : graph->actors) {
    EXPECT_EQ(actor->state(), Actor::State::kEnded);
  }
}

TEST(JobGraphTest, AddBackfillActorsBuildsTheNextSetAndItsUpdate) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  StreamingJobOptions options;
  options.upstream = Table();
  options.initial_rows = 50;
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  JobState state;
  state.parallelism = 3;
  SimulatedClock clock;
  RecordingListener listener;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<JobGraph> graph,
      BuildJobGraph(*store, options, state, {&clock, nullptr, &listener}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      UpdateMutation update,
      AddBackfillActors(*graph, 2, RateLimit::Fixed(100)));
  // The old set is dropped; the new one has the next ids and is in force.
  EXPECT_THAT(update.dropped_actors, UnorderedElementsAre(100, 101, 102));
  EXPECT_THAT(graph->in_force().actor_ids, ElementsAre(103, 104));
  EXPECT_THAT(graph->in_force().owned_vnodes, ElementsAre(5, 5));
  EXPECT_EQ(graph->in_force().tracker->num_actors(), 2u);
  ASSERT_EQ(graph->backfill_sets.size(), 2u);
  EXPECT_EQ(graph->backfill_sets[0]->actors.size(), 3u);
  // Appended after every actor built before (a driver starts them).
  ASSERT_EQ(graph->actors.size(), 7u);
  EXPECT_EQ(graph->actors[5]->id(), 103u);
  EXPECT_EQ(graph->actors[6]->id(), 104u);
  EXPECT_THAT(graph->ActorIds(), UnorderedElementsAre(1, 2, 103, 104));
  // The dispatcher's and the merge's changes, one vnode owner per vnode.
  const DispatcherUpdate& dispatcher =
      update.dispatchers.at(JobGraph::kSourceActor);
  EXPECT_THAT(dispatcher.added_downstream_actors, ElementsAre(103, 104));
  EXPECT_THAT(dispatcher.removed_downstream_actors,
              UnorderedElementsAre(100, 101, 102));
  EXPECT_THAT(dispatcher.vnode_owners,
              ElementsAre(103, 103, 103, 103, 103, 104, 104, 104, 104, 104));
  const MergeUpdate& merge = update.merges.at(JobGraph::kViewActor);
  EXPECT_THAT(merge.added_upstream_actors, ElementsAre(103, 104));
  EXPECT_THAT(merge.removed_upstream_actors, UnorderedElementsAre(100, 101, 102));
  // Their channels wait in the exchange, once each.
  BACKFILL_EXPECT_OK(graph->exchange.TakeReceiver(104, JobGraph::kViewActor).status());
  EXPECT_THAT(graph->exchange.TakeReceiver(104, JobGraph::kViewActor).status(),
              ::backfill::testing::StatusIs(absl::StatusCode::kNotFound));
  BACKFILL_EXPECT_OK(graph->exchange.TakeSender(JobGraph::kSourceActor, 103).status());
}

}  // namespace
}  // namespace backfill
