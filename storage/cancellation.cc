#include "storage/cancellation.h"

#include <utility>

namespace backfill {

void Cancellation::Cancel() {
  MutexLock running(&running_);
  std::map<uint64_t, std::function<void()>> callbacks;
  {
    MutexLock lock(&mu_);
    if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
    callbacks.swap(callbacks_);
  }
  for (auto& [id, callback] : callbacks) callback();
}

uint64_t Cancellation::AddCallback(std::function<void()> callback) {
  {
    MutexLock lock(&mu_);
    if (!cancelled_.load(std::memory_order_acquire)) {
      const uint64_t id = next_id_++;
      callbacks_.emplace(id, std::move(callback));
      return id;
    }
  }
  callback();
  return 0;
}

void Cancellation::RemoveCallback(uint64_t id) {
  {
    MutexLock lock(&mu_);
    if (callbacks_.erase(id) > 0) return;
  }
  // Either never registered, or Cancel() took it: wait until Cancel() has
  // finished running callbacks.
  MutexLock running(&running_);
}

}  // namespace backfill
