#include "executor/backfill/commit_waiter.h"

#include <utility>

namespace backfill {

CommitWaiter::CommitWaiter(StateStore& store)
    : store_(store), slot_(std::make_shared<WakeSlot>()) {}

CommitWaiter::~CommitWaiter() { Stop(); }

bool CommitWaiter::Ready(absl::FunctionRef<bool()> ready, PollContext& cx) {
  if (ready()) return true;
  {
    MutexLock lock(&slot_->mu);
    slot_->waker = cx.waker();
  }
  if (!listener_id_.has_value()) {
    std::weak_ptr<WakeSlot> weak = slot_;
    listener_id_ = store_.AddCommitListener([weak](Epoch) {
      if (std::shared_ptr<WakeSlot> slot = weak.lock()) {
        std::shared_ptr<Waker> waker;
        {
          MutexLock lock(&slot->mu);
          waker = slot->waker;
        }
        if (waker != nullptr) waker->Wake();
      }
    });
  }
  return ready();
}

void CommitWaiter::Stop() {
  if (!listener_id_.has_value()) return;
  store_.RemoveCommitListener(*listener_id_);
  listener_id_.reset();
}

}  // namespace backfill
