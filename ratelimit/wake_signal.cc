#include "ratelimit/wake_signal.h"

#include <algorithm>
#include <cassert>

namespace backfill {

// The flag is set before any listener's mutex is taken: a waiter evaluates
// its predicate under its own mutex, so either it sees the flag or it is
// already blocked on its cv when we notify (taking its mutex in between
// closes the window between "predicate false" and "blocked").
void WakeSignal::Notify() {
  notified_.store(true, std::memory_order_release);
  MutexLock lock(&mu_);
  for (const auto& [mutex, cv] : listeners_) {
    { MutexLock waiter_lock(mutex); }
    cv->SignalAll();
  }
}

WakeSignal::Listener::Listener(WakeSignal& signal, Mutex& mutex, CondVar& cv)
    : signal_(signal), mutex_(&mutex), cv_(&cv) {
  MutexLock lock(&signal_.mu_);
  signal_.listeners_.emplace_back(mutex_, cv_);
}

WakeSignal::Listener::~Listener() {
  MutexLock lock(&signal_.mu_);
  auto& listeners = signal_.listeners_;
  auto it = std::find(listeners.begin(), listeners.end(),
                      std::make_pair(mutex_, cv_));
  assert(it != listeners.end());
  listeners.erase(it);
}

}  // namespace backfill
