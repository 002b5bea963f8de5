#include "executor/runtime/sabotage_for_test.h"

#include <optional>
#include <utility>
#include <variant>

#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

class SabotagedOutput final : public ActorOutput {
 public:
  SabotagedOutput(std::unique_ptr<ActorOutput> inner, uint32_t drop_nth,
                  uint32_t duplicate_nth)
      : inner_(std::move(inner)),
        drop_nth_(drop_nth),
        duplicate_nth_(duplicate_nth) {}

  absl::Status Push(Message message) override {
    if (std::holds_alternative<StreamChunk>(message)) {
      ++chunks_;
      if (drop_nth_ != 0 && chunks_ % drop_nth_ == 0) return absl::OkStatus();
      if (duplicate_nth_ != 0 && chunks_ % duplicate_nth_ == 0) {
        repeat_ = message;
      }
    }
    return inner_->Push(std::move(message));
  }

  absl::StatusOr<bool> PollFlush(PollContext& cx) override {
    while (true) {
      BACKFILL_ASSIGN_OR_RETURN(const bool flushed, inner_->PollFlush(cx));
      if (!flushed || !repeat_.has_value()) return flushed;
      BACKFILL_RETURN_IF_ERROR(inner_->Push(std::move(*repeat_)));
      repeat_.reset();
    }
  }

  void Close() override { inner_->Close(); }

 private:
  std::unique_ptr<ActorOutput> inner_;
  const uint32_t drop_nth_;
  const uint32_t duplicate_nth_;
  uint64_t chunks_ = 0;
  // The copy of a chunk to deliver again once the original is delivered.
  std::optional<Message> repeat_;
};

}  // namespace

std::unique_ptr<ActorOutput> PlantOutputSabotage(
    std::unique_ptr<ActorOutput> output, uint32_t drop_every_nth_chunk,
    uint32_t duplicate_every_nth_chunk) {
  if (drop_every_nth_chunk == 0 && duplicate_every_nth_chunk == 0) {
    return output;
  }
  return std::make_unique<SabotagedOutput>(
      std::move(output), drop_every_nth_chunk, duplicate_every_nth_chunk);
}

}  // namespace backfill
