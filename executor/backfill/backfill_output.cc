#include "executor/backfill/backfill_output.h"

#include <cassert>
#include <utility>
#include <variant>

namespace backfill {

Message BackfillOutput::Pop(absl::Time now) {
  assert(!messages_.empty());
  Message message = std::move(messages_.front());
  messages_.pop_front();
  if (std::holds_alternative<Barrier>(message) && !arrivals_.empty()) {
    barrier_latency_seconds_.Observe(
        absl::ToDoubleSeconds(now - arrivals_.front()));
    arrivals_.pop_front();
  }
  return message;
}

}  // namespace backfill
