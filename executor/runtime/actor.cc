#include "executor/runtime/actor.h"

#include <cassert>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace backfill {

absl::Status ChannelOutput::Push(Message message) {
  assert(!held_.has_value());
  held_.emplace(std::move(message));
  return absl::OkStatus();
}

absl::StatusOr<bool> ChannelOutput::PollFlush(PollContext& cx) {
  if (!held_.has_value()) return true;
  switch (sender_.PollSend(*held_, cx)) {
    case SendResult::kSent:
      held_.reset();
      return true;
    case SendResult::kFull:
      return false;
    case SendResult::kClosed:
      break;
  }
  held_.reset();
  return absl::CancelledError("channel receiver closed");
}

Actor::Actor(ActorId id, BoxedExecutor root,
             std::unique_ptr<ActorOutput> output, ActorCallbacks callbacks)
    : id_(id),
      identity_(root->info().identity),
      output_(std::move(output)),
      root_(std::move(root)),
      callbacks_(std::move(callbacks)) {}

Actor::Step Actor::Poll(PollContext& cx) {
  if (state_ != State::kRunning) return Step::kDone;
  if (!flushing_) {
    PollResult result = root_->PollNext(cx);
    switch (result.kind()) {
      case PollResult::Kind::kPending:
        return Step::kPending;
      case PollResult::Kind::kError:
        return Finish(State::kFailed, result.status());
      case PollResult::Kind::kEnd:
        return Finish(State::kEnded, absl::OkStatus());
      case PollResult::Kind::kReady:
        break;
    }
    Message message = std::move(result).message();
    if (const auto* barrier = std::get_if<Barrier>(&message)) {
      if (callbacks_.on_barrier)
        callbacks_.on_barrier(*barrier, cx.clock().Now());
      stopping_ = barrier->IsStopFor(id_);
    }
    if (absl::Status status = output_->Push(std::move(message)); !status.ok()) {
      return Finish(State::kFailed, std::move(status));
    }
    flushing_ = true;
  }
  absl::StatusOr<bool> flushed = output_->PollFlush(cx);
  if (!flushed.ok()) {
    // Name the actor: a closed downstream is not the actor's own error.
    return Finish(State::kFailed,
                  absl::Status(flushed.status().code(),
                               absl::StrCat("actor ", id_, " (", identity_,
                                            "): output: ",
                                            flushed.status().message())));
  }
  if (!*flushed) return Step::kPending;
  flushing_ = false;
  if (stopping_) return Finish(State::kStopped, absl::OkStatus());
  return Step::kProgress;
}

Actor::Step Actor::Finish(State state, absl::Status status) {
  state_ = state;
  status_ = std::move(status);
  if (callbacks_.on_end) callbacks_.on_end(*this);
  output_->Close();
  return Step::kDone;
}

}  // namespace backfill
