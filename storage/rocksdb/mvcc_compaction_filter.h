// Garbage collection of MVCC versions during flushes and compactions
// (storage/FORMAT.md, "Garbage collection").
//
//   auto gc = std::make_shared<GcEpochs>(committed_epoch);
//   family_options.compaction_filter_factory =
//       std::make_shared<MvccCompactionFilterFactory>(gc);
//   auto pin = gc->Pin(read_epoch);   // versions read_epoch sees stay
//
// Each compaction gets a safe epoch S = min(committed epoch, oldest pinned
// read). Per user key the newest version <= S is what every read at or
// after S sees: older versions are dropped, and that version too if it is a
// tombstone and the compaction includes every file.
#ifndef STORAGE_ROCKSDB_MVCC_COMPACTION_FILTER_H_
#define STORAGE_ROCKSDB_MVCC_COMPACTION_FILTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "rocksdb/compaction_filter.h"
#include "storage/epoch.h"
#include "storage/internal/committed_layer.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace rocksdb_internal {

// The epochs reads still need. The horizon is the largest safe epoch any
// compaction has used: a read below it may miss versions. Thread-safe.
class GcEpochs {
 public:
  explicit GcEpochs(Epoch committed) : committed_(committed.value()) {}

  // Keeps the versions visible at `epoch` until the pin is destroyed. The
  // pin must not outlive this object.
  std::unique_ptr<storage_internal::EpochPin> Pin(Epoch epoch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The committed epoch advanced (never moves back).
  void SetCommitted(Epoch epoch) ABSL_LOCKS_EXCLUDED(mu_);
  // The safe epoch for a compaction starting now; raises the horizon to it.
  Epoch BeginCompaction() ABSL_LOCKS_EXCLUDED(mu_);
  // Versions older than `epoch` may be gone already (a store reopened at
  // committed epoch C: an earlier process's compactions used safe epochs up
  // to C, and its pins died with it): raises the horizon to `epoch`.
  void RaiseHorizon(Epoch epoch);
  // From now on every compaction gets safe epoch 0 (keeps every version):
  // the owner of the pins is about to drop them (CommittedLayer::
  // StopGarbageCollection). Compactions already running keep theirs.
  void Freeze() ABSL_LOCKS_EXCLUDED(mu_);
  Epoch horizon() const { return Epoch(horizon_.load()); }

 private:
  class EpochPinImpl;

  Mutex mu_;
  std::multiset<uint64_t> pins_ ABSL_GUARDED_BY(mu_);
  uint64_t committed_ ABSL_GUARDED_BY(mu_);
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> horizon_{0};
};

// Sees the keys of one (sub)compaction in comparator order; one filter
// serves one compaction on one thread (max_subcompactions = 1 keeps every
// version of a key in one filter). Keys that are not full keys and entries
// that are not plain values are kept (not ours to judge; a corrupt key
// stays visible to reads, which report it).
class MvccCompactionFilter final : public rocksdb::CompactionFilter {
 public:
  MvccCompactionFilter(Epoch safe, bool full_compaction)
      : safe_(safe), full_compaction_(full_compaction) {}

  Decision FilterV2(int level, const rocksdb::Slice& key, ValueType value_type,
                    const rocksdb::Slice& existing_value,
                    std::string* new_value,
                    std::string* skip_until) const override;
  const char* Name() const override { return "backfill.MvccCompactionFilter"; }

 private:
  const Epoch safe_;
  const bool full_compaction_;
  mutable std::string last_user_key_;
  // Whether a version <= safe_ of last_user_key_ has been seen.
  mutable bool shadowed_ = false;
};

// Makes a filter per compaction and per flush (a version shadowed inside one
// memtable never reaches a table file; a flush is never full, so its
// tombstones stay).
class MvccCompactionFilterFactory final
    : public rocksdb::CompactionFilterFactory {
 public:
  explicit MvccCompactionFilterFactory(std::shared_ptr<GcEpochs> gc)
      : gc_(std::move(gc)) {}
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  bool ShouldFilterTableFileCreation(
      rocksdb::TableFileCreationReason reason) const override;
  const char* Name() const override {
    return "backfill.MvccCompactionFilterFactory";
  }

 private:
  const std::shared_ptr<GcEpochs> gc_;
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_MVCC_COMPACTION_FILTER_H_
