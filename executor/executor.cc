#include "executor/executor.h"

#include <memory>
#include <utility>

namespace backfill {

absl::StatusOr<std::optional<Message>> NextMessage(Executor& executor,
                                                   Clock& clock) {
  auto waker = std::make_shared<BlockingWaker>();
  while (true) {
    // Reset before polling: a Wake() during the poll must not be lost.
    waker->Reset();
    PollContext cx(waker, clock);
    PollResult result = executor.PollNext(cx);
    switch (result.kind()) {
      case PollResult::Kind::kReady:
        return std::optional<Message>(std::move(result).message());
      case PollResult::Kind::kEnd:
        return std::optional<Message>();
      case PollResult::Kind::kError:
        return result.status();
      case PollResult::Kind::kPending:
        waker->WaitUntil(clock, cx.wake_deadline());
        break;
    }
  }
}

}  // namespace backfill
