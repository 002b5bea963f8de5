// NoShuffleBackfillExecutor beside its writer (the runtime's
// MaterializeExecutor over the upstream table): CONTRACT §5's invariant at
// every barrier under random changes, crashes and restarts from the
// persisted position, and the refusal to resume at another vnode split.
#include "executor/backfill/no_shuffle_backfill_executor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "executor/backfill/no_shuffle_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/runtime/materialize_executor.h"
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
using ::backfill::testing::StatusIs;
using ::backfill::testing::TestBarrier;
using ::testing::HasSubstr;

constexpr int kVnodes = 8;
constexpr TableId kProgressTable = 99;

TableCatalog Upstream() {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kInt64, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = kVnodes;
  catalog.value_indices = {0, 1};
  return catalog;
}

VnodeBitmap Vnodes(int first, int end) {
  return VnodeBitmap::FromRange(kVnodes, first, end);
}

// One actor: a scripted change stream -> the writer -> the backfill.
struct Actor {
  ScriptedExecutor* input = nullptr;
  std::unique_ptr<NoShuffleBackfillExecutor> backfill;
  StateTable* table = nullptr;
};

absl::StatusOr<Actor> MakeActor(StateStore& store, const VnodeBitmap& vnodes,
                                uint32_t chunk_size) {
  ScriptedExecutorOptions input_options;
  input_options.when_exhausted =
      ScriptedExecutorOptions::WhenExhausted::kPending;
  auto input =
      std::make_unique<ScriptedExecutor>(ExecutorInfo{}, input_options);
  Actor actor;
  actor.input = input.get();
  absl::StatusOr<std::unique_ptr<StateTable>> table =
      StateTable::Create(Upstream(), store, vnodes);
  if (!table.ok()) return table.status();
  actor.table = table->get();
  auto writer = std::make_unique<MaterializeExecutor>(
      std::move(input), std::move(*table), ExecutorInfo{});
  proto::NoShuffleBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(Upstream());
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(Upstream(), kProgressTable));
  node.add_output_indices(0);
  node.add_output_indices(1);
  node.set_chunk_size(chunk_size);
  node.set_actor_id(5);
  node.set_fragment_id(6);
  node.set_vnode_bitmap(vnodes.Serialize());
  absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>> backfill =
      BuildNoShuffleBackfillFromPlan(node, store, *actor.table,
                                     std::move(writer));
  if (!backfill.ok()) return backfill.status();
  actor.backfill = std::move(*backfill);
  return actor;
}

// Loads rows 0..n-1 (v = 0) at epoch 1.
void LoadRows(StateStore& store, int64_t n, std::map<int64_t, Row>& model) {
  StateTableOptions options;
  options.op_consistency = OpConsistency::kInconsistent;
  auto table =
      StateTable::Create(Upstream(), store, VnodeBitmap::All(kVnodes), options);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE((*table)->InitEpoch(EpochPair::ForInitial(Epoch(1))).ok());
  for (int64_t id = 0; id < n; ++id) {
    Row row{id, int64_t{0}};
    ASSERT_TRUE((*table)->Insert(row).ok());
    model[id] = row;
  }
  ASSERT_TRUE((*table)->Commit(EpochPair{Epoch(2), Epoch(1)}).ok());
  ASSERT_TRUE(store.Checkpoint(Epoch(1)).ok());
}

void ApplyToView(const StreamChunk& chunk, std::map<int64_t, Row>& view) {
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    Row row = chunk.RowAt(i);
    const int64_t id = std::get<int64_t>(row[0]);
    switch (chunk.op(i)) {
      case Op::kInsert:
      case Op::kUpdateInsert:
        EXPECT_EQ(view.count(id), 0u) << "row " << id << " sent twice";
        view[id] = row;
        break;
      case Op::kDelete:
      case Op::kUpdateDelete:
        EXPECT_EQ(view.count(id), 1u) << "delete of a row not sent: " << id;
        view.erase(id);
        break;
    }
  }
}

// Polls until a barrier comes out (applying chunks to `view`), or the
// executor stays pending. Returns whether a barrier came out.
bool RunToBarrier(NoShuffleBackfillExecutor& backfill,
                  std::map<int64_t, Row>& view) {
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  int pendings = 0;
  for (int i = 0; i < 100000; ++i) {
    PollResult result = backfill.PollNext(cx);
    // A scripted pause of the upstream, or the script ran out.
    if (result.is_pending()) {
      if (++pendings > 100) return false;
      continue;
    }
    EXPECT_TRUE(result.is_ready()) << result.status();
    if (!result.is_ready()) return false;
    if (std::holds_alternative<Barrier>(result.message())) return true;
    if (const auto* chunk = std::get_if<StreamChunk>(&result.message())) {
      ApplyToView(*chunk, view);
    }
  }
  return false;
}

// The §5 invariant with one shared position.
void CheckInvariant(const NoShuffleBackfillExecutor& backfill,
                    const StateTable& table,
                    const std::map<int64_t, Row>& model,
                    const std::map<int64_t, Row>& view) {
  std::map<int64_t, Row> expected;
  for (const auto& [id, row] : model) {
    if (!table.vnodes().Test(table.ComputeVnode(row))) continue;
    const std::optional<Row>& pos = backfill.position();
    const bool sent =
        backfill.is_finished() ||
        (pos.has_value() && id <= std::get<int64_t>((*pos)[0]));
    if (sent) expected[id] = row;
  }
  ASSERT_EQ(view.size(), expected.size());
  for (const auto& [id, row] : expected) {
    ASSERT_TRUE(view.count(id)) << "missing row " << id;
    EXPECT_TRUE(RowsEqual(view.at(id), row)) << "stale row " << id;
  }
}

TEST(NoShuffleBackfillExecutorTest, InvariantHoldsAcrossChangesAndCrashes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937_64 rng(seed);
    auto store = NewMemoryStateStore();
    std::map<int64_t, Row> model;
    LoadRows(*store, 200, model);
    const VnodeBitmap vnodes = Vnodes(0, kVnodes / 2);
    std::map<int64_t, Row> view;
    std::map<int64_t, Row> committed_view;
    std::map<int64_t, Row> committed_model = model;
    uint64_t epoch = 2;
    int64_t version = 1;
    bool finished = false;
    for (int attempt = 0; attempt < 4 && !finished; ++attempt) {
      view = committed_view;
      model = committed_model;
      BACKFILL_ASSERT_OK_AND_ASSIGN(
          Actor actor, MakeActor(*store, vnodes, 2 + rng() % 8));
      const Epoch committed = store->CommittedEpoch(Upstream().table_id);
      epoch = committed.value() + 1;
      actor.input->Push(TestBarrier(epoch, BarrierKind::kInitial));
      ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
      const int epochs = attempt == 3 ? 1000 : 2 + static_cast<int>(rng() % 6);
      for (int e = 0; e < epochs && !finished; ++e) {
        // A few change chunks, with room for snapshot reads between them.
        for (int c = 0; c < static_cast<int>(rng() % 4); ++c) {
          std::vector<Op> ops;
          std::vector<Row> rows;
          for (int r = 0; r < 3; ++r) {
            const int64_t id = static_cast<int64_t>(rng() % 300);
            Row fresh{id, version++};
            if (!vnodes.Test(actor.table->ComputeVnode(fresh))) continue;
            bool seen = false;
            for (const Row& row : rows) seen |= std::get<int64_t>(row[0]) == id;
            if (seen) continue;
            auto it = model.find(id);
            if (it == model.end()) {
              ops.push_back(Op::kInsert);
              rows.push_back(fresh);
              model[id] = fresh;
            } else if (rng() % 2 == 0) {
              ops.push_back(Op::kDelete);
              rows.push_back(it->second);
              model.erase(it);
            } else {
              ops.push_back(Op::kUpdateDelete);
              rows.push_back(it->second);
              ops.push_back(Op::kUpdateInsert);
              rows.push_back(fresh);
              it->second = fresh;
            }
          }
          if (rows.empty()) continue;
          actor.input->Push(StreamChunk::FromRows(
              {DataType::kInt64, DataType::kInt64}, std::move(ops), rows));
          actor.input->PushPending();
        }
        actor.input->Push(TestBarrier(epoch + 1));
        ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
        CheckInvariant(*actor.backfill, *actor.table, model, view);
        // The last epoch of an attempt may crash before its checkpoint: the
        // next attempt resumes from the one before.
        if (e + 1 == epochs && attempt < 3 && rng() % 2 == 0) break;
        ASSERT_THAT(store->Checkpoint(Epoch(epoch)), testing::IsOk());
        ++epoch;
        committed_view = view;
        committed_model = model;
        finished = actor.backfill->is_finished();
      }
    }
    EXPECT_TRUE(finished);
  }
}

TEST(NoShuffleBackfillExecutorTest, ResumingAtAnotherSplitIsRefused) {
  auto store = NewMemoryStateStore();
  std::map<int64_t, Row> model;
  LoadRows(*store, 100, model);
  // Two actors, each reads a chunk at its own pace: their positions differ.
  std::map<int64_t, Row> view;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(Actor left, MakeActor(*store, Vnodes(0, 4), 3));
    BACKFILL_ASSERT_OK_AND_ASSIGN(Actor right,
                                  MakeActor(*store, Vnodes(4, 8), 5));
    for (Actor* actor : {&left, &right}) {
      actor->input->Push(TestBarrier(2, BarrierKind::kInitial));
      ASSERT_TRUE(RunToBarrier(*actor->backfill, view));
      actor->input->Push(TestBarrier(3));
      ASSERT_TRUE(RunToBarrier(*actor->backfill, view));
    }
    ASSERT_NE(left.backfill->position()->at(0),
              right.backfill->position()->at(0));
    ASSERT_THAT(store->Checkpoint(Epoch(2)), testing::IsOk());
  }
  // One actor over all eight vnodes: refused.
  BACKFILL_ASSERT_OK_AND_ASSIGN(Actor merged, MakeActor(*store, Vnodes(0, 8), 4));
  merged.input->Push(TestBarrier(3, BarrierKind::kInitial));
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  ASSERT_TRUE(merged.backfill->PollNext(cx).is_ready());  // the barrier
  PollResult result = merged.backfill->PollNext(cx);
  ASSERT_TRUE(result.is_error());
  EXPECT_THAT(result.status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot be rescaled")));
}

TEST(NoShuffleBackfillExecutorTest, PlanMustDescribeTheWritersTable) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table, StateTable::Create(Upstream(), *store, Vnodes(0, 4)));
  proto::NoShuffleBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(Upstream());
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(Upstream(), kProgressTable));
  node.add_output_indices(0);
  node.set_vnode_bitmap(Vnodes(0, 8).Serialize());
  auto input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  EXPECT_THAT(BuildNoShuffleBackfillFromPlan(node, *store, *table,
                                             std::move(input))
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not the writer's vnodes")));
  node.set_vnode_bitmap(Vnodes(0, 4).Serialize());
  node.add_output_indices(2);
  input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  EXPECT_THAT(BuildNoShuffleBackfillFromPlan(node, *store, *table,
                                             std::move(input))
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("output_indices[1] = 2 is out of range")));
  node.clear_output_indices();
  node.add_output_indices(1);
  TableCatalog other = Upstream();
  other.table_id = 8;
  *node.mutable_upstream_table() = TableCatalogToProto(other);
  input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  EXPECT_THAT(BuildNoShuffleBackfillFromPlan(node, *store, *table,
                                             std::move(input))
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not the writer's table")));
}

}  // namespace
}  // namespace backfill
