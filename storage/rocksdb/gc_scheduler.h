// GcScheduler: runs full compactions (the only GC that drops tombstones) on
// a background thread once enough tombstones are waiting
// (storage/FORMAT.md, "Garbage collection"), and serialises them with the
// ones callers ask for. Knows nothing of RocksDB: the compaction is a hook.
//
//   GcScheduler gc({.tombstone_fraction = 0.2, .min_tombstones = 65536},
//                  {.full_compaction = [&] { return CompactEverything(); },
//                   .estimate_stored_versions = [&] { return Estimate(); },
//                   .abort_compaction = [&] { AbortCompaction(); }});
//   gc.NoteTombstones(tombstones_of_this_checkpoint);
//   GcStats stats = gc.WaitForGc();
#ifndef STORAGE_ROCKSDB_GC_SCHEDULER_H_
#define STORAGE_ROCKSDB_GC_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "storage/rocksdb/options.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace rocksdb_internal {

struct GcSchedulerOptions {
  // RocksDbStateStoreOptions::gc_tombstone_fraction: in [0, 1]; 0 = no
  // background thread (only RunFullCompaction compacts). Default 0.2.
  double tombstone_fraction = 0.2;
  // RocksDbStateStoreOptions::gc_min_tombstones: >= 1. Default 65536.
  uint64_t min_tombstones = 65536;
};

struct GcHooks {
  // Compacts every file, dropping what no read can see. Called by one
  // thread at a time.
  std::function<absl::Status()> full_compaction;
  // The number of stored versions (an estimate is enough).
  std::function<uint64_t()> estimate_stored_versions;
  // Makes a running full_compaction return soon (called by Stop).
  std::function<void()> abort_compaction;
};

// Thread-safe. The hooks must stay callable until Stop() or destruction.
class GcScheduler {
 public:
  // Starts the background thread if options.tombstone_fraction > 0.
  GcScheduler(GcSchedulerOptions options, GcHooks hooks);
  // Stop().
  ~GcScheduler();

  GcScheduler(const GcScheduler&) = delete;
  GcScheduler& operator=(const GcScheduler&) = delete;

  // Counts tombstones written (by a checkpoint, or found at open); wakes the
  // background thread once the count since the last full compaction reaches
  // max(min_tombstones, tombstone_fraction x estimate_stored_versions()).
  void NoteTombstones(uint64_t count) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs a full compaction now (after any running one): resets the count
  // (the compaction sees every tombstone so far) and returns the hook's
  // status. Blocks.
  absl::Status RunFullCompaction() ABSL_LOCKS_EXCLUDED(compact_mu_, mu_);

  // Blocks until no background compaction is due or running (or the
  // scheduler stops), then returns the statistics.
  GcStats WaitForGc() ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the background thread: aborts a running compaction and joins.
  // Idempotent. Afterwards nothing is scheduled (counts still accumulate).
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  const GcSchedulerOptions options_;
  const GcHooks hooks_;

  // One full compaction at a time.
  Mutex compact_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  Mutex mu_;
  CondVar wake_cv_;  // Wakes the background thread.
  CondVar idle_cv_;  // Signals WaitForGc.
  uint64_t pending_tombstones_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t full_compactions_ ABSL_GUARDED_BY(mu_) = 0;
  bool due_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // Started last, joined first.
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_GC_SCHEDULER_H_
