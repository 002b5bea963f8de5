// Backfill progress reporting (CONTRACT §8): a ProgressReporter per
// backfill actor sends events to a job-wide JobProgressTracker, which knows
// when the whole job's backfill is done.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(auto tracker,
//                             JobProgressTracker::Create({{7, 128}, {8, 128}}));
//   ProgressReporter reporter(/*actor=*/7, *tracker);
//   BACKFILL_RETURN_IF_ERROR(reporter.Update(barrier.epoch, barrier.epoch.prev, rows));
// clang-format on
//
// An actor reports Update(epoch, consumed_epoch, consumed_rows) at every
// backfill barrier (consumed_rows = its cumulative snapshot rows, persisted
// counts included) and Finish(epoch, consumed_rows) once, at the barrier
// that persists its Completed state. The job is done when every registered
// actor has finished.
#ifndef EXECUTOR_BACKFILL_PROGRESS_REPORTER_H_
#define EXECUTOR_BACKFILL_PROGRESS_REPORTER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/barrier.h"
#include "storage/epoch.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

// One report of one actor.
struct ProgressEvent {
  ActorId actor = 0;
  // The barrier at which the report was made.
  EpochPair epoch = {};
  // True for Finish.
  bool done = false;
  // The epoch whose snapshot the actor has read (barrier.epoch.prev); for a
  // Finish, the epoch of its last Update (or the barrier's prev if none).
  Epoch consumed_epoch = {};
  // Cumulative snapshot rows of the actor.
  uint64_t consumed_rows = 0;
  // The part of consumed_rows its persisted progress held when the actor
  // started (rows an earlier run or attempt read): ProgressReporter::
  // SetPersistedRows.
  uint64_t persisted_rows = 0;
};

// Where reporters send events: the tracker, or a forwarder (e.g. a barrier
// manager shipping events with barrier completions).
class ProgressEventSink {
 public:
  virtual ~ProgressEventSink() = default;
  // Thread-safe. Errors: as the implementation documents.
  virtual absl::Status Report(const ProgressEvent& event) = 0;
};

// Per-actor progress as the tracker sees it.
struct ActorProgress {
  enum class State { kInit, kConsumingUpstream, kDone };
  State state = State::kInit;
  uint32_t num_vnodes = 0;
  Epoch consumed_epoch = {};
  uint64_t consumed_rows = 0;
  // ProgressEvent::persisted_rows of the latest event.
  uint64_t persisted_rows = 0;
  // The barrier of the latest event; nullopt before any event.
  std::optional<EpochPair> last_epoch = std::nullopt;
};

// An actor the tracker waits for, with the number of vnodes it backfills.
struct TrackedActor {
  ActorId actor = 0;
  uint32_t num_vnodes = 0;
};

// Aggregates the reports of a job's backfill actors. Thread-safe.
class JobProgressTracker final : public ProgressEventSink {
 public:
  // Errors: InvalidArgument for a duplicate actor.
  static absl::StatusOr<std::unique_ptr<JobProgressTracker>> Create(
      std::vector<TrackedActor> actors);

  // Records `event`: Init/ConsumingUpstream -> ConsumingUpstream (Update) or
  // Done (Finish). Errors: NotFound for an actor that is not registered;
  // FailedPrecondition for any event of an actor that is already Done.
  absl::Status Report(const ProgressEvent& event) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // True iff every registered actor is Done (vacuously true for none).
  bool IsDone() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t num_actors() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t num_done() const ABSL_LOCKS_EXCLUDED(mu_);
  // Sum of the latest consumed_rows of every actor.
  uint64_t consumed_rows() const ABSL_LOCKS_EXCLUDED(mu_);
  // Sum of the persisted_rows of every actor that reported: the snapshot
  // rows read before these actors started. Complete once every actor
  // reported (each reports at every barrier after its first).
  uint64_t persisted_rows() const ABSL_LOCKS_EXCLUDED(mu_);
  // Sum of the registered actors' vnode counts.
  uint64_t total_vnodes() const ABSL_LOCKS_EXCLUDED(mu_);
  // The state of `actor`, or nullopt if not registered.
  std::optional<ActorProgress> GetActorProgress(ActorId actor) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Estimated percentage given the upstream's `total_rows`: 100 when done;
  // otherwise 100 * consumed / total, capped at 99.99 (and 99.99 when
  // total_rows is 0), since the total is only an estimate.
  double PercentEstimate(uint64_t total_rows) const ABSL_LOCKS_EXCLUDED(mu_);
  // "42.00% (42/100)", or "100%" when done.
  std::string ProgressString(uint64_t total_rows) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit JobProgressTracker(std::map<ActorId, ActorProgress> actors)
      : actors_(std::move(actors)) {}

  mutable Mutex mu_;
  std::map<ActorId, ActorProgress> actors_ ABSL_GUARDED_BY(mu_);
  size_t num_done_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t consumed_rows_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t persisted_rows_ ABSL_GUARDED_BY(mu_) = 0;
};

// The reporter of one backfill actor. Not thread-safe: owned and used by the
// actor's executor.
class ProgressReporter {
 public:
  // REQUIRES: `sink` outlives the reporter.
  ProgressReporter(ActorId actor, ProgressEventSink& sink)
      : actor_(actor), sink_(sink) {}

  // Reports that the snapshot as of `consumed_epoch` has been consumed up to
  // `consumed_rows` rows, at barrier `epoch`.
  // Errors: FailedPrecondition after Finish, or if consumed_epoch or
  // consumed_rows is lower than in the previous report; the sink's errors.
  absl::Status Update(EpochPair epoch, Epoch consumed_epoch,
                      uint64_t consumed_rows);

  // Reports that the actor's backfill is finished at barrier `epoch` with
  // `consumed_rows` rows. Idempotent: later calls do nothing and return OK.
  // Errors: FailedPrecondition if consumed_rows is lower than in the previous
  // report; the sink's errors.
  absl::Status Finish(EpochPair epoch, uint64_t consumed_rows);

  // The snapshot rows the actor's persisted progress held when it started
  // (0 for a new job), sent with every later event as persisted_rows, so
  // that the job can tell the rows read in this run from an earlier run's.
  // Call it once the progress is loaded, before the first Update or Finish.
  void SetPersistedRows(uint64_t rows) { persisted_rows_ = rows; }

  bool is_finished() const { return finished_; }
  ActorId actor() const { return actor_; }

 private:
  const ActorId actor_;
  ProgressEventSink& sink_;
  bool finished_ = false;
  std::optional<Epoch> last_consumed_epoch_;
  uint64_t last_consumed_rows_ = 0;
  uint64_t persisted_rows_ = 0;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_PROGRESS_REPORTER_H_
