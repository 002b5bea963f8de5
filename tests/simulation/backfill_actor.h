// BackfillActor: one backfill actor of the simulation, as a deterministic
// single-threaded scheduler runs it: an ArrangementBackfillExecutor over its
// own replicated table and progress table (its vnodes), whose input is a
// ScriptedExecutor fed by the dispatcher, plus its waker and wake deadline.
// testonly.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto actor, BackfillActor::Create(config, ...));
//   if (actor->Runnable(clock.Now())) PollResult r = actor->Poll(clock);
#ifndef TESTS_SIMULATION_BACKFILL_ACTOR_H_
#define TESTS_SIMULATION_BACKFILL_ACTOR_H_

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/poll.h"
#include "executor/testing/scripted_executor.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_store.h"
#include "tests/simulation/sim_table.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace simulation {

struct BackfillActorConfig {
  // The actor's vnodes (non-empty).
  VnodeBitmap owned;
  // actor_id, fragment_id, chunk_size, rate_limit; output_indices and clock
  // are set by Create.
  ArrangementBackfillOptions options;
  TableId progress_table_id = 1000;
};

class BackfillActor {
 public:
  // `reporter` may be null. REQUIRES: table, store, clock and reporter
  // outlive the actor.
  static absl::StatusOr<std::unique_ptr<BackfillActor>> Create(
      const SimTable& table, StateStore& store, SimulatedClock& clock,
      ProgressReporter* reporter, BackfillActorConfig config);

  // Polls the executor once.
  PollResult Poll();
  // Whether a poll may make progress: never polled, the last poll was Ready,
  // the waker was woken since, or the wake deadline passed.
  bool Runnable(absl::Time now) const;
  // The wake deadline of the last Pending poll (InfiniteFuture if none).
  absl::Time deadline() const { return deadline_; }

  testing::ScriptedExecutor& input() { return *input_; }
  ArrangementBackfillExecutor& executor() { return *executor_; }
  const VnodeBitmap& owned() const { return config_.owned; }
  ActorId actor_id() const { return config_.options.actor_id; }

 private:
  class FlagWaker final : public Waker {
   public:
    void Wake() override { woken_.store(true); }
    bool woken() const { return woken_.load(); }
    void Clear() { woken_.store(false); }

   private:
    std::atomic<bool> woken_{false};
  };

  BackfillActor(BackfillActorConfig config, SimulatedClock& clock)
      : config_(std::move(config)), clock_(clock) {}

  BackfillActorConfig config_;
  SimulatedClock& clock_;
  testing::ScriptedExecutor* input_ = nullptr;  // owned by the executor
  std::unique_ptr<ArrangementBackfillExecutor> executor_;
  std::shared_ptr<FlagWaker> waker_ = std::make_shared<FlagWaker>();
  bool ready_ = true;
  absl::Time deadline_ = absl::InfiniteFuture();
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_BACKFILL_ACTOR_H_
