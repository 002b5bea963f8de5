// JobGraph: the actors of one attempt of a streaming job, built from the
// job's options and the job state in force, with no threads in it:
//
//   barriers (the coordinator's injection end, a channel)
//     -> actor 1: DmlSourceExecutor -> HashDispatcher (by vnode, S1 -> S2)
//     -> actors 100..100+N-1: ReceiverExecutor -> ArrangementBackfillExecutor
//          -> ChannelOutput (a rescale adds a new set, AddBackfillActors)
//     -> actor 2: N x ReceiverExecutor -> MergeExecutor -> MaterializeExecutor
//          (the view) -> DiscardOutput; its barriers go to the listener
//          (the coordinator's collection end).
//
//   BACKFILL_ASSIGN_OR_RETURN(
//       std::unique_ptr<JobGraph> graph,
//       BuildJobGraph(store, options, state, {&clock, registry, &listener}));
//   for (auto& actor : graph->actors) ...   // a driver polls them
//
// Every actor is an Actor (executor/runtime/actor.h) that a driver polls:
// one thread each (threaded_driver.h), or one thread choosing among them.
// The source starts generating at the first barrier the coordinator sends
// into `barriers`; the backfill actors are built from their plan nodes
// (BuildArrangementBackfillFromPlan) with an even split of the vnodes and
// their share of the job-wide rate limit, as a planner would hand them over.
//
// Lifetime: the store, the clock, the registry and the listener must
// outlive the graph; the graph must not outlive the store. Destroying the
// graph destroys every actor (closing every channel).
// Thread-safety: the members are used by the driver: each actor by one
// thread at a time; `barriers`, `actors` (appending), the sets in force and
// AddBackfillActors by the coordinating thread; trackers, source offset,
// stop_generating, exchange and the dispatcher's blocked times from any
// thread.
#ifndef EXECUTOR_RUNTIME_JOB_GRAPH_H_
#define EXECUTOR_RUNTIME_JOB_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/barrier.h"
#include "executor/channel.h"
#include "executor/runtime/actor.h"
#include "executor/runtime/demo/dml_source_executor.h"
#include "executor/runtime/exchange.h"
#include "executor/runtime/hash_dispatcher.h"
#include "executor/runtime/job_state.h"
#include "executor/runtime/streaming_job_options.h"
#include "metrics/backfill_metrics.h"
#include "metrics/registry.h"
#include "ratelimit/rate_limit.h"
#include "serde/schema.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// Told about barriers as they pass through the graph: the coordinator's
// collection end. Called from the actors' threads.
class BarrierListener {
 public:
  virtual ~BarrierListener() = default;
  // Backfill actor `actor` emitted `barrier` at `now`.
  virtual void BackfillEmitted(ActorId actor, const Barrier& barrier,
                               absl::Time now) = 0;
  // The view materialized `barrier` (every backfill actor's data before it
  // is in the view's table).
  virtual void Collected(const Barrier& barrier) = 0;
  // `actor` ended (Actor::state() says how), before its output closed: an
  // actor's error arrives before its consumers see their input end.
  virtual void ActorEnded(const Actor& actor) = 0;
};

// A graph split over processes (issue 19): which of the job's actors this
// process runs, and how its edges to the actors of other processes are
// carried (executor/cluster's GrpcRemoteActors: over gRPC). BuildJobGraph
// builds every actor of the job, keeps the local ones, and hands each edge
// between a local and a remote actor to Serve (a local upstream's output)
// or Receive (a local downstream's input), with the schema of the edge's
// chunks. Thread-safety: called from BuildJobGraph's thread.
class RemoteActors {
 public:
  virtual ~RemoteActors() = default;
  // Whether this process runs `actor`.
  virtual bool IsLocal(ActorId actor) const = 0;
  // `receiver` carries what local `upstream` sends to remote `downstream`.
  virtual absl::Status Serve(ActorId upstream, ActorId downstream,
                             const Schema& schema,
                             ChannelReceiver receiver) = 0;
  // `sender` must carry what remote `upstream` sends to local `downstream`.
  virtual absl::Status Receive(ActorId upstream, ActorId downstream,
                               const Schema& schema, ChannelSender sender) = 0;
};

// What a graph is built with besides the options and the job state.
struct JobGraphContext {
  // The clock of every actor (rate limiters, the source's rate). Required.
  Clock* clock = nullptr;
  // Receives the backfill metrics; null = none.
  Registry* registry = nullptr;
  // Required.
  BarrierListener* listener = nullptr;
  // Null: every actor is local. Otherwise only the local actors are in
  // `JobGraph::actors`; see RemoteActors. Must outlive the graph.
  RemoteActors* remote = nullptr;
  // Where the local backfill actors report their progress; null: the
  // tracker of their set (a process that runs them for a coordinator
  // elsewhere forwards the events to the coordinator's tracker).
  ProgressEventSink* progress_sink = nullptr;
};

// One set of backfill actors: the graph's first, or a rescale's. What its
// actors point into lives here, so a set outlives its actors.
struct BackfillActorSet {
  std::unique_ptr<JobProgressTracker> tracker;
  std::vector<std::unique_ptr<ProgressReporter>> reporters;
  // Per actor: its id, the number of vnodes it owns, the actor.
  std::vector<ActorId> actor_ids;
  std::vector<uint32_t> owned_vnodes;
  // Null for an actor another process runs (JobGraphContext::remote).
  std::vector<Actor*> actors;
  // Per actor: the most upstream change data it buffered in one epoch,
  // written (by its thread) when the actor ends; read after it was joined.
  std::vector<size_t> peak_buffer_bytes;
  // Per actor of a snapshot backfill: the peak bytes of its log
  // (SnapshotBackfillExecutor::peak_log_bytes), written likewise.
  std::vector<uint64_t> peak_log_bytes;
};

struct JobGraph {
  static constexpr ActorId kSourceActor = 1;
  static constexpr ActorId kViewActor = 2;
  static constexpr ActorId kFirstBackfillActor = 100;
  static constexpr FragmentId kBackfillFragment = 10;

  // What the graph was built with (AddBackfillActors builds more actors).
  StateStore* store = nullptr;
  const StreamingJobOptions* options = nullptr;
  JobGraphContext context;

  // What the actors point into: declared before them, destroyed after.
  std::deque<BackfillMetrics> metrics;
  // Every set of backfill actors: the first, then one per rescale; the last
  // is the set in force.
  std::vector<std::unique_ptr<BackfillActorSet>> backfill_sets;
  // Channels of a rescale's new actors until the dispatcher and the merge
  // take them.
  Exchange exchange;
  // Set to stop the source's changes (it keeps forwarding barriers).
  std::shared_ptr<std::atomic<bool>> stop_generating =
      std::make_shared<std::atomic<bool>>(false);

  // The coordinator's injection end: barriers sent here enter the source.
  std::optional<ChannelSender> barriers;
  // Every actor ever built, in order: the source (index 0), the first
  // backfill actors (1..N), the view, then each rescale's backfill actors;
  // of a split graph (context.remote), only the local ones, in that order.
  // Only appended to (a driver starts the actors it has not seen yet).
  std::vector<std::unique_ptr<Actor>> actors;
  // Views into the actors: the source's executor and output (null when the
  // source is remote).
  DmlSourceExecutor* source = nullptr;
  HashDispatcher* dispatcher = nullptr;

  // The set in force (the last of backfill_sets; a graph always has one):
  // its tracker (the job's backfill is done when it is), its actors' ids and
  // vnode counts.
  const BackfillActorSet& in_force() const { return *backfill_sets.back(); }

  // The ids of the actors in force: source, view, the set in force (for
  // Add and Stop mutations).
  std::vector<ActorId> ActorIds() const;
};

// Builds the graph of `options` for the job state `state` (its parallelism
// and effective rate limit). No I/O beyond creating table instances; the
// actors initialise their tables at the first barrier, which must be
// {committed + 1, committed}. Errors: InvalidArgument for options the plan
// builder rejects; the state tables' and the metrics' creation errors.
// REQUIRES: ValidateStreamingJobOptions(options).ok(); state.parallelism in
// [1, vnode count]; context.clock and context.listener set. `options` must
// outlive the graph.
absl::StatusOr<std::unique_ptr<JobGraph>> BuildJobGraph(
    StateStore& store, const StreamingJobOptions& options,
    const JobState& state, const JobGraphContext& context);

// An online rescale, step 1 (the coordinator calls it while making a
// checkpoint barrier): builds a new set of `parallelism` backfill actors
// (an even split of the vnodes, each with its share of `rate_limit`, ids
// after every id used so far), appends them to `actors` (a driver must
// start them), puts their channels to the source's dispatcher and the view's
// merge into `exchange`, and makes the new set the one in force. Returns
// the Update that moves the graph to it at a barrier: the old set's actors
// are dropped (they stop after emitting it, having persisted their progress
// in its `prev` epoch), the dispatcher sends the barrier to the old and the
// new actors and what follows to the new ones, the merge aligns it across
// both. The new actors take it as their first barrier and initialise from
// the progress committed at its `prev` epoch, so it must be a checkpoint
// barrier. The source keeps running throughout. Errors: as BuildJobGraph's
// (the graph then has no new actor); FailedPrecondition for a split graph
// (its processes change their actors at a recovery, not online).
// REQUIRES: parallelism in [1, vnode count].
absl::StatusOr<UpdateMutation> AddBackfillActors(JobGraph& graph,
                                                 uint32_t parallelism,
                                                 RateLimit rate_limit);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_JOB_GRAPH_H_
