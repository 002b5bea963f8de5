// Downstream back-pressure (ArrangementBackfillOptions::output_ready): a
// backfill whose downstream is full stops reading the snapshot but keeps
// consuming its upstream, so the upstream is never blocked by it.
#include <memory>

#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/channel.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::ScriptedExecutorOptions;
using ::backfill::testing::TestBarrier;

TableCatalog Upstream() {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {0, 1};
  return catalog;
}

TEST(ArrangementBackfillBackpressureTest,
     FullDownstreamPausesSnapshotNotUpstream) {
  auto store = NewMemoryStateStore();
  {  // 40 committed rows at epoch 1.
    StateTableOptions options;
    options.op_consistency = OpConsistency::kInconsistent;
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto table,
        StateTable::Create(Upstream(), *store, VnodeBitmap::All(4), options));
    BACKFILL_ASSERT_OK(table->InitEpoch(EpochPair::ForInitial(Epoch(1))));
    for (int64_t id = 0; id < 40; ++id) {
      BACKFILL_ASSERT_OK(table->Insert(Row{id, std::string("x")}));
    }
    BACKFILL_ASSERT_OK(table->Commit(EpochPair{Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  }
  proto::ArrangementBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(Upstream());
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(Upstream(), 99));
  node.add_upstream_column_ids(1);
  node.add_upstream_column_ids(2);
  node.add_output_indices(0);
  node.add_output_indices(1);
  node.set_chunk_size(4);
  node.set_actor_id(5);
  node.set_fragment_id(6);
  node.set_vnode_bitmap(VnodeBitmap::All(4).Serialize());

  ScriptedExecutorOptions input_options;
  input_options.when_exhausted =
      ScriptedExecutorOptions::WhenExhausted::kPending;
  auto input =
      std::make_unique<ScriptedExecutor>(ExecutorInfo{}, input_options);
  ScriptedExecutor* upstream = input.get();
  upstream->Push(TestBarrier(2, BarrierKind::kInitial));

  bool ready = false;
  int ready_checks = 0;
  ArrangementBackfillDeps deps;
  deps.output_ready = [&](PollContext&) {
    ++ready_checks;
    return ready;
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto executor,
      BuildArrangementBackfillFromPlan(node, *store, std::move(input), deps));
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());

  PollResult first = executor->PollNext(cx);
  ASSERT_TRUE(first.is_ready());
  ASSERT_TRUE(std::holds_alternative<Barrier>(first.message()));

  // Downstream full: no snapshot row, the executor waits (having asked).
  EXPECT_TRUE(executor->PollNext(cx).is_pending());
  EXPECT_GT(ready_checks, 0);

  // Upstream changes are still consumed (buffered for the barrier), so the
  // upstream's channel drains; the barrier still passes.
  upstream->Push(
      testing::StreamChunkFromPretty("I T\n"
                                     "+ 100 new\n"));
  EXPECT_TRUE(executor->PollNext(cx).is_pending());
  upstream->Push(TestBarrier(3));
  bool saw_barrier = false;
  for (int i = 0; i < 10 && !saw_barrier; ++i) {
    PollResult result = executor->PollNext(cx);
    if (result.is_pending()) break;
    ASSERT_TRUE(result.is_ready());
    saw_barrier = std::holds_alternative<Barrier>(result.message());
  }
  EXPECT_TRUE(saw_barrier);

  // Room again: snapshot rows flow.
  ready = true;
  PollResult next = executor->PollNext(cx);
  ASSERT_TRUE(next.is_ready());
  EXPECT_TRUE(std::holds_alternative<StreamChunk>(next.message()));
}

TEST(ChannelTest, PollReadyReportsRoomAndWakesWhenASlotFrees) {
  auto [tx, rx] = MakeChannel({1});
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  EXPECT_TRUE(tx.PollReady(cx));
  BACKFILL_ASSERT_OK(tx.Send(Message(TestBarrier(2)), Clock::Real()));
  EXPECT_FALSE(tx.PollReady(cx));
  ReceiverExecutor receiver(ExecutorInfo{}, std::move(rx));
  BACKFILL_ASSERT_OK(NextMessage(receiver, Clock::Real()).status());
  EXPECT_TRUE(waker->WaitUntil(Clock::Real(), absl::Now() + absl::Seconds(10)));
  EXPECT_TRUE(tx.PollReady(cx));
}

}  // namespace
}  // namespace backfill
