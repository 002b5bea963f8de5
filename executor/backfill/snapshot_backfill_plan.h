// Building a SnapshotBackfillExecutor from its protobuf plan node, with every
// field validated.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(
//       auto executor,
//       BuildSnapshotBackfillFromPlan(node, store, std::move(input), deps));
// clang-format on
//
// The log and progress tables are created with OpConsistency::kInconsistent
// over their one vnode, as the executor requires.
//
// Errors: InvalidArgument naming the field for any inconsistency (a missing
// table, an unknown or repeated column id, a missing pk column, a vnode
// bitmap of the wrong size, corrupt or empty, an output index out of range,
// a chunk size above 1048576, a log or progress table of the wrong shape, a
// log budget above 64 GiB). Never crashes on a parseable but nonsensical
// node.
#ifndef EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_PLAN_H_
#define EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_PLAN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/snapshot_backfill_executor.h"
#include "executor/executor.h"
#include "storage/state_store.h"

namespace backfill {
namespace proto {
class SnapshotBackfillNode;
}  // namespace proto

// `input` carries the actor's changes (S2) and barriers; `deps` as for the
// arrangement backfill.
absl::StatusOr<std::unique_ptr<SnapshotBackfillExecutor>>
BuildSnapshotBackfillFromPlan(const proto::SnapshotBackfillNode& node,
                              StateStore& store, BoxedExecutor input,
                              const ArrangementBackfillDeps& deps = {});

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_PLAN_H_
