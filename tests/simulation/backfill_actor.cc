#include "tests/simulation/backfill_actor.h"

#include <utility>

#include "storage/replicated_state_table.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace simulation {

absl::StatusOr<std::unique_ptr<BackfillActor>> BackfillActor::Create(
    const SimTable& table, StateStore& store, SimulatedClock& clock,
    ProgressReporter* reporter, BackfillActorConfig config) {
  std::unique_ptr<BackfillActor> actor(
      new BackfillActor(std::move(config), clock));
  const BackfillActorConfig& c = actor->config_;
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<ReplicatedStateTable> replicated,
      ReplicatedStateTable::Create(table.catalog(), store, c.owned,
                                   table.s2_column_ids()));
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateTable> progress,
      StateTable::Create(
          BackfillProgressCatalog(table.catalog(), c.progress_table_id), store,
          c.owned));
  ExecutorInfo input_info;
  input_info.schema = table.s2_types();
  input_info.identity = "dispatcher output";
  testing::ScriptedExecutorOptions input_options;
  input_options.when_exhausted =
      testing::ScriptedExecutorOptions::WhenExhausted::kPending;
  auto input =
      std::make_unique<testing::ScriptedExecutor>(input_info, input_options);
  actor->input_ = input.get();
  ArrangementBackfillOptions options = c.options;
  options.output_indices = table.output_indices();
  options.clock = &clock;
  BACKFILL_ASSIGN_OR_RETURN(
      actor->executor_, ArrangementBackfillExecutor::Create(
                            std::move(replicated), std::move(input),
                            std::move(progress), reporter, nullptr, options));
  return actor;
}

PollResult BackfillActor::Poll() {
  waker_->Clear();
  PollContext cx(waker_, clock_);
  PollResult result = executor_->PollNext(cx);
  ready_ = !result.is_pending();
  deadline_ = result.is_pending() ? cx.wake_deadline() : absl::InfiniteFuture();
  return result;
}

bool BackfillActor::Runnable(absl::Time now) const {
  return ready_ || waker_->woken() || deadline_ <= now;
}

}  // namespace simulation
}  // namespace backfill
