#include "executor/backfill/first_barrier.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "executor/message.h"

namespace backfill {

absl::StatusOr<std::optional<EpochPair>> PollFirstBarrier(
    Executor& input, PollContext& cx, BackfillControls& controls,
    BackfillOutput& output) {
  PollResult result = input.PollNext(cx);
  if (result.is_pending()) return std::nullopt;
  if (result.is_error()) return result.status();
  if (result.is_end()) {
    return absl::FailedPreconditionError(
        "upstream ended before the first barrier");
  }
  const Barrier* barrier = std::get_if<Barrier>(&result.message());
  if (barrier == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("the first message must be a barrier, got ",
                     MessageDebugString(result.message())));
  }
  controls.ApplyFirstBarrier(*barrier);
  const EpochPair epoch = barrier->epoch;
  output.Push(std::move(result).message());
  return epoch;
}

}  // namespace backfill
