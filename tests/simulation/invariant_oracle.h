// The oracle of the simulation: CONTRACT §5's invariant for one backfill actor
// after it emitted a barrier, and the whole-view check after every actor
// finished. testonly.
//
//   if (auto d = CheckActorInvariant(table, model_at_prev, view.vnodes(),
//                                    owned, executor.backfill_state())) ...
//
// The invariant: the view restricted to the actor's vnodes equals the
// upstream as of barrier.epoch.prev restricted to {rows of Completed vnodes}
// ∪ {rows with pk <= current_pos (pk order) of InProgress vnodes}; rows of
// NotStarted vnodes are absent.
#ifndef TESTS_SIMULATION_INVARIANT_ORACLE_H_
#define TESTS_SIMULATION_INVARIANT_ORACLE_H_

#include <optional>

#include "executor/backfill/backfill_state.h"
#include "serde/vnode_bitmap.h"
#include "tests/simulation/divergence.h"
#include "tests/simulation/sim_table.h"
#include "tests/simulation/upstream_materialize.h"
#include "tests/simulation/view_model.h"

namespace backfill {
namespace simulation {

// The first row where `view` (restricted to `owned`) differs from what SPEC
// §5 expects of an actor with `state` (every owned vnode must be in it), or
// nullopt.
std::optional<Divergence> CheckActorInvariant(const SimTable& table,
                                              const RowModel& upstream,
                                              const ViewModel::Vnodes& view,
                                              const VnodeBitmap& owned,
                                              const BackfillState& state);

// The first row where `view` differs from the whole of `upstream`.
std::optional<Divergence> CheckWholeView(const SimTable& table,
                                         const RowModel& upstream,
                                         const ViewModel::Vnodes& view);

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_INVARIANT_ORACLE_H_
