// HashDispatcher: routes the upstream's changes to the backfill actors by
// vnode, as the hash dispatcher between the upstream materialize and the
// backfill fragment does. Rows are buffered per actor (in S2) and sent as
// one StreamChunk by Flush; barriers are broadcast. A U-/U+ pair stays a
// pair when both halves go to the same actor (or, in kByVnode mode, the same
// vnode); otherwise it becomes Delete + Insert. testonly.
//
//   HashDispatcher dispatcher(table, owners, {input0, input1},
//                             HashDispatcher::PairSplit::kByActor);
//   dispatcher.Route(changes);      // from UpstreamMaterialize
//   dispatcher.Flush(1);            // actor 1 gets a chunk
//   dispatcher.Broadcast(barrier);  // flushes every actor first
#ifndef TESTS_SIMULATION_HASH_DISPATCHER_H_
#define TESTS_SIMULATION_HASH_DISPATCHER_H_

#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "executor/barrier.h"
#include "executor/stream_chunk.h"
#include "executor/testing/scripted_executor.h"
#include "serde/vnode_bitmap.h"
#include "tests/simulation/sim_table.h"
#include "tests/simulation/upstream_materialize.h"

namespace backfill {
namespace simulation {

class HashDispatcher {
 public:
  enum class PairSplit {
    kByActor,  // split a pair whose halves go to different actors
    kByVnode,  // split a pair whose halves are in different vnodes
  };

  // `owned[i]` are the vnodes of actor i, whose input is `outputs[i]`; the
  // bitmaps partition the vnodes. REQUIRES: the outputs outlive the
  // dispatcher (or Reset is called first).
  HashDispatcher(const SimTable& table, std::vector<VnodeBitmap> owned,
                 std::vector<testing::ScriptedExecutor*> outputs,
                 PairSplit split);

  // Routes changes (pairs complete) to the per-actor buffers.
  void Route(absl::Span<const UpstreamChange> changes);
  // Sends actor i's buffered rows as one chunk (no-op if none).
  void Flush(int actor);
  // `count` points where actor i's input has nothing ready.
  void PushPending(int actor, int count);
  // Flushes every actor and sends `barrier` to each.
  void Broadcast(const Barrier& barrier);

  int num_actors() const { return static_cast<int>(outputs_.size()); }
  // The actor owning `vnode`.
  int Owner(VirtualNode vnode) const { return owner_.at(vnode); }
  bool has_buffered(int actor) const { return !buffers_[actor].empty(); }

 private:
  void Add(int actor, Op op, const Row& s1);

  const SimTable& table_;
  std::vector<int> owner_;  // by vnode
  std::vector<testing::ScriptedExecutor*> outputs_;
  PairSplit split_;
  std::vector<std::vector<std::pair<Op, Row>>> buffers_;  // S2 rows
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_HASH_DISPATCHER_H_
