// ClusterPlacement: the AttemptPlacement (executor/runtime/streaming_job.h)
// of a job whose backfill actors run in worker processes (ActorWorker,
// actor_worker.h). The coordinator's process runs the source and the view;
// each backfill actor runs on the worker the placement names for it: by the
// job's vnode assignment (ActorWorkersByAssignment: the worker holding most
// of the actor's vnodes), or, given no placement, actor 100 + i on worker
// i mod n. StartRemote asks every
// worker with actors to run them (ActorService.RunAttempt) and relays what
// it reports: progress events to the coordinator's tracker, a failure (an
// actor that did not stop at its stop barrier, or a call that broke) to
// the coordinator, which fails the attempt; EndRemote waits for every
// worker's end.
//
//   PlacementFactory factory = [&](const JobState& state) ->
//   absl::StatusOr<std::unique_ptr<AttemptPlacement>> {
//     std::vector<WorkerEndpoint> live = LiveWorkers();
//     BACKFILL_ASSIGN_OR_RETURN(std::vector<size_t> actor_workers,
//         ActorWorkersByAssignment(*coordinator->State(), live,
//                                  vnode_count, state.parallelism));
//     return std::make_unique<ClusterPlacement>(*exchange, committer, store,
//         std::move(live), ++attempt, std::move(actor_workers));
//   };
//   RunStreamingJobWithDriver(cluster_store, options, ..., factory);
//
// Thread-safety: as AttemptPlacement (one attempt's thread), the relays on
// threads of their own.
#ifndef EXECUTOR_CLUSTER_CLUSTER_PLACEMENT_H_
#define EXECUTOR_CLUSTER_CLUSTER_PLACEMENT_H_

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "executor/cluster/grpc_remote_actors.h"
#include "executor/cluster/job_state.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/streaming_job.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace backfill {

// Where a worker serves.
struct WorkerEndpoint {
  // Its id (CheckpointCoordinator::LiveWorker::worker_id): its entry in the
  // job's vnode assignment.
  std::string worker_id;
  // Its registration with the checkpoint coordinator
  // (CheckpointCoordinator::LiveWorker::session): the attempt's
  // checkpoints require it.
  uint64_t session = 0;
  // Its ActorService (ActorWorker::address()).
  std::string actor_address;
  // Its exchange server (ActorWorker::exchange_address()).
  std::string exchange_address;
};

// The placement of `parallelism` backfill actors by the vnode assignment
// `state` (PlaceActorsByAssignment, job_state.h) over `workers`: for each
// actor, in order, the index in `workers` of the worker its vnodes are
// assigned to. Errors: PlaceActorsByAssignment's; Unavailable naming the
// worker if the assignment gives actors to a worker that is not in
// `workers` (not connected, or without its endpoints: the attempt fails and
// the job tries again once the assignment changed or it is back).
absl::StatusOr<std::vector<size_t>> ActorWorkersByAssignment(
    const ClusterJobState& state, const std::vector<WorkerEndpoint>& workers,
    uint32_t vnode_count, uint32_t parallelism);

// What the coordinator's process knows of one worker with actors when a
// barrier was not collected within the barrier timeout. "Long" is half the
// timeout.
struct WorkerBarrierEvidence {
  size_t worker = 0;  // Its index in the attempt's workers.
  // Every one of its actors emitted the barrier.
  bool emitted = false;
  // One of its input edges from this process has had no permit for long:
  // its actors stopped reading.
  bool stopped_reading = false;
  // Every one of its input edges from this process was sent the barrier
  // (or a later one) at least long ago.
  bool received = false;
  // This process has stopped reading one of its actors' outputs for long,
  // before that output delivered the barrier: the worker may stall because
  // of this process (its view or merge).
  bool output_unread = false;
};

// The fence rule: the workers holding the barrier up, each with why
// (`timed_out` starts every reason; `at_least` is the "long" it names).
// A worker holds it when it did not emit it, this process kept reading its
// output, and it either stopped reading its input or was sent the barrier
// on every input edge. Nothing else counts: a worker that was never sent
// the barrier waits on this process (its source or a dispatcher blocked on
// another worker), and one whose output this process does not read may
// stall because of this process. Each worker is judged on its own, so a
// single worker, or every worker, may be found holding.
std::vector<std::pair<size_t, std::string>> WorkersHoldingBarrier(
    const std::vector<WorkerBarrierEvidence>& workers,
    absl::string_view timed_out, absl::Duration at_least);

class ClusterPlacement final : public AttemptPlacement {
 public:
  // `exchange`: the coordinator process's exchange server; `committer`: its
  // store (the workers start from its committed version); `checkpoints`:
  // the job's store, whose checkpoints must then hold the data of every
  // worker given actors (RequireSessions); all must outlive this. `workers`:
  // each must take part in the checkpoints (registered with the
  // CheckpointCoordinator); none (every worker left or was fenced) makes
  // Serve, Receive and StartRemote Unavailable. `attempt`: a number for
  // messages. `actor_workers`: the index in `workers` of backfill actor 100 +
  // i's worker at i (ActorWorkersByAssignment); empty: worker i mod n. Its size
  // must be the attempt's parallelism (else StartRemote is
  // InvalidArgument). `end_timeout`: how long EndRemote waits for a
  // worker's end before it cancels its call.
  ClusterPlacement(ExchangeServer& exchange, const SharedStateStore& committer,
                   ClusterCheckpointStore& checkpoints,
                   std::vector<WorkerEndpoint> workers, uint64_t attempt,
                   std::vector<size_t> actor_workers = {},
                   absl::Duration end_timeout = absl::Seconds(30));
  ~ClusterPlacement() override;  // EndRemote()

  bool IsLocal(ActorId actor) const override;
  absl::Status Serve(ActorId upstream, ActorId downstream, const Schema& schema,
                     ChannelReceiver receiver) override;
  absl::Status Receive(ActorId upstream, ActorId downstream,
                       const Schema& schema, ChannelSender sender) override;

  // Errors: Unavailable without workers (as are Serve's and Receive's);
  // InvalidArgument for `actor_workers` not of
  // the attempt's parallelism or naming a worker out of range.
  absl::Status StartRemote(const JobState& state, JobGraph& graph,
                           BarrierCoordinator& coordinator) override;
  // The first failure a worker reported (or its call's), OK if every
  // worker's actors stopped at their stop barrier.
  absl::Status EndRemote() override ABSL_LOCKS_EXCLUDED(mu_);

  // When the attempt failed, EndRemote first fences the workers that held
  // it up (CheckpointCoordinator::FenceWorker, which reports each fence
  // through CheckpointCoordinatorOptions::on_fence): when a barrier
  // was not collected within the barrier timeout (BarrierTimeoutEpoch), the
  // workers WorkersHoldingBarrier finds, with "long" half the timeout.
  // Such a worker keeps its lease (its process answers) but its actors
  // hang: it is fenced, so the recovery splits its vnodes over the others
  // instead of placing actors on it again; with no worker left, the
  // recoveries fail until one registers. A fence that fails (e.g. the
  // worker left meanwhile) leaves the recovery as it was.

  // The worker index of backfill actor `actor`.
  size_t WorkerOf(ActorId actor) const;
  // Its worker's id.
  const std::string& WorkerIdOf(ActorId actor) const {
    return workers_[WorkerOf(actor)].worker_id;
  }

 private:
  struct Call;
  // The coordinator's barrier: to every worker with actors.
  void Inject(const Barrier& barrier, BarrierCoordinator& coordinator);
  // A worker's answer to an inject.
  void Collected(const CheckpointCoordinator::BarrierCollection& collection,
                 BarrierCoordinator& coordinator);
  void Relay(Call& call, JobGraph& graph, BarrierCoordinator& coordinator)
      ABSL_LOCKS_EXCLUDED(mu_);
  // On the attempt's failure: the workers that held up a timed-out barrier
  // (see EndRemote), into holding_.
  void FindHoldingWorkers(const absl::Status& failure) ABSL_LOCKS_EXCLUDED(mu_);
  void FenceHoldingWorkers() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status NoWorker() const;
  void RecordFailure(const absl::Status& status,
                     BarrierCoordinator& coordinator) ABSL_LOCKS_EXCLUDED(mu_);

  ExchangeServer& exchange_;
  const SharedStateStore& committer_;
  ClusterCheckpointStore& checkpoints_;
  const std::vector<WorkerEndpoint> workers_;
  const uint64_t attempt_;
  // Names the attempt's barriers on the workers' control streams: random,
  // so that no other coordinator's attempt has it.
  const uint64_t attempt_key_;
  const std::vector<size_t> actor_workers_;
  const absl::Duration end_timeout_;
  GrpcRemoteActors remote_;
  std::vector<std::unique_ptr<Call>> calls_;
  BarrierCoordinator* coordinator_ = nullptr;  // From StartRemote.
  uint32_t parallelism_ = 0;                   // From StartRemote.
  Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // Each with why.
  std::vector<std::pair<size_t, std::string>> holding_ ABSL_GUARDED_BY(mu_);
  bool ended_ = false;
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_CLUSTER_PLACEMENT_H_
