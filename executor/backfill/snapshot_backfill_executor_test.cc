// SnapshotBackfillExecutor against a model upstream: the snapshot-backfill
// oracle at every barrier (the table at E up to the position in the snapshot
// phase, the table at E with a prefix of the log applied in the replay
// phase, the upstream table after the join) under random changes and crashes
// in every phase; the log's budget holding the upstream; the refusal to
// resume at another vnode split.
#include "executor/backfill/snapshot_backfill_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/snapshot_backfill_plan.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::ScriptedExecutorOptions;
using ::backfill::testing::StatusIs;
using ::backfill::testing::TestBarrier;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr int kVnodes = 8;
constexpr TableId kLogTable = 98;
constexpr TableId kMetaTable = 99;
constexpr ActorId kActor = 5;

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

using Model = std::map<int64_t, Row>;

struct Change {
  uint64_t epoch;
  Op op;
  Row row;
};

proto::SnapshotBackfillNode Node(const VnodeBitmap& vnodes, uint32_t chunk_size,
                                 uint64_t budget) {
  proto::SnapshotBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(Upstream());
  node.add_upstream_column_ids(1);
  node.add_upstream_column_ids(2);
  node.add_output_indices(0);
  node.add_output_indices(1);
  node.set_chunk_size(chunk_size);
  node.set_actor_id(kActor);
  node.set_fragment_id(6);
  node.set_vnode_bitmap(vnodes.Serialize());
  *node.mutable_log_table() =
      TableCatalogToProto(SnapshotLogCatalog(Upstream(), {0, 1}, kLogTable));
  *node.mutable_progress_table() =
      TableCatalogToProto(SnapshotMetaCatalog(kMetaTable));
  node.set_log_budget_bytes(budget);
  return node;
}

struct Actor {
  ScriptedExecutor* input = nullptr;
  std::unique_ptr<SnapshotBackfillExecutor> backfill;
};

absl::StatusOr<Actor> MakeActor(StateStore& store, const VnodeBitmap& vnodes,
                                uint32_t chunk_size, uint64_t budget) {
  ScriptedExecutorOptions input_options;
  input_options.when_exhausted =
      ScriptedExecutorOptions::WhenExhausted::kPending;
  auto input =
      std::make_unique<ScriptedExecutor>(ExecutorInfo{}, input_options);
  Actor actor;
  actor.input = input.get();
  BACKFILL_ASSIGN_OR_RETURN(
      actor.backfill,
      BuildSnapshotBackfillFromPlan(Node(vnodes, chunk_size, budget), store,
                                    std::move(input)));
  return actor;
}

// The upstream's writer (all vnodes), applying changes as the model does.
struct Writer {
  std::unique_ptr<StateTable> table;

  static Writer Open(StateStore& store, EpochPair first) {
    StateTableOptions options;
    options.op_consistency = OpConsistency::kInconsistent;
    Writer writer;
    writer.table = *StateTable::Create(Upstream(), store,
                                       VnodeBitmap::All(kVnodes), options);
    EXPECT_TRUE(writer.table->InitEpoch(first).ok());
    return writer;
  }
  void Apply(Op op, const Row& row) {
    if (op == Op::kDelete || op == Op::kUpdateDelete) {
      EXPECT_TRUE(table->Delete(row).ok());
    } else {
      EXPECT_TRUE(table->Insert(row).ok());
    }
  }
};

void ApplyRow(Op op, const Row& row, Model& model) {
  const int64_t id = std::get<int64_t>(row[0]);
  if (op == Op::kDelete || op == Op::kUpdateDelete) {
    model.erase(id);
  } else {
    model[id] = row;
  }
}

// Applies an emitted chunk to the view, checking each op makes sense.
void ApplyToView(const StreamChunk& chunk, Model& view) {
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    Row row = chunk.RowAt(i);
    const int64_t id = std::get<int64_t>(row[0]);
    const bool insert =
        chunk.op(i) == Op::kInsert || chunk.op(i) == Op::kUpdateInsert;
    EXPECT_EQ(view.count(id), insert ? 0u : 1u)
        << OpName(chunk.op(i)) << " of row " << id;
    ApplyRow(chunk.op(i), row, view);
  }
}

// Polls until a barrier comes out (chunks applied to `view`), or the
// executor stays pending.
bool RunToBarrier(SnapshotBackfillExecutor& backfill, Model& view) {
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  int pendings = 0;
  for (int i = 0; i < 1000000; ++i) {
    PollResult result = backfill.PollNext(cx);
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

// Up to `polls` polls while the input is idle: the executor reads or
// replays meanwhile.
void Idle(SnapshotBackfillExecutor& backfill, Model& view, int polls) {
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  for (int i = 0; i < polls; ++i) {
    PollResult result = backfill.PollNext(cx);
    if (!result.is_ready()) return;
    ASSERT_TRUE(std::holds_alternative<StreamChunk>(result.message()));
    ApplyToView(std::get<StreamChunk>(result.message()), view);
  }
}

bool Owned(const VnodeBitmap& vnodes, const StateTable& table, const Row& row) {
  return vnodes.Test(table.ComputeVnode(row));
}

Model Restrict(const Model& model, const VnodeBitmap& vnodes,
               const StateTable& table) {
  Model out;
  for (const auto& [id, row] : model) {
    if (Owned(vnodes, table, row)) out[id] = row;
  }
  return out;
}

bool SameModel(const Model& a, const Model& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [id, row] : a) {
    auto it = b.find(id);
    if (it == b.end() || !RowsEqual(it->second, row)) return false;
  }
  return true;
}

// The oracle, at a barrier with `prev` = epoch.
void CheckOracle(const SnapshotBackfillExecutor& backfill,
                 const StateTable& table, const VnodeBitmap& vnodes,
                 const Model& initial, const std::vector<Change>& history,
                 uint64_t epoch, const Model& view) {
  const uint64_t e = backfill.snapshot_epoch().value();
  Model at_e = initial;
  Model now = initial;
  std::vector<const Change*> log;
  for (const Change& change : history) {
    if (change.epoch <= e) ApplyRow(change.op, change.row, at_e);
    if (change.epoch <= epoch) ApplyRow(change.op, change.row, now);
    if (change.epoch > e && change.epoch <= epoch &&
        Owned(vnodes, table, change.row)) {
      log.push_back(&change);
    }
  }
  at_e = Restrict(at_e, vnodes, table);
  switch (backfill.phase()) {
    case SnapshotBackfillExecutor::Phase::kJoined:
      ASSERT_TRUE(SameModel(view, Restrict(now, vnodes, table)))
          << "joined, the view is not the upstream at " << epoch;
      return;
    case SnapshotBackfillExecutor::Phase::kSnapshot: {
      // A prefix of the table at E in (vnode, pk) order.
      std::vector<std::pair<VirtualNode, int64_t>> order;
      for (const auto& [id, row] : at_e) {
        order.emplace_back(table.ComputeVnode(row), id);
      }
      std::sort(order.begin(), order.end());
      ASSERT_LE(view.size(), order.size());
      for (size_t i = 0; i < view.size(); ++i) {
        const int64_t id = order[i].second;
        ASSERT_TRUE(view.count(id)) << "snapshot prefix misses row " << id;
        ASSERT_TRUE(RowsEqual(view.at(id), at_e.at(id))) << "row " << id;
      }
      return;
    }
    case SnapshotBackfillExecutor::Phase::kReplay: {
      Model expected = at_e;
      if (SameModel(view, expected)) return;
      for (const Change* change : log) {
        ApplyRow(change->op, change->row, expected);
        if (SameModel(view, expected)) return;
      }
      FAIL() << "the view is not the table at E=" << e
             << " with a prefix of the log (" << log.size() << " changes)";
    }
  }
}

struct RunStats {
  int crashes[3] = {0, 0, 0};
  uint64_t peak_log_bytes = 0;
};

void RunSeed(uint32_t seed, RunStats& stats) {
  std::mt19937_64 rng(seed);
  auto store = NewMemoryStateStore();
  const VnodeBitmap vnodes = (seed % 2 == 0)
                                 ? VnodeBitmap::All(kVnodes)
                                 : VnodeBitmap::FromRange(kVnodes, 2, 7);
  const uint32_t chunk_size = 2 + rng() % 6;
  const uint64_t budget = (seed % 3 == 0) ? 0 : 200 + rng() % 3000;
  Model initial;
  {
    Writer loader = Writer::Open(*store, EpochPair::ForInitial(Epoch(1)));
    const int64_t rows = 20 + rng() % 60;
    for (int64_t id = 0; id < rows; ++id) {
      Row row{id, int64_t{0}};
      loader.Apply(Op::kInsert, row);
      initial[id] = row;
    }
    ASSERT_TRUE(loader.table->Commit(EpochPair{Epoch(2), Epoch(1)}).ok());
    ASSERT_TRUE(store->Checkpoint(Epoch(1)).ok());
  }
  std::vector<Change> history;  // committed and in flight
  Model committed_view;
  Model view;
  int64_t next_id = 1000;
  int64_t version = 1;
  bool finished = false;
  int epochs_left = 40;
  for (int attempt = 0; attempt < 12 && !finished; ++attempt) {
    const uint64_t committed =
        store->CommittedEpoch(Upstream().table_id).value();
    // Uncommitted changes are lost with the crash.
    while (!history.empty() && history.back().epoch > committed) {
      history.pop_back();
    }
    view = committed_view;
    Model model = initial;
    for (const Change& change : history) {
      ApplyRow(change.op, change.row, model);
    }
    uint64_t epoch = committed + 1;
    Writer writer =
        Writer::Open(*store, EpochPair{Epoch(epoch), Epoch(committed)});
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        Actor actor, MakeActor(*store, vnodes, chunk_size, budget));
    actor.input->Push(TestBarrier(epoch, BarrierKind::kInitial));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    for (int step = 0; step < 200 && !finished; ++step) {
      // One epoch of changes, in a few chunks.
      const int chunks = epochs_left > 0 ? static_cast<int>(rng() % 3) : 0;
      for (int c = 0; c < chunks; ++c) {
        std::vector<Op> ops;
        std::vector<Row> rows;
        const int n = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < n; ++k) {
          const int kind = static_cast<int>(rng() % 3);
          if (kind == 0 || model.empty()) {
            Row row{next_id++, version++};
            ops.push_back(Op::kInsert);
            rows.push_back(row);
          } else {
            auto it = model.begin();
            std::advance(it, rng() % model.size());
            if (kind == 1) {
              ops.push_back(Op::kDelete);
              rows.push_back(it->second);
            } else {
              ops.push_back(Op::kUpdateDelete);
              rows.push_back(it->second);
              ops.push_back(Op::kUpdateInsert);
              rows.push_back(Row{it->first, version++});
            }
          }
          for (size_t r =
                   rows.size() - (ops.back() == Op::kUpdateInsert ? 2 : 1);
               r < rows.size(); ++r) {
            ApplyRow(ops[r], rows[r], model);
            writer.Apply(ops[r], rows[r]);
            history.push_back({epoch, ops[r], rows[r]});
          }
        }
        // The dispatcher sends the actor its vnodes' rows only.
        std::vector<Op> mine_ops;
        std::vector<Row> mine_rows;
        for (size_t r = 0; r < rows.size(); ++r) {
          if (Owned(vnodes, *writer.table, rows[r])) {
            mine_ops.push_back(ops[r]);
            mine_rows.push_back(rows[r]);
          }
        }
        if (!mine_rows.empty()) {
          actor.input->Push(StreamChunk::FromRows(
              {DataType::kInt64, DataType::kInt64}, mine_ops, mine_rows));
        }
      }
      if (epochs_left > 0) --epochs_left;
      Idle(*actor.backfill, view, static_cast<int>(rng() % 4));
      // The barrier {epoch + 1, epoch}.
      ASSERT_TRUE(
          writer.table->Commit(EpochPair{Epoch(epoch + 1), Epoch(epoch)}).ok());
      actor.input->Push(TestBarrier(epoch + 1));
      ASSERT_TRUE(RunToBarrier(*actor.backfill, view)) << "epoch " << epoch;
      CheckOracle(*actor.backfill, *writer.table, vnodes, initial, history,
                  epoch, view);
      if (::testing::Test::HasFatalFailure()) return;
      stats.peak_log_bytes =
          std::max(stats.peak_log_bytes, actor.backfill->peak_log_bytes());
      // The budget holds the upstream: the log exceeds it by at most one
      // upstream chunk (at most 8 rows of 64 bytes here).
      EXPECT_LE(actor.backfill->peak_log_bytes(), budget + 8 * 64);
      // A crash before the checkpoint, now and then (not in the last
      // attempts, so that every seed ends).
      if (attempt < 8 && rng() % 6 == 0) {
        ++stats.crashes[static_cast<int>(actor.backfill->phase())];
        break;
      }
      ASSERT_TRUE(store->Checkpoint(Epoch(epoch)).ok());
      committed_view = view;
      finished = actor.backfill->is_finished() && epochs_left == 0;
      ++epoch;
    }
  }
  ASSERT_TRUE(finished) << "the backfill did not finish";
  Model model = initial;
  for (const Change& change : history) ApplyRow(change.op, change.row, model);
  auto probe =
      *StateTable::Create(Upstream(), *store, VnodeBitmap::All(kVnodes));
  EXPECT_TRUE(SameModel(view, Restrict(model, vnodes, *probe)));
}

TEST(SnapshotBackfillExecutorTest, OracleHoldsAcrossChangesAndCrashes) {
  const uint32_t base = ::testing::UnitTest::GetInstance()->random_seed();
  std::cout << "seeds " << base << " .. " << base + 59 << "\n";
  RunStats stats;
  for (uint32_t seed = base; seed < base + 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    RunSeed(seed, stats);
    if (HasFatalFailure()) return;
  }
  std::cout << "crashes in the snapshot / replay / joined phase: "
            << stats.crashes[0] << " / " << stats.crashes[1] << " / "
            << stats.crashes[2] << ", peak log bytes " << stats.peak_log_bytes
            << "\n";
  // Crashes landed in every phase.
  EXPECT_GT(stats.crashes[0], 0) << "no crash in the snapshot phase";
  EXPECT_GT(stats.crashes[1], 0) << "no crash in the replay phase";
  EXPECT_GT(stats.crashes[2], 0) << "no crash after the join";
  EXPECT_GT(stats.peak_log_bytes, 0u);
}

// A crash in the snapshot phase, compactions and a new process: the resumed
// snapshot reads E intact, because E's pin is persisted in the store (a pin
// held only by the executor would die with it, and the reopened store would
// refuse the read at E). Every row is updated after E, so a collected E
// would leave no version of it to read.
TEST(SnapshotBackfillExecutorTest, ResumesAtItsPinnedEpochInAReopenedStore) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  RocksDbStateStoreOptions options;
  options.path =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/snapshot_pin_", ::getpid());
  const VnodeBitmap vnodes = VnodeBitmap::All(kVnodes);
  Model initial;
  std::vector<Change> history;
  Model committed_view;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    {
      Writer loader = Writer::Open(*store, EpochPair::ForInitial(Epoch(1)));
      for (int64_t id = 0; id < 40; ++id) {
        Row row{id, int64_t{0}};
        loader.Apply(Op::kInsert, row);
        initial[id] = row;
      }
      BACKFILL_ASSERT_OK(loader.table->Commit(EpochPair{Epoch(2), Epoch(1)}));
      BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    }
    Writer writer = Writer::Open(*store, EpochPair{Epoch(2), Epoch(1)});
    BACKFILL_ASSERT_OK_AND_ASSIGN(Actor actor,
                                MakeActor(*store, vnodes, 4, 1 << 20));
    Model view;
    actor.input->Push(TestBarrier(2, BarrierKind::kInitial));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    std::vector<Op> ops;
    std::vector<Row> rows;
    for (const auto& [id, row] : initial) {
      const Row updated{id, int64_t{2}};
      for (auto [op, r] : {std::pair(Op::kUpdateDelete, row),
                           std::pair(Op::kUpdateInsert, updated)}) {
        ops.push_back(op);
        rows.push_back(r);
        writer.Apply(op, r);
        history.push_back({2, op, r});
      }
    }
    actor.input->Push(
        StreamChunk::FromRows({DataType::kInt64, DataType::kInt64}, ops, rows));
    Idle(*actor.backfill, view, 3);
    BACKFILL_ASSERT_OK(writer.table->Commit(EpochPair{Epoch(3), Epoch(2)}));
    actor.input->Push(TestBarrier(3));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
    ASSERT_EQ(actor.backfill->phase(),
              SnapshotBackfillExecutor::Phase::kSnapshot)
        << view.size() << " rows in the view";
    ASSERT_LT(view.size(), initial.size());
    committed_view = view;
    EXPECT_THAT(store->EpochPins(),
                ElementsAre(Pair(HasSubstr("actor 5"), Epoch(1))));
    BACKFILL_ASSERT_OK(store->Compact());
  }  // The process dies.
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
  BACKFILL_ASSERT_OK(store->Compact());
  Model view = committed_view;
  Writer writer = Writer::Open(*store, EpochPair{Epoch(3), Epoch(2)});
  BACKFILL_ASSERT_OK_AND_ASSIGN(Actor actor,
                                MakeActor(*store, vnodes, 4, 1 << 20));
  actor.input->Push(TestBarrier(3, BarrierKind::kInitial));
  ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
  for (uint64_t epoch = 3; epoch < 60 && !actor.backfill->is_finished();
       ++epoch) {
    Idle(*actor.backfill, view, 2);
    BACKFILL_ASSERT_OK(
        writer.table->Commit(EpochPair{Epoch(epoch + 1), Epoch(epoch)}));
    actor.input->Push(TestBarrier(epoch + 1));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    CheckOracle(*actor.backfill, *writer.table, vnodes, initial, history, epoch,
                view);
    if (HasFatalFailure()) return;
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(epoch)));
  }
  ASSERT_TRUE(actor.backfill->is_finished());
  Model model = initial;
  for (const Change& change : history) ApplyRow(change.op, change.row, model);
  EXPECT_TRUE(SameModel(view, model));
  // The checkpoint of the replay phase released the pin.
  EXPECT_THAT(store->EpochPins(), ::testing::IsEmpty());
}

TEST(SnapshotBackfillExecutorTest, FullLogHoldsTheUpstream) {
  auto store = NewMemoryStateStore();
  {
    Writer loader = Writer::Open(*store, EpochPair::ForInitial(Epoch(1)));
    for (int64_t id = 0; id < 400; ++id)
      loader.Apply(Op::kInsert, Row{id, int64_t{0}});
    ASSERT_TRUE(loader.table->Commit(EpochPair{Epoch(2), Epoch(1)}).ok());
    ASSERT_TRUE(store->Checkpoint(Epoch(1)).ok());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(Actor actor,
                                MakeActor(*store, VnodeBitmap::All(kVnodes), 4,
                                          /*budget=*/100));
  Model view;
  actor.input->Push(TestBarrier(2, BarrierKind::kInitial));
  ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
  // Ten chunks of two inserts (64 bytes a log row) and a barrier wait.
  for (int64_t c = 0; c < 10; ++c) {
    actor.input->Push(StreamChunk::FromRows(
        {DataType::kInt64, DataType::kInt64}, {Op::kInsert, Op::kInsert},
        {Row{1000 + 2 * c, int64_t{1}}, Row{1001 + 2 * c, int64_t{1}}}));
  }
  actor.input->Push(TestBarrier(3));
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  // The log passes its budget with the first chunk; from then on the
  // executor reads the snapshot and leaves its input alone.
  int snapshot_chunks = 0;
  while (actor.backfill->phase() ==
         SnapshotBackfillExecutor::Phase::kSnapshot) {
    PollResult result = actor.backfill->PollNext(cx);
    ASSERT_TRUE(result.is_ready());
    ASSERT_TRUE(std::holds_alternative<StreamChunk>(result.message()));
    ApplyToView(std::get<StreamChunk>(result.message()), view);
    ++snapshot_chunks;
  }
  EXPECT_EQ(snapshot_chunks, 100);
  EXPECT_EQ(actor.input->num_remaining(), 10u);  // 9 chunks, the barrier
  EXPECT_EQ(actor.backfill->log_bytes(), 128u);
  // The replay drains the log, the rest arrives and is forwarded.
  ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
  EXPECT_EQ(actor.backfill->phase(), SnapshotBackfillExecutor::Phase::kJoined);
  EXPECT_TRUE(actor.backfill->is_finished());
  EXPECT_EQ(view.size(), 420u);
  EXPECT_EQ(actor.backfill->peak_log_bytes(), 128u);
}

TEST(SnapshotBackfillExecutorTest, RefusesAnotherVnodeSplit) {
  auto store = NewMemoryStateStore();
  {
    Writer loader = Writer::Open(*store, EpochPair::ForInitial(Epoch(1)));
    loader.Apply(Op::kInsert, Row{int64_t{1}, int64_t{0}});
    ASSERT_TRUE(loader.table->Commit(EpochPair{Epoch(2), Epoch(1)}).ok());
    ASSERT_TRUE(store->Checkpoint(Epoch(1)).ok());
  }
  {
    Writer writer = Writer::Open(*store, EpochPair{Epoch(2), Epoch(1)});
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        Actor actor,
        MakeActor(*store, VnodeBitmap::FromRange(kVnodes, 0, 4), 4, 1000));
    Model view;
    actor.input->Push(TestBarrier(2, BarrierKind::kInitial));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    ASSERT_TRUE(writer.table->Commit(EpochPair{Epoch(3), Epoch(2)}).ok());
    actor.input->Push(TestBarrier(3));
    ASSERT_TRUE(RunToBarrier(*actor.backfill, view));
    ASSERT_TRUE(store->Checkpoint(Epoch(2)).ok());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      Actor actor,
      MakeActor(*store, VnodeBitmap::FromRange(kVnodes, 0, 2), 4, 1000));
  actor.input->Push(TestBarrier(3, BarrierKind::kInitial));
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, Clock::Real());
  ASSERT_TRUE(actor.backfill->PollNext(cx).is_ready());  // the first barrier
  PollResult result = actor.backfill->PollNext(cx);
  ASSERT_TRUE(result.is_error());
  EXPECT_THAT(result.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        HasSubstr("cannot be rescaled")));
}

TEST(SnapshotBackfillExecutorTest, RejectsBadOptions) {
  auto store = NewMemoryStateStore();
  StateTableOptions inconsistent;
  inconsistent.op_consistency = OpConsistency::kInconsistent;
  auto make = [&](std::vector<int> upstream_columns, TableCatalog log_catalog) {
    SnapshotBackfillOptions options;
    options.upstream_columns = upstream_columns;
    options.output_indices = {0};
    return SnapshotBackfillExecutor::Create(
        *store, Upstream(), VnodeBitmap::All(kVnodes),
        std::make_unique<ScriptedExecutor>(ExecutorInfo{}),
        *StateTable::Create(log_catalog, *store, VnodeBitmap::All(1),
                            inconsistent),
        *StateTable::Create(SnapshotMetaCatalog(kMetaTable), *store,
                            VnodeBitmap::All(1), inconsistent),
        nullptr, nullptr, options);
  };
  EXPECT_THAT(
      make({1}, SnapshotLogCatalog(Upstream(), {1}, kLogTable)).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("pk column 0 is missing")));
  EXPECT_THAT(
      make({0, 1}, SnapshotLogCatalog(Upstream(), {0}, kLogTable)).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("log_table")));
  EXPECT_TRUE(
      make({0, 1}, SnapshotLogCatalog(Upstream(), {0, 1}, kLogTable)).ok());
}

TEST(SnapshotBackfillPlanTest, RejectsBadNodes) {
  auto store = NewMemoryStateStore();
  auto build = [&](const proto::SnapshotBackfillNode& node) {
    return BuildSnapshotBackfillFromPlan(
               node, *store, std::make_unique<ScriptedExecutor>(ExecutorInfo{}))
        .status();
  };
  const proto::SnapshotBackfillNode good =
      Node(VnodeBitmap::All(kVnodes), 4, 1000);
  EXPECT_TRUE(build(good).ok());
  proto::SnapshotBackfillNode node = good;
  node.set_upstream_column_ids(1, 9);
  EXPECT_THAT(build(node), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("upstream_column_ids: 9")));
  node = good;
  node.clear_log_table();
  EXPECT_THAT(build(node), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("log_table")));
  node = good;
  node.set_vnode_bitmap(VnodeBitmap::All(4).Serialize());
  EXPECT_THAT(build(node), StatusIs(absl::StatusCode::kInvalidArgument));
  node = good;
  node.add_output_indices(2);
  EXPECT_THAT(build(node), StatusIs(absl::StatusCode::kInvalidArgument));
  node = good;
  node.set_log_budget_bytes(uint64_t{1} << 40);
  EXPECT_THAT(build(node), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("log_budget_bytes")));
}

}  // namespace
}  // namespace backfill
