#include "executor/runtime/deterministic_driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/poll.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// Marks its task runnable. Wake may come from inside a poll (a self-wake or
// a channel of the same thread); never blocks.
class FlagWaker final : public Waker {
 public:
  void Wake() override { woken_.store(true, std::memory_order_relaxed); }
  // True if woken since the last call.
  bool Take() { return woken_.exchange(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> woken_{true};
};

struct Task {
  Actor* actor = nullptr;
  std::shared_ptr<FlagWaker> waker = std::make_shared<FlagWaker>();
  std::unique_ptr<PollContext> cx;
  // Poll again at once (the last poll made progress or was woken).
  bool runnable = true;
  absl::Time deadline = absl::InfiniteFuture();
  // Ended before its stop barrier: abandon once checkpoints stopped.
  bool abandon = false;
};

class Scheduler {
 public:
  Scheduler(JobGraph& graph, BarrierCoordinator& coordinator,
            const DeterministicDriverOptions& options, SimulatedClock& clock)
      : graph_(graph),
        coordinator_(coordinator),
        options_(options),
        clock_(clock),
        random_(options.seed) {
    AddNewActors();
  }

  absl::Status Run() {
    absl::Status status = Coordinate();
    if (!status.ok()) coordinator_.Fail(status);
    coordinator_.StopCheckpoints();
    for (Task& task : tasks_) {
      if (task.abandon) task.actor->Abandon();
    }
    // Channels of a rescale that never took effect: their actors see them
    // end. End of the barrier stream: let every actor that can still run end.
    graph_.exchange.Clear();
    graph_.barriers->Close();
    for (uint64_t step = 0; step < options_.max_steps; ++step) {
      std::vector<size_t> ready = Ready();
      if (ready.empty()) break;
      Poll(ready[Pick(ready.size())]);
    }
    return status;
  }

 private:
  absl::Status Coordinate() {
    std::optional<Message> unsent;  // a barrier waiting for room
    bool in_flight = false;
    bool first = true;
    absl::Time next_barrier = clock_.Now();
    auto coordinator_waker = std::make_shared<FlagWaker>();
    PollContext coordinator_cx(coordinator_waker, clock_);
    for (uint64_t step = 1; step <= options_.max_steps; ++step) {
      if (CrashDue(step, in_flight && !unsent.has_value())) {
        return absl::UnavailableError(
            absl::StrCat("injected crash at step ", step, " (",
                         CrashPhaseName(options_.crash_phase), ", seed ",
                         options_.seed, ")"));
      }
      BACKFILL_RETURN_IF_ERROR(coordinator_.error());
      // The coordinator acts first whenever it can.
      if (!in_flight && clock_.Now() >= next_barrier) {
        BACKFILL_ASSIGN_OR_RETURN(Barrier barrier,
                                  coordinator_.NextBarrier(graph_));
        AddNewActors();
        unsent.emplace(std::move(barrier));
        in_flight = true;
      }
      if (unsent.has_value()) {
        switch (graph_.barriers->PollSend(*unsent, coordinator_cx)) {
          case SendResult::kSent:
            unsent.reset();
            break;
          case SendResult::kFull:
            break;
          case SendResult::kClosed:
            return absl::CancelledError("the source is gone");
        }
      }
      if (in_flight && !unsent.has_value() &&
          coordinator_.IsCollected(coordinator_.epoch().curr)) {
        BACKFILL_RETURN_IF_ERROR(coordinator_.OnCollected(graph_));
        RetireActors();
        if (coordinator_.finished()) return absl::OkStatus();
        in_flight = false;
        if (first) next_barrier = clock_.Now();
        first = false;
        next_barrier += options_.barrier_interval;
        continue;
      }
      if (in_flight && clock_.Now() >= coordinator_.deadline()) {
        return coordinator_.DeadlineExceeded();  // on simulated time
      }
      std::vector<size_t> ready = Ready();
      std::bernoulli_distribution early(options_.early_barrier_probability);
      if (!ready.empty() && !(!in_flight && early(random_))) {
        Poll(ready[Pick(ready.size())]);
        continue;
      }
      // Nothing to run (or an early barrier): move time.
      absl::Time wake = absl::InfiniteFuture();
      if (ready.empty()) {
        for (const Task& task : tasks_) {
          if (task.actor->state() == Actor::State::kRunning) {
            wake = std::min(wake, task.deadline);
          }
        }
      }
      if (!in_flight) wake = std::min(wake, next_barrier);
      if (wake == absl::InfiniteFuture()) {
        return absl::InternalError(absl::StrCat(
            "deterministic driver (seed ", options_.seed,
            "): no actor can run and nothing will wake one, barrier ",
            coordinator_.epoch().DebugString(), " in flight"));
      }
      if (in_flight) wake = std::min(wake, coordinator_.deadline());
      clock_.SetTime(wake);  // Rounds up: a sub-nanosecond deadline is met.
    }
    return absl::InternalError(absl::StrCat("deterministic driver (seed ",
                                            options_.seed, "): more than ",
                                            options_.max_steps, " steps"));
  }

  // A task for every actor of the graph not seen yet (a rescale adds some).
  void AddNewActors() {
    for (; actors_seen_ < graph_.actors.size(); ++actors_seen_) {
      Task task;
      task.actor = graph_.actors[actors_seen_].get();
      task.cx = std::make_unique<PollContext>(task.waker, clock_);
      tasks_.push_back(std::move(task));
    }
  }

  // Drops the tasks of the actors a rescale retired, and abandons them.
  void RetireActors() {
    for (Actor* retired : coordinator_.TakeRetiredActors()) {
      retired->Abandon();
      std::erase_if(tasks_,
                    [retired](const Task& task) { return task.actor == retired; });
    }
  }

  // Whether the crash of options_ happens at `step`; `delivered`: the
  // barrier of the coordinator's epoch is in the graph.
  bool CrashDue(uint64_t step, bool delivered) const {
    if (options_.crash_at_step == 0 || step < options_.crash_at_step) {
      return false;
    }
    using Phase = DeterministicDriverOptions::CrashPhase;
    switch (options_.crash_phase) {
      case Phase::kAnyStep:
        return step == options_.crash_at_step;
      case Phase::kBarrierInFlight:
        return delivered && !coordinator_.IsCollected(coordinator_.epoch().curr);
      case Phase::kBarrierCollected:
        return delivered && coordinator_.IsCollected(coordinator_.epoch().curr);
    }
    return false;
  }

  static const char* CrashPhaseName(
      DeterministicDriverOptions::CrashPhase phase) {
    using Phase = DeterministicDriverOptions::CrashPhase;
    switch (phase) {
      case Phase::kAnyStep:
        return "any step";
      case Phase::kBarrierInFlight:
        return "barrier in flight";
      case Phase::kBarrierCollected:
        return "barrier collected, before its checkpoint";
    }
    return "?";
  }

  // Indices of the tasks that can be polled now.
  std::vector<size_t> Ready() {
    std::vector<size_t> ready;
    const absl::Time now = clock_.Now();
    for (size_t i = 0; i < tasks_.size(); ++i) {
      Task& task = tasks_[i];
      if (task.actor->state() != Actor::State::kRunning) continue;
      if (task.waker->Take()) task.runnable = true;
      if (task.runnable || task.deadline <= now) ready.push_back(i);
    }
    return ready;
  }

  size_t Pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(random_);
  }

  void Poll(size_t index) {
    Task& task = tasks_[index];
    task.runnable = false;
    task.cx->ResetWakeDeadline();
    const Actor::Step step = task.actor->Poll(*task.cx);
    task.deadline = task.cx->wake_deadline();
    if (step == Actor::Step::kProgress) task.runnable = true;
    if (step != Actor::Step::kDone) return;
    // The coordinator learnt why (BarrierCoordinator::ActorEnded).
    task.abandon = task.actor->state() != Actor::State::kStopped;
  }

  JobGraph& graph_;
  BarrierCoordinator& coordinator_;
  const DeterministicDriverOptions& options_;
  SimulatedClock& clock_;
  std::mt19937_64 random_;
  std::vector<Task> tasks_;
  // graph_.actors[0, actors_seen_) have a task (or had: retired).
  size_t actors_seen_ = 0;
};

}  // namespace

absl::Status RunDeterministic(JobGraph& graph, BarrierCoordinator& coordinator,
                              const DeterministicDriverOptions& options,
                              SimulatedClock& clock) {
  return Scheduler(graph, coordinator, options, clock).Run();
}

}  // namespace backfill
