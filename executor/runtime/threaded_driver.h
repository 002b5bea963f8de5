// RunThreaded: the threaded driver of a streaming job's graph: one thread
// per actor (each runs Actor::Poll, blocking on a BlockingWaker while
// Pending), and the calling thread coordinates: it makes a barrier every
// `barrier_interval` (BarrierCoordinator::NextBarrier), sends it into
// the graph, waits until the view collected it, and lets the coordinator
// checkpoint, until the coordinator's stop barrier was collected.
//
//   BACKFILL_RETURN_IF_ERROR(RunThreaded(*graph, *coordinator,
//                                        options.barrier_interval, clock));
//
// The actor set may change mid-attempt (an online rescale): after each
// NextBarrier it starts a thread for every actor the coordinator added
// (graph.actors only grows); after each collected barrier it joins the
// threads of the actors the coordinator retired (TakeRetiredActors: they
// stopped at the rescale barrier, now checkpointed) and abandons them, before
// the next barrier.
//
// An actor that ends before its stop barrier has failed the attempt (the
// coordinator, its BarrierListener, learnt its error, or Internal
// "<identity>: input ended before the stop barrier"); its thread then waits
// until the coordinator checkpoints no more (a checkpoint must see the
// sealed data of every table instance) and abandons its executor, which
// closes its input channels so that no actor upstream of it waits forever.
// Returns OK when the attempt completed; otherwise the first error (an
// actor's, a checkpoint's, DeadlineExceeded). Either way every thread has
// been joined and every actor has ended when it returns.
//
// Thread-safety: call from one thread; `graph` and `coordinator` must not be
// used by anyone else meanwhile.
#ifndef EXECUTOR_RUNTIME_THREADED_DRIVER_H_
#define EXECUTOR_RUNTIME_THREADED_DRIVER_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/job_graph.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// `barrier_interval`: the time between two barriers (the first is sent at
// once). REQUIRES: a freshly built graph and coordinator (no barrier made).
absl::Status RunThreaded(JobGraph& graph, BarrierCoordinator& coordinator,
                         absl::Duration barrier_interval, Clock& clock);

// What a process that runs part of a split graph does when one of its
// actors fails.
struct ActorFailureHooks {
  // Called once, with the first failure, as soon as it happens (to report
  // it to the coordinator elsewhere). Optional.
  std::function<void(const absl::Status&)> on_failure;
  // A failed actor's thread calls it, and keeps the actor (its table
  // instances, whose sealed epochs may still be checkpointed) until it
  // returns: until the coordinator elsewhere ended the attempt. Optional
  // (empty: abandoned at once).
  std::function<void()> hold;
};

// The driver of a process that runs part of a split graph for a
// coordinator elsewhere (JobGraphContext::remote): every actor of
// graph.actors on a thread of its own until each ended. An actor that did
// not stop at its stop barrier is reported (hooks.on_failure), held
// (hooks.hold), then abandoned (its channels close, so the actors next to
// it, here or across the exchange, end too). Returns OK when every actor
// stopped; otherwise the first error of an actor (Internal "<identity>:
// input ended before the stop barrier" for one whose input ended). Every
// thread has been joined when it returns.
absl::Status RunActorsThreaded(JobGraph& graph, Clock& clock,
                               const ActorFailureHooks& hooks = {});

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_THREADED_DRIVER_H_
