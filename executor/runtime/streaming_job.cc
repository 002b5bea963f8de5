#include "executor/runtime/streaming_job.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/demo/bulk_load.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/recovery_policy.h"
#include "executor/runtime/threaded_driver.h"
#include "executor/runtime/verifier.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// One run of the actor graph from the last checkpoint until the job ends or
// an actor fails. Nothing it makes on the store survives it.
absl::Status RunAttempt(StateStore& store, const StreamingJobOptions& options,
                        Registry* registry, AttemptStart attempt, Clock& clock,
                        const AttemptDriver& driver,
                        const PlacementFactory& make_placement,
                        JobResult& result, bool* rescheduled) {
  const bool creating = attempt.creating;
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<BarrierCoordinator> coordinator,
      BarrierCoordinator::Create(store, options, std::move(attempt), clock,
                                 &result));
  JobGraphContext context;
  context.clock = &clock;
  context.registry = registry;
  context.listener = coordinator.get();
  JobState built_for = coordinator->state();
  if (options.sabotage_for_test.forget_rate_limit_at_recovery && !creating) {
    built_for.paused = false;
    built_for.rate_limit = options.rate_limit;
  }
  // Declared after the coordinator: the remote actors report to it until
  // they go.
  std::unique_ptr<AttemptPlacement> placement;
  if (make_placement) {
    BACKFILL_ASSIGN_OR_RETURN(placement, make_placement(built_for));
    context.remote = placement.get();
  }
  // Declared after the coordinator: the actors report to it until they go.
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<JobGraph> graph,
                            BuildJobGraph(store, options, built_for, context));
  absl::Status status;
  if (placement != nullptr) {
    status = placement->StartRemote(built_for, *graph, *coordinator);
  }
  if (status.ok()) status = driver(*graph, *coordinator);
  if (placement != nullptr) {
    // The local actors ended, so every edge to the remote ones did.
    const absl::Status remote = placement->EndRemote();
    if (status.ok()) status = remote;
  }
  coordinator->RecordAttemptEnd(*graph, status.ok());
  *rescheduled = status.ok() && coordinator->rescheduled();
  if (*rescheduled && options.on_reschedule) {
    options.on_reschedule(coordinator->reschedule_reason());
  }
  return status;
}

// The store a job runs on, across reopens: every reopen must keep the
// checkpoints the previous store acknowledged.
class JobStore {
 public:
  JobStore(StateStore& store, const StreamingJobOptions& options)
      : options_(options),
        current_(&store),
        acknowledged_(store.CommittedEpoch(options.upstream.table_id)) {}

  StateStore& get() { return *current_; }

  // Closes and reopens the store (options.reopen_store); OK without it.
  // Errors: the reopen's ("reopening the state store: ..."); DataLoss if the
  // reopened store lost an acknowledged checkpoint.
  absl::Status Reopen() {
    if (!options_.reopen_store) return absl::OkStatus();
    if (current_ != nullptr) {
      acknowledged_ = std::max(
          acknowledged_, current_->CommittedEpoch(options_.upstream.table_id));
    }
    current_ = nullptr;  // The reopen closes it.
    absl::StatusOr<StateStore*> reopened = options_.reopen_store();
    if (!reopened.ok()) {
      return absl::Status(reopened.status().code(),
                          absl::StrCat("reopening the state store: ",
                                       reopened.status().message()));
    }
    current_ = *reopened;
    const Epoch committed =
        current_->CommittedEpoch(options_.upstream.table_id);
    if (committed < acknowledged_) {
      return absl::DataLossError(absl::StrCat(
          "the reopened state store lost acknowledged checkpoints: its "
          "committed epoch is ",
          committed.value(), ", but checkpoint ", acknowledged_.value(),
          " had been acknowledged"));
    }
    return absl::OkStatus();
  }

 private:
  const StreamingJobOptions& options_;
  StateStore* current_;
  // The newest checkpoint a store acknowledged.
  Epoch acknowledged_;
};

// Whether `table` has a committed row in one of its first `vnode_count`
// vnodes.
absl::StatusOr<bool> HasCommittedRows(StateStore& store, TableId table,
                                      int vnode_count) {
  const Epoch committed = store.CommittedEpoch(table);
  for (int v = 0; v < vnode_count; ++v) {
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<StateStoreIterator> it,
        store.NewIterator(table, static_cast<VirtualNode>(v), PkRange::All(),
                          committed));
    it->SeekToFirst();
    BACKFILL_RETURN_IF_ERROR(it->status());
    if (it->Valid()) return true;
  }
  return false;
}

// A snapshot backfill keeps its progress in its own tables, the other kinds
// in the per-vnode progress table: a rerun that switches between the two
// over saved progress would backfill again into a view that already holds
// rows. FailedPrecondition then (OK when no progress of the other side is
// saved); storage errors as they are.
absl::Status CheckSavedProgressKind(StateStore& store,
                                    const StreamingJobOptions& options) {
  const bool snapshot = options.backfill_kind == BackfillKind::kSnapshot;
  // The snapshot tables' ids are checked distinct only for that kind: one
  // that is another table of this job holds no snapshot progress.
  for (TableId id : {options.upstream.table_id, options.view_table_id,
                     options.progress_table_id, options.source_offset_table_id,
                     options.job_state_table_id}) {
    if (!snapshot && id == options.snapshot_meta_table_id) {
      return absl::OkStatus();
    }
  }
  BACKFILL_ASSIGN_OR_RETURN(
      const bool other,
      snapshot ? HasCommittedRows(store, options.progress_table_id,
                                  options.upstream.vnode_count)
               : HasCommittedRows(store, options.snapshot_meta_table_id, 1));
  if (!other) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the saved backfill progress is of ",
      snapshot ? "an arrangement or no_shuffle" : "a snapshot", " backfill: a ",
      BackfillKindName(options.backfill_kind),
      " backfill cannot resume it (rerun with the kind it was started "
      "with: the scenario's backfill.kind, or //tools:backfill's --kind)"));
}

}  // namespace

absl::StatusOr<JobResult> RunStreamingJob(
    StateStore& store, const StreamingJobOptions& options, Registry* registry,
    std::function<void(const JobProgress&)> observer, Clock& clock) {
  return RunStreamingJobWithDriver(
      store, options, registry, std::move(observer), clock,
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        return RunThreaded(graph, coordinator, options.barrier_interval, clock);
      });
}

absl::StatusOr<JobResult> RunStreamingJobWithDriver(
    StateStore& store, const StreamingJobOptions& options, Registry* registry,
    std::function<void(const JobProgress&)> observer, Clock& clock,
    const AttemptDriver& driver, const PlacementFactory& placement) {
  BACKFILL_RETURN_IF_ERROR(ValidateStreamingJobOptions(options));
  const JobDefinition definition = JobDefinitionOf(options);
  const absl::Time start = clock.Now();
  JobResult result;
  result.parallelism =
      options.overrides.parallelism.value_or(options.parallelism);
  JobStore job_store(store, options);
  RecoveryPolicy policy(options, start);
  // Decides whether to retry after `error`; if so logs it, backs off,
  // reopens the store and checks that it kept every acknowledged
  // checkpoint. Returns the error to give up with otherwise.
  auto recover = [&](absl::Status error) -> absl::Status {
    while (true) {
      BACKFILL_RETURN_IF_ERROR(policy.BeginRecovery(error));
      result.recoveries = policy.recoveries();
      if (options.on_recovery) options.on_recovery(error, result.recoveries);
      BACKFILL_ASSIGN_OR_RETURN(const absl::Duration backoff,
                                policy.Backoff(error, clock.Now()));
      clock.SleepUntil(clock.Now() + backoff);
      error = job_store.Reopen();
      if (error.ok() || error.code() == absl::StatusCode::kDataLoss) {
        return error;
      }
    }
  };
  // The job's catalog row first: a store that holds another job is refused
  // before anything of this job is read or written (its tables would not
  // decode as this job's); a new job is defined before its bulk load.
  while (true) {
    absl::StatusOr<std::optional<SavedJob>> saved =
        ReadCommittedJob(job_store.get(), options.job_state_table_id);
    absl::Status status = saved.status();
    if (saved.ok() && saved->has_value()) {
      // Not retried: another job's directory stays another job's.
      BACKFILL_RETURN_IF_ERROR(CheckSameJob((*saved)->definition, definition));
      // Nor is a no-shuffle or snapshot backfill resumed at another
      // parallelism: its actors' positions (and a snapshot backfill's logs)
      // belong to their vnode split.
      const uint32_t saved_parallelism = (*saved)->state.parallelism;
      if (!BackfillKindRescales(options.backfill_kind) &&
          options.overrides.parallelism.value_or(saved_parallelism) !=
              saved_parallelism) {
        return absl::FailedPreconditionError(absl::StrCat(
            "a ", BackfillKindName(options.backfill_kind),
            " backfill cannot resume at another parallelism: it runs at ",
            saved_parallelism, ", asked for ", *options.overrides.parallelism,
            " (its positions are per actor, one for all of the actor's "
            "vnodes)"));
      }
      status = CheckSavedProgressKind(job_store.get(), options);
      if (status.code() == absl::StatusCode::kFailedPrecondition) {
        return status;
      }
    } else if (saved.ok()) {
      status = DefineJob(job_store.get(), options);
    }
    if (status.ok()) break;
    BACKFILL_RETURN_IF_ERROR(recover(absl::Status(
        status.code(), absl::StrCat("job state: ", status.message()))));
  }
  // The bulk load (idempotent: rows are a function of their key).
  bool creating = false;
  while (true) {
    absl::StatusOr<bool> loaded = LoadInitialRows(job_store.get(), options);
    if (loaded.ok()) {
      creating = *loaded;
      break;
    }
    BACKFILL_RETURN_IF_ERROR(recover(
        absl::Status(loaded.status().code(),
                     absl::StrCat("bulk load: ", loaded.status().message()))));
  }
  // The overrides apply until a checkpoint of this run has persisted them
  // (every coordinator checkpoint writes the job state in force).
  const Epoch run_start =
      job_store.get().CommittedEpoch(options.upstream.table_id);
  while (true) {
    const uint64_t checkpoints_before = result.checkpoints;
    AttemptStart attempt;
    attempt.creating = creating;
    attempt.apply_overrides =
        job_store.get().CommittedEpoch(options.upstream.table_id) <= run_start;
    attempt.job_start = start;
    attempt.observer = observer;
    bool rescheduled = false;
    const absl::Status status =
        RunAttempt(job_store.get(), options, registry, attempt, clock, driver,
                   placement, result, &rescheduled);
    if (status.ok() && rescheduled) {
      // Ended at a checkpoint on request: the next attempt starts from it
      // at once (no back-off, nothing redone, not a recovery).
      ++result.reschedules;
      creating = false;
      policy.AttemptProgressed();
      continue;
    }
    if (status.ok()) break;
    // A recovery restarts an existing job, even if this attempt created it.
    creating = false;
    // An attempt that got a checkpoint through ends a run of failures.
    if (result.checkpoints > checkpoints_before) policy.AttemptProgressed();
    BACKFILL_RETURN_IF_ERROR(recover(status));
  }
  policy.AttemptProgressed();
  result.seconds = absl::ToDoubleSeconds(clock.Now() - start);
  const double snapshot_seconds =
      result.backfill_seconds.value_or(result.seconds);
  if (snapshot_seconds > 0) {
    result.snapshot_rows_per_second =
        static_cast<double>(result.snapshot_rows_this_run) / snapshot_seconds;
  }
  // Verify: the view equals the table projected to the output columns. The
  // reads are retried like the job (a failed read says nothing about the
  // data).
  while (true) {
    absl::StatusOr<ViewVerdict> verdict = VerifyView(job_store.get(), options);
    if (verdict.ok()) {
      result.upstream_rows = verdict->upstream_rows;
      result.view_rows = verdict->view_rows;
      result.consistent = verdict->consistent;
      result.mismatch = std::move(verdict->mismatch);
      break;
    }
    BACKFILL_RETURN_IF_ERROR(recover(absl::Status(
        verdict.status().code(),
        absl::StrCat("verification: ", verdict.status().message()))));
  }
  return result;
}

}  // namespace backfill
