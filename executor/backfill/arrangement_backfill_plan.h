// Building an ArrangementBackfillExecutor from its protobuf plan node, with
// every field validated.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(
//       auto executor,
//       BuildArrangementBackfillFromPlan(node, store, std::move(upstream), deps));
// clang-format on
//
// Errors: InvalidArgument naming the field for any inconsistency (a pk
// column missing from upstream_column_ids, an output index out of range, a
// distribution key outside the pk, a vnode bitmap of the wrong size or
// corrupt, a progress table of the wrong shape, ...). Never crashes on a
// parseable but nonsensical node.
#ifndef EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_PLAN_H_
#define EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_PLAN_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/executor.h"
#include "storage/state_store.h"

namespace backfill {
namespace proto {
class ArrangementBackfillNode;
}  // namespace proto

// What the plan does not carry: reporting and time.
struct ArrangementBackfillDeps {
  // Both may be null (not reported).
  ProgressReporter* reporter = nullptr;
  BackfillMetrics* metrics = nullptr;
  // Default Clock::Real().
  Clock* clock = nullptr;
  // ArrangementBackfillOptions::output_ready. Default: always ready.
  std::function<bool(PollContext&)> output_ready;
};

absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>>
BuildArrangementBackfillFromPlan(const proto::ArrangementBackfillNode& node,
                                 StateStore& store, BoxedExecutor upstream,
                                 const ArrangementBackfillDeps& deps = {});

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_PLAN_H_
