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
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_cv_.notify_all();
  hooks_.abort_compaction();
  thread_.join();
}

void GcScheduler::NoteTombstones(uint64_t count) {
  uint64_t pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
    std::lock_guard<std::mutex> lock(mu_);
    due_ = true;
  }
  wake_cv_.notify_all();
}

absl::Status GcScheduler::RunFullCompaction() {
  std::lock_guard<std::mutex> compact_lock(compact_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_tombstones_ = 0;
    ++full_compactions_;
  }
  return hooks_.full_compaction();
}

GcStats GcScheduler::WaitForGc() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return stopping_ || (!due_ && !running_); });
  GcStats stats;
  stats.full_compactions = full_compactions_;
  stats.pending_tombstones = pending_tombstones_;
  stats.last_error = last_error_;
  return stats;
}

void GcScheduler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_cv_.wait(lock, [&] { return stopping_ || due_; });
    if (stopping_) break;
    due_ = false;
    running_ = true;
    lock.unlock();
    absl::Status status = RunFullCompaction();
    lock.lock();
    running_ = false;
    if (!stopping_) last_error_ = status;
    idle_cv_.notify_all();
  }
  idle_cv_.notify_all();
}

}  // namespace rocksdb_internal
}  // namespace backfill
