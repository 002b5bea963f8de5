#include "executor/runtime/one_attempt_for_test.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "executor/runtime/demo/bulk_load.h"
#include "serde/vnode_bitmap.h"
#include "storage/committed_rows.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

OneAttempt RunOneAttemptForTest(
    StateStore& store, const StreamingJobOptions& options, Clock& clock,
    const DriveFn& drive,
    const std::function<absl::Status(StateStore&)>& before_attempt) {
  OneAttempt run;
  run.status = [&]() -> absl::Status {
    BACKFILL_RETURN_IF_ERROR(ValidateStreamingJobOptions(options));
    BACKFILL_RETURN_IF_ERROR(DefineJob(store, options));
    BACKFILL_ASSIGN_OR_RETURN(const bool loaded,
                              LoadInitialRows(store, options));
    if (before_attempt) BACKFILL_RETURN_IF_ERROR(before_attempt(store));
    AttemptStart attempt;
    attempt.creating = loaded;
    attempt.apply_overrides = true;
    attempt.job_start = clock.Now();
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<BarrierCoordinator> coordinator,
                              BarrierCoordinator::Create(
                                  store, options, attempt, clock, &run.result));
    JobGraphContext context;
    context.clock = &clock;
    context.listener = coordinator.get();
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<JobGraph> graph,
        BuildJobGraph(store, options, coordinator->state(), context));
    const absl::Status status = drive(*graph, *coordinator);
    coordinator->RecordAttemptEnd(*graph, status.ok());
    return status;
  }();
  if (!run.status.ok()) return run;
  absl::StatusOr<ViewVerdict> verdict = VerifyView(store, options);
  if (!verdict.ok()) {
    run.status = verdict.status();
    return run;
  }
  run.verdict = std::move(*verdict);
  absl::StatusOr<std::optional<SavedJob>> saved =
      ReadCommittedJob(store, options.job_state_table_id);
  if (!saved.ok()) {
    run.status = saved.status();
    return run;
  }
  run.saved = std::move(*saved);
  return run;
}

absl::Status PlantConflictingViewRow(StateStore& store,
                                     const StreamingJobOptions& options) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<CommittedRowIterator> upstream,
      NewStoreCommittedRowIterator(
          store, options.upstream,
          store.CommittedEpoch(options.upstream.table_id)));
  upstream->SeekToFirst();
  BACKFILL_RETURN_IF_ERROR(upstream->status());
  if (!upstream->Valid()) {
    return absl::FailedPreconditionError("no upstream rows");
  }
  const Row first = ProjectRow(upstream->row(), ViewColumns(options));
  BACKFILL_ASSIGN_OR_RETURN(
      auto view,
      StateTable::Create(ViewCatalog(options), store,
                         VnodeBitmap::All(options.upstream.vnode_count)));
  const Epoch committed =
      std::max(store.CommittedEpoch(options.view_table_id),
               store.CommittedEpoch(options.upstream.table_id));
  const EpochPair epoch{Epoch(committed.value() + 1), committed};
  BACKFILL_RETURN_IF_ERROR(view->InitEpoch(epoch));
  BACKFILL_RETURN_IF_ERROR(view->Insert(first));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_RETURN_IF_ERROR(view->Commit(next));
  return store.Checkpoint(next.prev);
}

}  // namespace backfill
