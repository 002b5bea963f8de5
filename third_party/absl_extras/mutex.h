// Mutex, MutexLock, CondVar: std::mutex and std::condition_variable with the
// capability annotations that clang's -Wthread-safety checks (bazel build
// --config=clang), spelled like absl::Mutex / absl::MutexLock / absl::CondVar.
//
//   Mutex mu_;
//   CondVar cv_;
//   int count_ ABSL_GUARDED_BY(mu_) = 0;
//
//   void Increment() {
//     MutexLock lock(&mu_);
//     ++count_;
//     cv_.SignalAll();
//   }
//   void AwaitPositive() {
//     MutexLock lock(&mu_);
//     while (count_ <= 0) cv_.Wait(&mu_);
//   }
//
// Why not absl::Mutex: Debian's abseil is not built with ThreadSanitizer
// annotations, so TSan cannot see absl::Mutex synchronisation and reports
// false races. Why not std::mutex directly: libstdc++'s std::mutex carries no
// capability attribute, so clang cannot check ABSL_GUARDED_BY against it.
// This wrapper is a std::mutex underneath (TSan sees every lock and unlock)
// with the attribute on top. Predicate waits with a deadline go through
// Clock::WaitUntil (third_party/absl_extras/clock.h), so that they run on
// simulated time in tests.
#ifndef THIRD_PARTY_ABSL_EXTRAS_MUTEX_H_
#define THIRD_PARTY_ABSL_EXTRAS_MUTEX_H_

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace backfill {

// An exclusive, non-recursive lock. Thread-safe.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  // REQUIRES: not held.
  ~Mutex() = default;

  // Blocks until the calling thread holds the lock.
  // REQUIRES: the calling thread does not hold it.
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mutex_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }

  // Takes the lock if it is free; returns whether it did. Never blocks.
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    if (!mutex_.try_lock()) return false;
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }

  // REQUIRES: the calling thread holds the lock.
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    AssertHeld();
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mutex_.unlock();
  }

  // Tells the analysis that the lock is held here (for code it cannot follow,
  // e.g. a callback documented to run under the lock); in debug builds,
  // also checks it (assert).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    assert(owner_.load(std::memory_order_relaxed) ==
               std::this_thread::get_id() &&
           "backfill::Mutex is not held by this thread");
  }

 private:
  friend class CondVar;

  std::mutex mutex_;
  // The thread holding mutex_, or std::thread::id() when free; only for
  // AssertHeld. Relaxed is enough: a thread only needs to see its own writes
  // (another thread writes only after taking mutex_, so after our Unlock).
  std::atomic<std::thread::id> owner_;
};

// Holds `mu` for its scope. The only way most code should take a Mutex.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

// A condition variable for Mutex. Waits may wake spuriously: wait in a loop
// on the condition (or use Clock::WaitUntil, which loops for you).
// Thread-safe.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;
  // REQUIRES: no thread waits on it.
  ~CondVar() = default;

  // Atomically releases `mu` and blocks until woken by Signal/SignalAll (or
  // spuriously); holds `mu` again on return.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // As Wait, but also returns after `timeout` (measured on a monotonic clock,
  // so wall-clock jumps do not matter). Returns true if the timeout expired
  // (absl::CondVar's convention), false if woken first (or spuriously).
  // absl::InfiniteDuration() waits like Wait; a timeout <= 0 returns true
  // at once, still holding `mu`.
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Wakes one waiter / every waiter. Callers usually hold the Mutex whose
  // state the waiters check, or have just released it.
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace backfill

#endif  // THIRD_PARTY_ABSL_EXTRAS_MUTEX_H_
