#include "tests/simulation/hash_dispatcher.h"

#include <cassert>

namespace backfill {
namespace simulation {

HashDispatcher::HashDispatcher(const SimTable& table,
                               std::vector<VnodeBitmap> owned,
                               std::vector<testing::ScriptedExecutor*> outputs,
                               PairSplit split)
    : table_(table),
      owner_(table.catalog().vnode_count, -1),
      outputs_(std::move(outputs)),
      split_(split),
      buffers_(outputs_.size()) {
  for (size_t actor = 0; actor < owned.size(); ++actor) {
    for (VirtualNode vnode : owned[actor].set_vnodes()) {
      assert(owner_[vnode] == -1);
      owner_[vnode] = static_cast<int>(actor);
    }
  }
}

void HashDispatcher::Add(int actor, Op op, const Row& s1) {
  buffers_[actor].emplace_back(op, table_.ToS2(s1));
}

void HashDispatcher::Route(absl::Span<const UpstreamChange> changes) {
  for (size_t i = 0; i < changes.size(); ++i) {
    const UpstreamChange& change = changes[i];
    const int actor = Owner(change.vnode);
    if (change.op != Op::kUpdateDelete) {
      Add(actor, change.op, change.s1);
      continue;
    }
    assert(i + 1 < changes.size() && changes[i + 1].op == Op::kUpdateInsert);
    const UpstreamChange& insert = changes[++i];
    const int insert_actor = Owner(insert.vnode);
    const bool split = split_ == PairSplit::kByActor
                           ? actor != insert_actor
                           : change.vnode != insert.vnode;
    if (split) {
      Add(actor, Op::kDelete, change.s1);
      Add(insert_actor, Op::kInsert, insert.s1);
    } else {
      Add(actor, Op::kUpdateDelete, change.s1);
      Add(actor, Op::kUpdateInsert, insert.s1);
    }
  }
}

void HashDispatcher::Flush(int actor) {
  auto& buffer = buffers_[actor];
  if (buffer.empty()) return;
  std::vector<Op> ops;
  std::vector<Row> rows;
  ops.reserve(buffer.size());
  rows.reserve(buffer.size());
  for (auto& [op, row] : buffer) {
    ops.push_back(op);
    rows.push_back(std::move(row));
  }
  buffer.clear();
  outputs_[actor]->Push(
      StreamChunk::FromRows(table_.s2_types(), std::move(ops), rows));
}

void HashDispatcher::PushPending(int actor, int count) {
  Flush(actor);
  for (int i = 0; i < count; ++i) outputs_[actor]->PushPending();
}

void HashDispatcher::Broadcast(const Barrier& barrier) {
  for (int actor = 0; actor < num_actors(); ++actor) {
    Flush(actor);
    outputs_[actor]->Push(barrier);
  }
}

}  // namespace simulation
}  // namespace backfill
