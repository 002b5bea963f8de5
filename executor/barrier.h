// Barrier: the epoch marker that flows through every stream, and the
// configuration changes (mutations) it may carry.
//
// clang-format off
//   Barrier barrier{.epoch = EpochPair{Epoch(3), Epoch(2)},
//                   .kind = BarrierKind::kCheckpoint,
//                   .mutation = std::make_shared<const Mutation>(PauseMutation{})};
//   if (barrier.IsStopFor(actor_id)) { /* the actor exits after emitting it */ }
// clang-format on
//
// Data before a barrier belongs to `epoch.prev`, data after it to
// `epoch.curr` (see storage/epoch.h). Only the mutations the backfill
// executor reacts to are modelled (docs/CONTRACT.md §9); their fields say which.
//
// Thread-safety: plain values.
#ifndef EXECUTOR_BARRIER_H_
#define EXECUTOR_BARRIER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "serde/vnode.h"
#include "storage/epoch.h"

namespace backfill {

// Identifies one actor (one parallel instance of a fragment).
using ActorId = uint32_t;
// Identifies one fragment (a stage of a job's plan, run by several actors).
using FragmentId = uint32_t;

// First barrier of a newly created job.
struct AddMutation {
  // Start the whole graph paused (global pause).
  bool pause = false;
  // Backfill fragments that must wait for StartFragmentBackfill (backfill
  // ordering): they start paused.
  std::set<FragmentId> backfill_fragments_to_pause = {};
  // Actors created by this barrier.
  std::set<ActorId> added_actors = {};
};

// Rescheduling: how one actor's hash dispatcher changes at an Update
// barrier. The barrier itself goes to the old and the added outputs (it is
// the added actors' first barrier); what follows it goes to the actors of
// `vnode_owners` only. The channels to the added actors come from the
// runtime (executor/runtime/exchange.h), not from the barrier.
struct DispatcherUpdate {
  // Downstream actors that receive this barrier as their first.
  std::vector<ActorId> added_downstream_actors = {};
  // Downstream actors that receive this barrier as their last.
  std::set<ActorId> removed_downstream_actors = {};
  // The downstream actor of each vnode after the barrier (index = vnode).
  std::vector<ActorId> vnode_owners = {};
};

// Rescheduling: how one actor's merge changes at an Update barrier. The
// removed inputs deliver this barrier as their last message; the added ones
// as their first, and the merge aligns it across both before it emits it.
struct MergeUpdate {
  std::vector<ActorId> added_upstream_actors = {};
  std::set<ActorId> removed_upstream_actors = {};
};

// First barrier of rescheduled or rebuilt actors; also carries in-place
// changes to running actors.
struct UpdateMutation {
  // Actors removed by this barrier: each stops after emitting it
  // (Barrier::IsStopFor).
  std::set<ActorId> dropped_actors = {};
  // In-place vnode reassignments: actor -> its new vnodes. The backfill
  // executor never expects one for itself (rescheduling rebuilds actors) and
  // treats one as an error.
  std::map<ActorId, std::vector<VirtualNode>> vnode_assignments = {};
  // Rescheduling (an online rescale): upstream actor -> how its dispatcher's
  // outputs change; downstream actor -> how its merge's inputs change.
  std::map<ActorId, DispatcherUpdate> dispatchers = {};
  std::map<ActorId, MergeUpdate> merges = {};
};

// Global pause: sources stop and backfill snapshot reading stops.
struct PauseMutation {};
// Undoes PauseMutation.
struct ResumeMutation {};

// Changes rate limits online. Entries for other fragments are ignored.
struct ThrottleMutation {
  // fragment -> new backfill rate limit in rows per second; nullopt =
  // Disabled (no limit), 0 = Pause.
  std::map<FragmentId, std::optional<uint32_t>> rate_limits = {};
  // actor -> its share of a job-wide limit (CONTRACT §7: a job-wide limit is
  // split among actors by their share of vnodes still to backfill). An
  // entry here takes precedence over the actor's fragment entry.
  std::map<ActorId, std::optional<uint32_t>> actor_rate_limits = {};
};

// Backfill ordering: these fragments, if paused by AddMutation, may start.
struct StartFragmentBackfillMutation {
  std::set<FragmentId> fragment_ids = {};
};

// Drop or cancel: these actors stop after emitting the barrier.
struct StopMutation {
  std::set<ActorId> actors = {};
};

using Mutation =
    std::variant<AddMutation, UpdateMutation, PauseMutation, ResumeMutation,
                 ThrottleMutation, StartFragmentBackfillMutation, StopMutation>;

// "Add{pause=false, backfill_fragments_to_pause=[3], added_actors=[7, 8]}",
// "Pause", "Throttle{3: 100, 4: disabled}", ...
std::string MutationDebugString(const Mutation& mutation);

struct Barrier {
  EpochPair epoch = {};
  BarrierKind kind = BarrierKind::kBarrier;
  // Shared and immutable: a barrier is copied to every output of a
  // dispatcher, and the mutation (possibly large) is shared, as RisingWave
  // shares it with an Arc. Null: no mutation.
  std::shared_ptr<const Mutation> mutation = nullptr;
  // Debug information: the actors this barrier passed through, appended by
  // the runtime; never interpreted.
  std::vector<ActorId> passed_actors = {};

  // Only checkpoint barriers make the data of `epoch.prev` durable.
  bool is_checkpoint() const { return kind == BarrierKind::kCheckpoint; }
  // True iff the mutation is a StopMutation naming `actor`, or an
  // UpdateMutation dropping it.
  bool IsStopFor(ActorId actor) const;
  // The mutation as `T`, or nullptr when there is none or it is another kind.
  // Valid while the barrier is alive and unmodified.
  template <typename T>
  const T* MutationAs() const {
    return mutation != nullptr ? std::get_if<T>(mutation.get()) : nullptr;
  }

  // "Barrier{epoch {curr 3, prev 2}, checkpoint, Pause}".
  std::string DebugString() const;
};

// "initial", "barrier", "checkpoint".
const char* BarrierKindName(BarrierKind kind);

}  // namespace backfill

#endif  // EXECUTOR_BARRIER_H_
