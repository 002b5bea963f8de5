// PollFirstBarrier: the first start-up step every backfill executor takes.
// Its stream must open with a barrier; the barrier's Add mutation sets the
// pauses (BackfillControls::ApplyFirstBarrier), and the barrier is queued to
// be emitted at once, before any initialisation: the start-up then waits
// for the store to commit the epoch before it, and that commit needs this
// barrier collected downstream.
//
// clang-format off
//   absl::StatusOr<std::optional<EpochPair>> first =
//       PollFirstBarrier(*input_, cx, controls_, output_);
//   if (!first.ok()) return Fail(first.status());
//   if (!first->has_value()) return Step::kPending;
//   first_epoch_ = **first;   // then wait for ReadyToInit(first_epoch_)
// clang-format on
//
// Thread-safety: as the executor calling it (one task at a time).
#ifndef EXECUTOR_BACKFILL_FIRST_BARRIER_H_
#define EXECUTOR_BACKFILL_FIRST_BARRIER_H_

#include <optional>

#include "absl/status/statusor.h"
#include "executor/backfill/backfill_controls.h"
#include "executor/backfill/backfill_output.h"
#include "executor/barrier.h"
#include "executor/executor.h"
#include "executor/poll.h"

namespace backfill {

// Polls `input` once. Pending: nullopt (`input` arranged the wake-up). A
// barrier: applied to `controls`, pushed onto `output`, its epoch returned.
// Errors: `input`'s error as it is; FailedPrecondition when `input` ends or
// its first message is not a barrier (the message named).
absl::StatusOr<std::optional<EpochPair>> PollFirstBarrier(
    Executor& input, PollContext& cx, BackfillControls& controls,
    BackfillOutput& output);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_FIRST_BARRIER_H_
