#include "executor/runtime/threaded_driver.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/poll.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// Polls `actor` on this thread until it is done (blocking while Pending).
void PollUntilDone(Actor& actor, Clock& clock) {
  auto waker = std::make_shared<BlockingWaker>();
  PollContext cx(waker, clock);
  while (true) {
    waker->Reset();
    cx.ResetWakeDeadline();
    const Actor::Step step = actor.Poll(cx);
    if (step == Actor::Step::kDone) return;
    if (step == Actor::Step::kPending) {
      waker->WaitUntil(clock, cx.wake_deadline());
    }
  }
}

// The thread of one actor.
void RunActor(Actor& actor, BarrierCoordinator& coordinator, Clock& clock) {
  PollUntilDone(actor, clock);
  // The coordinator learnt why (BarrierCoordinator::ActorEnded).
  if (actor.state() == Actor::State::kStopped) return;
  coordinator.WaitUntilCheckpointsStopped();
  actor.Abandon();
}

// Sends `barrier` into the graph and waits until the view collected it.
absl::Status InjectAndWait(JobGraph& graph, BarrierCoordinator& coordinator,
                           Barrier barrier, Clock& clock) {
  if (absl::Status status = graph.barriers->Send(std::move(barrier), clock);
      !status.ok()) {
    absl::Status error = coordinator.error();
    return error.ok() ? status : error;
  }
  BACKFILL_RETURN_IF_ERROR(coordinator.WaitCollected());
  return coordinator.OnCollected(graph);
}

}  // namespace

absl::Status RunThreaded(JobGraph& graph, BarrierCoordinator& coordinator,
                         absl::Duration barrier_interval, Clock& clock) {
  // One per actor of graph.actors, in order; a rescale appends actors.
  std::vector<std::thread> threads;
  auto start_new_actors = [&] {
    while (threads.size() < graph.actors.size()) {
      Actor& actor = *graph.actors[threads.size()];
      threads.emplace_back([&actor, &coordinator, &clock] {
        RunActor(actor, coordinator, clock);
      });
    }
  };
  // A rescale's old actors: their last barrier is checkpointed.
  auto retire_actors = [&] {
    for (Actor* retired : coordinator.TakeRetiredActors()) {
      for (size_t i = 0; i < graph.actors.size(); ++i) {
        if (graph.actors[i].get() != retired) continue;
        if (threads[i].joinable()) threads[i].join();
        retired->Abandon();
      }
    }
  };
  start_new_actors();
  absl::Status status = [&]() -> absl::Status {
    BACKFILL_ASSIGN_OR_RETURN(Barrier first, coordinator.NextBarrier(graph));
    BACKFILL_RETURN_IF_ERROR(
        InjectAndWait(graph, coordinator, std::move(first), clock));
    absl::Time next_tick = clock.Now();
    while (!coordinator.finished()) {
      next_tick += barrier_interval;
      clock.SleepUntil(next_tick);
      BACKFILL_ASSIGN_OR_RETURN(Barrier barrier,
                                coordinator.NextBarrier(graph));
      start_new_actors();
      BACKFILL_RETURN_IF_ERROR(
          InjectAndWait(graph, coordinator, std::move(barrier), clock));
      retire_actors();
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) coordinator.Fail(status);
  coordinator.StopCheckpoints();
  // Channels of a rescale that never took effect: their actors see them end.
  graph.exchange.Clear();
  // End of the barrier stream: a source still running ends, and so, one
  // after the other, does every actor downstream of it.
  graph.barriers->Close();
  for (std::thread& thread : threads) {
    if (thread.joinable()) thread.join();
  }
  return status;
}

absl::Status RunActorsThreaded(JobGraph& graph, Clock& clock,
                               const ActorFailureHooks& hooks) {
  // The first actor to fail (in time): the others may fail only because its
  // channels closed.
  Mutex mu;
  absl::Status first_error;
  std::vector<std::thread> threads;
  for (const std::unique_ptr<Actor>& actor : graph.actors) {
    threads.emplace_back([&actor = *actor, &mu, &first_error, &clock, &hooks] {
      PollUntilDone(actor, clock);
      if (actor.state() == Actor::State::kStopped) return;
      const absl::Status error =
          actor.state() == Actor::State::kFailed
              ? actor.status()
              : absl::InternalError(absl::StrCat(
                    actor.identity(), ": input ended before the stop barrier"));
      bool first = false;
      {
        MutexLock lock(&mu);
        if (first_error.ok()) {
          first_error = error;
          first = true;
        }
      }
      if (first && hooks.on_failure) hooks.on_failure(error);
      if (hooks.hold) hooks.hold();
      actor.Abandon();
    });
  }
  for (std::thread& thread : threads) thread.join();
  MutexLock lock(&mu);
  return first_error;
}

}  // namespace backfill
