#include "storage/rocksdb/gc_scheduler.h"

#include <utility>

namespace backfill {
namespace rocksdb_internal {

GcScheduler::GcScheduler(GcSchedulerOptions options, GcHooks hooks)
    : options_(options), hooks_(std::move(hooks)) {
  if (options_.tombstone_fraction > 0) {
    thread_ = std::thread([this] { Run(); });
  }
}

GcScheduler::~GcScheduler() { Stop(); }

void GcScheduler::Stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_cv_.SignalAll();
  hooks_.abort_compaction();
  thread_.join();
}

void GcScheduler::NoteTombstones(uint64_t count) {
  uint64_t pending;
  {
    MutexLock lock(&mu_);
    pending_tombstones_ += count;
    pending = pending_tombstones_;
    if (!thread_.joinable() || stopping_ || due_) return;
  }
  if (pending < options_.min_tombstones) return;
  // The estimate is read without mu_: it may do I/O.
  const uint64_t stored = hooks_.estimate_stored_versions();
  if (static_cast<double>(pending) <
      options_.tombstone_fraction * static_cast<double>(stored)) {
    return;
  }
  {
    MutexLock lock(&mu_);
    due_ = true;
  }
  wake_cv_.SignalAll();
}

absl::Status GcScheduler::RunFullCompaction() {
  MutexLock compact_lock(&compact_mu_);
  {
    MutexLock lock(&mu_);
    pending_tombstones_ = 0;
    ++full_compactions_;
  }
  return hooks_.full_compaction();
}

GcStats GcScheduler::WaitForGc() {
  MutexLock lock(&mu_);
  while (!stopping_ && (due_ || running_)) idle_cv_.Wait(&mu_);
  GcStats stats;
  stats.full_compactions = full_compactions_;
  stats.pending_tombstones = pending_tombstones_;
  stats.last_error = last_error_;
  return stats;
}

void GcScheduler::Run() {
  while (true) {
    {
      MutexLock lock(&mu_);
      while (!stopping_ && !due_) wake_cv_.Wait(&mu_);
      if (stopping_) break;
      due_ = false;
      running_ = true;
    }
    absl::Status status = RunFullCompaction();
    MutexLock lock(&mu_);
    running_ = false;
    if (!stopping_) last_error_ = status;
    idle_cv_.SignalAll();
  }
  idle_cv_.SignalAll();
}

}  // namespace rocksdb_internal
}  // namespace backfill
