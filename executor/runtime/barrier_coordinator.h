// BarrierCoordinator: the coordinator of one attempt of a streaming job. It
// owns the job state in force (executor/runtime/job_state.h) and its
// job-state table, decides every barrier (its epoch, kind and mutation),
// collects the barriers from the graph (it is the graph's BarrierListener),
// checkpoints, and keeps the attempt's statistics. It has no threads: a
// driver sends the barriers it makes into the graph and tells it when they
// were collected.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto coordinator,
//       BarrierCoordinator::Create(store, options, attempt, clock, &result));
//   BACKFILL_ASSIGN_OR_RETURN(auto graph, BuildJobGraph(store, options,
//       coordinator->state(), {&clock, registry, coordinator.get()}));
//   while (!coordinator->finished()) {                  // a driver
//     BACKFILL_ASSIGN_OR_RETURN(Barrier barrier,
//                               coordinator->NextBarrier(*graph));
//     ... send it into graph->barriers, run the actors until
//     coordinator->IsCollected(barrier.epoch.curr) ...
//     BACKFILL_RETURN_IF_ERROR(coordinator->OnCollected(*graph));
//   }
//
// The barriers: the first is Initial at {committed + 1, committed}, with
// Add (all actors) for the job's creation or Update for a restart or
// recovery. Each later one counts one epoch since the view's creation and
// applies that epoch's actions (ApplyJobActions), carrying one Throttle for
// the net change of the actors' limit; the state in force is written into
// the barrier's `prev` epoch of the job-state table, so the checkpoint that
// commits the view and the progress commits it too. Every
// options.checkpoint_frequency-th is a checkpoint. Once the backfill is done
// and options.extra_checkpoints_after_finish checkpoints passed, the next
// checkpoint barrier stops the source's changes and carries Stop for every
// actor; when it is collected the attempt is finished.
//
// An online rescale (a `rescale` action, or any change of the parallelism
// in force) happens at the first checkpoint barrier at or after the action's
// epoch (the parallelism is job state: that checkpoint commits it with the
// old actors' last progress): NextBarrier builds the new set of backfill
// actors (AddBackfillActors, job_graph.h; appended to graph.actors, which
// the driver must start) and gives the barrier its Update mutation instead
// of a Throttle (the new actors are built with the rate in force) or a Stop
// (the attempt goes on until the new actors finished); OnCollected, after
// the checkpoint, retires the old actors: TakeRetiredActors.
//
// A reschedule (RequestReschedule, e.g. a worker joined a job split over
// processes and its actors should be placed again over every worker): the
// next checkpoint barrier after the request stops the source's changes and
// carries Stop for every actor, as the last barrier of a finished job does;
// once it is collected and checkpointed the attempt is finished and
// rescheduled() is true. Everything the attempt did is committed by that
// checkpoint, so the next attempt (the job loop starts one at once, not a
// recovery: streaming_job.h) starts where it ended and redoes nothing. A
// request while a rescale is due, or once the backfill is done and the job
// stops at that barrier anyway, waits for the next checkpoint or is moot.
//
// Adaptive mode (the job state's adaptive_target > 0, CONTRACT §11): the
// coordinator owns an AdaptiveRateController (ratelimit/
// adaptive_rate_controller.h) started from the job state: at the saved
// controller rate without slow start after a recovery or restart, with a
// slow start from its initial rate when the mode is new. Each collected
// barrier while the backfill runs (unless the epoch it closes ran paused)
// feeds it one sample, the barrier's latency through the backfill
// (injection until every backfill actor emitted it); a rate it decides
// becomes the job state's adaptive_rows_per_second at the next barrier,
// which carries the Throttle (so it is persisted and re-applied like any
// other change). The floor is AdaptiveFloorRowsPerSecond(options); a Fixed
// rate_limit (set_rate_limit while adaptive) is the controller's ceiling.
//
// Errors of the actors reach the coordinator through ActorEnded (it is the
// graph's listener) and Fail (the first one wins); the driver stops the
// attempt on error().
//
// Thread-safety: Create, NextBarrier, OnCollected, TakeRetiredActors,
// RecordAttemptEnd, state() and finished() from the driver's coordinating
// thread; the listener
// methods, Fail, error, IsCollected, WaitCollected, StopCheckpoints and
// WaitUntilCheckpointsStopped from any thread (they take the
// coordinator's lock).
#ifndef EXECUTOR_RUNTIME_BARRIER_COORDINATOR_H_
#define EXECUTOR_RUNTIME_BARRIER_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/barrier.h"
#include "executor/runtime/job_graph.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/job_state.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/running_quantile.h"
#include "executor/runtime/streaming_job_options.h"
#include "ratelimit/adaptive_rate_controller.h"
#include "storage/epoch.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

// Writes the job's first catalog row (its definition and the initial state
// from options.parallelism and options.rate_limit) in a checkpoint of its
// own, unless the job-state table already holds one. Errors: storage errors.
absl::Status DefineJob(StateStore& store, const StreamingJobOptions& options);

// How this attempt starts.
struct AttemptStart {
  // The job's creation (the first barrier carries Add); false for a restart
  // or a recovery (Update), as RisingWave marks its first barriers.
  bool creating = false;
  // options.overrides apply on top of the committed job state (no
  // checkpoint of this run has persisted them yet).
  bool apply_overrides = false;
  // When the job (not the attempt) started: options.max_duration and the
  // progress's seconds count from it.
  absl::Time job_start;
  // Called after every collected barrier but the first. Optional.
  std::function<void(const JobProgress&)> observer;
};

// The barrier (its curr epoch) that a status of WaitCollected says was not
// collected within the barrier timeout, or nullopt for any other status.
// The epoch is a payload of the status, so it stays with it wherever the
// error is handed on (BarrierCoordinator::Fail, error()); e.g. for a
// placement to find which of its processes held the barrier.
std::optional<Epoch> BarrierTimeoutEpoch(const absl::Status& status);

class BarrierCoordinator final : public BarrierListener {
 public:
  // Loads the committed job state (at the first barrier's epoch) and applies
  // the overrides if asked. `result` (the job's, accumulated over attempts)
  // gets the parallelism and job state now, epochs, checkpoints, latencies
  // and rates as the attempt goes. Errors: FailedPrecondition if the job
  // was not defined (DefineJob); DataLoss for a corrupt job state; storage
  // errors. `store`, `options`, `clock` and `result` must outlive it.
  static absl::StatusOr<std::unique_ptr<BarrierCoordinator>> Create(
      StateStore& store, const StreamingJobOptions& options,
      AttemptStart attempt, Clock& clock, JobResult* result);

  // The job state the graph is built for (and, after NextBarrier, the state
  // in force).
  const JobState& state() const { return state_; }

  // The next barrier to inject (see the file comment); records its
  // injection time. Writes the job state into the job-state table (not for
  // the first). REQUIRES: !finished(); the previous barrier was collected
  // (OnCollected). Errors: the job-state table's.
  absl::StatusOr<Barrier> NextBarrier(JobGraph& graph);

  // True once the graph collected the barrier of epoch `curr`.
  bool IsCollected(Epoch curr) const;

  // Blocks until the barrier of NextBarrier was collected, an actor failed
  // (its error), the job's deadline (DeadlineExceeded "the job did not
  // finish within its max_duration of ..."), or options.barrier_timeout after
  // the barrier's injection (Unavailable "barrier ... not collected within the
  // barrier timeout ...": the attempt fails, and the job recovers). For
  // threaded drivers.
  absl::Status WaitCollected();

  // options.barrier_timeout.
  absl::Duration barrier_timeout() const { return options_.barrier_timeout; }

  // The job's deadline: job_start + options.max_duration.
  absl::Time deadline() const {
    return attempt_.job_start + options_.max_duration;
  }
  // The error of a job past its deadline with the barrier of epoch() in
  // flight: DeadlineExceeded "the job did not finish within its
  // max_duration of ... (barrier ... was in flight)". For every driver.
  absl::Status DeadlineExceeded() const;
  // The epoch of the barrier of the last NextBarrier.
  EpochPair epoch() const { return epoch_; }
  // The attempt's clock (for listeners in other threads: BackfillEmitted's
  // `now`).
  Clock& clock() const { return clock_; }

  // After the barrier of NextBarrier was collected: latencies, the
  // checkpoint (if it is one), the result's counters, the observer. Errors:
  // the checkpoint's.
  absl::Status OnCollected(JobGraph& graph);

  // The stop barrier was collected: the attempt completed.
  bool finished() const { return finished_; }

  // Ends the attempt at its next checkpoint barrier (see the file comment);
  // `reason` is for messages. Any thread; later requests add nothing.
  void RequestReschedule(std::string reason) ABSL_LOCKS_EXCLUDED(mu_);
  // After finished(): the attempt ended at a reschedule's stop barrier (the
  // job goes on in a new attempt), with the first request's reason.
  bool rescheduled() const { return rescheduled_; }
  const std::string& reschedule_reason() const { return reschedule_reason_; }

  // After OnCollected: the actors a rescale replaced, whose last barrier is
  // now checkpointed (each has stopped, or is returning from the Poll that
  // delivered it). The driver must stop polling them (join their threads)
  // and Abandon them before the next NextBarrier: their table instances
  // would hold up the next checkpoint. Empty otherwise.
  std::vector<Actor*> TakeRetiredActors();

  // Records the attempt's end in the result: snapshot rows and latency
  // percentiles if it completed (`completed`), the upstream's longest block
  // and the backfill's peak buffer either way. Call after the driver
  // stopped every actor.
  void RecordAttemptEnd(const JobGraph& graph, bool completed);

  // The first error of the attempt wins; later ones are dropped. The first
  // one also runs the failure callback, if any (outside the lock).
  void Fail(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs `callback` with the attempt's first error, on the failing thread
  // (at once if the attempt failed already); null clears it. For what must
  // stop waiting when the attempt fails, e.g. the inputs from actors in
  // other processes (ClusterPlacement). It may call error() but not
  // SetFailureCallback.
  void SetFailureCallback(std::function<void(const absl::Status&)> callback)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status error() const;

  // A job whose backfill actors run in other processes too (a graph split
  // over processes, with collectors there: executor/cluster's
  // ClusterPlacement). From now on a barrier is collected once the graph
  // collected it and `processes` calls of RemoteCollected named it (one
  // per process with actors, each once all of its actors emitted it); and
  // NextBarrier runs `on_inject` with each barrier it makes, before it
  // returns (so that it reaches those processes' collectors before the
  // barrier can reach their actors). Call before the first NextBarrier, from
  // the driver's thread. `processes` 0 turns it off.
  void CollectRemotely(size_t processes,
                       std::function<void(const Barrier&)> on_inject)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One process collected the barrier of epoch `curr` (see CollectRemotely).
  void RemoteCollected(Epoch curr) ABSL_LOCKS_EXCLUDED(mu_);

  // The coordinator will not checkpoint any more (the attempt is over):
  // from then on actors that ended early may drop their table instances.
  void StopCheckpoints();
  // Blocks until StopCheckpoints was called.
  void WaitUntilCheckpointsStopped();

  // BarrierListener.
  void BackfillEmitted(ActorId actor, const Barrier& barrier,
                       absl::Time now) override;
  void Collected(const Barrier& barrier) override;
  // An actor that ended before its stop barrier fails the attempt: with its
  // error, or Internal "<identity>: input ended before the stop barrier".
  void ActorEnded(const Actor& actor) override;

 private:
  BarrierCoordinator(StateStore& store, const StreamingJobOptions& options,
                     AttemptStart attempt, Clock& clock, JobResult* result,
                     EpochPair first)
      : store_(store),
        options_(options),
        attempt_(std::move(attempt)),
        clock_(clock),
        result_(*result),
        definition_(JobDefinitionOf(options)),
        epoch_(first) {}

  absl::Status LoadJobState();
  // Online rescale (see the file comment): due when the parallelism in
  // force differs from the graph's; begun in NextBarrier (the Update for the
  // barrier), finished in OnCollected after its checkpoint.
  bool RescaleDue(const JobGraph& graph) const;
  absl::StatusOr<std::shared_ptr<const Mutation>> BeginRescale(JobGraph& graph);
  void FinishRescale(const JobGraph& graph);
  // Adaptive mode: the controller for state_ (none if not adaptive), and
  // state_'s controller rate from it.
  absl::Status StartAdaptiveController();
  // `next` (this barrier's state after its actions) with the controller's
  // ceiling updated and its rate in force. Not adaptive: `next`.
  JobState WithAdaptiveRate(JobState next);
  // Feeds the collected barrier's backfill latency to the controller.
  void ObserveAdaptiveLatency(const JobGraph& graph,
                              absl::Duration backfill_latency);
  std::shared_ptr<const Mutation> ThrottleFor(const JobGraph& graph,
                                              RateLimit job_limit) const;

  StateStore& store_;
  const StreamingJobOptions& options_;
  const AttemptStart attempt_;
  Clock& clock_;
  JobResult& result_;
  const JobDefinition definition_;

  // The coordinating thread's.
  JobState state_;
  // Adaptive mode only: the controller, and whether the last barrier closed
  // an epoch that ran paused (its latency is not a sample).
  std::unique_ptr<AdaptiveRateController> adaptive_;
  bool closes_paused_epoch_ = false;
  std::unique_ptr<JobStateTable> job_table_;
  // The barrier of the last NextBarrier.
  EpochPair epoch_;
  BarrierKind kind_ = BarrierKind::kInitial;
  bool started_ = false;
  // The backfill was done when the last barrier was made, and it stops the
  // attempt.
  bool done_ = false;
  bool last_ = false;
  bool finished_ = false;
  // The last barrier stops the attempt for a reschedule (not the job's end).
  bool rescheduled_ = false;
  std::string reschedule_reason_;
  uint64_t barrier_index_ = 0;
  uint32_t checkpoints_after_finish_ = 0;
  absl::Time injected_at_;
  // Every barrier's latency, injection to collection: its running p50 and
  // p99 (reported at every barrier, so kept up to date rather than sorted
  // per report).
  RunningQuantile latency_p50_ms_{0.5};
  RunningQuantile latency_p99_ms_{0.99};
  // Backfill barrier latencies while it ran and after it finished.
  std::vector<double> backfill_latencies_ms_;
  std::vector<double> steady_latencies_ms_;
  double last_backfill_latency_ms_ = 0;
  // The progress observed so far (kept monotone across a rescale).
  uint64_t observed_rows_ = 0;
  uint64_t observed_vnodes_completed_ = 0;
  // A rescale is in flight (it replaces the set before the one in force);
  // the actors rescales retired, until taken.
  bool rescale_in_flight_ = false;
  std::vector<Actor*> retired_;

  // Advances collected_ to what both the graph and, if required, every
  // remote process collected.
  void AdvanceCollectedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // CollectRemotely's (the driver thread's).
  std::function<void(const Barrier&)> on_inject_;

  mutable Mutex mu_;
  CondVar cv_;
  Epoch collected_ ABSL_GUARDED_BY(mu_);
  // What the graph collected; with CollectRemotely, how many processes
  // must collect each barrier and how many did so far (by curr epoch).
  Epoch graph_collected_ ABSL_GUARDED_BY(mu_);
  size_t remote_processes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, size_t> remote_collected_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  std::function<void(const absl::Status&)> failure_callback_
      ABSL_GUARDED_BY(mu_);
  bool checkpoints_stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> reschedule_requested_ ABSL_GUARDED_BY(mu_);
  // Barrier latency in the backfill: injection (by the coordinator) to
  // emission (by the last backfill actor), per epoch.
  std::map<uint64_t, absl::Time> injected_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Duration> backfill_latency_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_BARRIER_COORDINATOR_H_
