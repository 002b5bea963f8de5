// Building a NoShuffleBackfillExecutor from its protobuf plan node, with
// every field validated, beside its upstream writer.
//
// clang-format off
//   // `writer` writes `writer_table` (the upstream table, the actor's vnodes).
//   BACKFILL_ASSIGN_OR_RETURN(
//       auto executor,
//       BuildNoShuffleBackfillFromPlan(node, store, writer_table,
//                                      std::move(writer), deps));
// clang-format on
//
// Errors: InvalidArgument naming the field for any inconsistency (a missing
// table, an upstream catalog other than the writer table's, a vnode bitmap of
// the wrong size, corrupt, empty or other than the writer table's vnodes, an
// output index out of range, a chunk size above 1048576, a progress table
// of the wrong shape). Never crashes on a parseable but nonsensical node.
#ifndef EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_PLAN_H_
#define EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_PLAN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/no_shuffle_backfill_executor.h"
#include "executor/executor.h"
#include "storage/state_store.h"
#include "storage/state_table.h"

namespace backfill {
namespace proto {
class NoShuffleBackfillNode;
}  // namespace proto

// `writer_table` is the upstream writer's table instance, owned by `writer`
// (which the executor then owns); `deps` as for the arrangement backfill.
absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>>
BuildNoShuffleBackfillFromPlan(const proto::NoShuffleBackfillNode& node,
                               StateStore& store, StateTable& writer_table,
                               BoxedExecutor writer,
                               const ArrangementBackfillDeps& deps = {});

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_PLAN_H_
