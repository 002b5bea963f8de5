// RocksDB implementation of the committed layer, plus everything that touches
// RocksDB: the MVCC key comparator, the garbage-collecting compaction filter,
// the fault-injecting file system, and the single rocksdb::Status ->
// absl::Status conversion. Layout and encodings: storage/FORMAT.md.
#include "storage/rocksdb/rocksdb_state_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/internal/endian.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rocksdb/cache.h"
#include "rocksdb/compaction_filter.h"
#include "rocksdb/comparator.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/slice.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/status.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/committed_layer.h"
#include "storage/internal/layered_state_store.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/saturating.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

using storage_internal::CommitBatch;
using storage_internal::EpochPin;

// ---- Status conversion: the only place a rocksdb::Status becomes an
// absl::Status. `operation` says what we were doing ("checkpoint write of
// epoch 7").
absl::Status FromRocksDb(const rocksdb::Status& status,
                         absl::string_view operation) {
  if (status.ok()) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (status.code()) {
    case rocksdb::Status::kNotFound:
      code = absl::StatusCode::kNotFound;
      break;
    case rocksdb::Status::kCorruption:
      code = absl::StatusCode::kDataLoss;
      break;
    case rocksdb::Status::kNotSupported:
      code = absl::StatusCode::kUnimplemented;
      break;
    case rocksdb::Status::kInvalidArgument:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case rocksdb::Status::kIOError:
      // A failed disk operation: the store is no longer trustworthy for
      // writes until reopened. A full disk is ResourceExhausted.
      code = status.subcode() == rocksdb::Status::kNoSpace
                 ? absl::StatusCode::kResourceExhausted
                 : absl::StatusCode::kInternal;
      break;
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kTryAgain:
    case rocksdb::Status::kShutdownInProgress:
      code = absl::StatusCode::kUnavailable;
      break;
    case rocksdb::Status::kAborted:
      code = absl::StatusCode::kAborted;
      break;
    default:
      code = absl::StatusCode::kInternal;
      break;
  }
  return absl::Status(code, absl::StrCat(std::string(operation), ": rocksdb ",
                                         status.ToString()));
}

// ---- Format (never change: persisted; see FORMAT.md)
// -------------------------

constexpr char kDataColumnFamily[] = "data";
constexpr char kFormatVersionKey[] = "format_version";
constexpr char kFormatVersion[] = "backfill.state_store.v1";
constexpr char kCommittedEpochKey[] = "committed_epoch";
constexpr char kTombstoneTag = '\x00';
constexpr char kValueTag = '\x01';

absl::string_view ToView(const rocksdb::Slice& slice) {
  return absl::string_view(slice.data(), slice.size());
}

std::string Escape(absl::string_view bytes) {
  return absl::CHexEscape(std::string(bytes));
}

// User key (table | vnode | pk) bytewise, then the inverted epoch suffix
// bytewise (= epoch descending). A key shorter than the suffix (only a
// corrupt one) is all user key.
class MvccKeyComparator final : public rocksdb::Comparator {
 public:
  const char* Name() const override { return "backfill.MvccKeyComparator.v1"; }
  int Compare(const rocksdb::Slice& a, const rocksdb::Slice& b) const override {
    const size_t a_user =
        a.size() >= kEpochSuffixSize ? a.size() - kEpochSuffixSize : a.size();
    const size_t b_user =
        b.size() >= kEpochSuffixSize ? b.size() - kEpochSuffixSize : b.size();
    const size_t common = std::min(a_user, b_user);
    int r = common == 0 ? 0 : std::memcmp(a.data(), b.data(), common);
    if (r != 0) return r;
    if (a_user != b_user) return a_user < b_user ? -1 : 1;
    const size_t a_suffix = a.size() - a_user;
    const size_t b_suffix = b.size() - b_user;
    const size_t common_suffix = std::min(a_suffix, b_suffix);
    r = common_suffix == 0
            ? 0
            : std::memcmp(a.data() + a_user, b.data() + b_user, common_suffix);
    if (r != 0) return r;
    return a_suffix == b_suffix ? 0 : (a_suffix < b_suffix ? -1 : 1);
  }
  // Key shortening would have to respect the suffix split; not worth it.
  void FindShortestSeparator(std::string* /*start*/,
                             const rocksdb::Slice& /*limit*/) const override {}
  void FindShortSuccessor(std::string* /*key*/) const override {}
  bool CanKeysWithDifferentByteContentsBeEqual() const override {
    return false;
  }
};

const rocksdb::Comparator* MvccComparator() {
  static const MvccKeyComparator* const comparator = new MvccKeyComparator();
  return comparator;
}

// ---- Garbage collection
// ------------------------------------------------------

// Tracks the epochs reads still need. The safe epoch of a compaction is
// min(committed epoch, oldest pinned read); the horizon is the largest safe
// epoch any compaction has used: reads below it may miss versions.
class GcState {
 public:
  class Pin final : public EpochPin {
   public:
    Pin(GcState* state, std::multiset<uint64_t>::iterator it)
        : state_(state), it_(it) {}
    ~Pin() override {
      std::lock_guard<std::mutex> lock(state_->mu_);
      state_->pins_.erase(it_);
    }

   private:
    GcState* const state_;
    const std::multiset<uint64_t>::iterator it_;
  };

  explicit GcState(Epoch committed) : committed_(committed.value()) {}

  std::unique_ptr<EpochPin> PinEpoch(Epoch epoch) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::make_unique<Pin>(this, pins_.insert(epoch.value()));
  }
  void SetCommitted(Epoch epoch) {
    std::lock_guard<std::mutex> lock(mu_);
    committed_ = std::max(committed_, epoch.value());
  }
  // The safe epoch for a compaction starting now.
  Epoch BeginCompaction() {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t safe = committed_;
    if (!pins_.empty()) safe = std::min(safe, *pins_.begin());
    uint64_t horizon = horizon_.load();
    while (safe > horizon && !horizon_.compare_exchange_weak(horizon, safe)) {
    }
    return Epoch(safe);
  }
  Epoch horizon() const { return Epoch(horizon_.load()); }

 private:
  std::mutex mu_;
  std::multiset<uint64_t> pins_ ABSL_GUARDED_BY(mu_);
  uint64_t committed_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> horizon_{0};
};

// Sees the keys of one (sub)compaction in comparator order. For each user
// key, the newest version <= safe epoch is the one every read at or after
// the safe epoch sees; all older versions are dropped. That version itself
// is dropped too if it is a tombstone and the compaction includes every
// file (only then are no older versions left elsewhere to resurrect).
class MvccCompactionFilter final : public rocksdb::CompactionFilter {
 public:
  MvccCompactionFilter(Epoch safe, bool full_compaction)
      : safe_(safe), full_compaction_(full_compaction) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key,
                    ValueType value_type, const rocksdb::Slice& existing_value,
                    std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    if (value_type != ValueType::kValue || key.size() < kMinFullKeySize) {
      return Decision::kKeep;  // Not ours to judge (corrupt keys stay visible).
    }
    const absl::string_view user(key.data(), key.size() - kEpochSuffixSize);
    if (user == last_user_key_) {
      if (shadowed_) return Decision::kRemove;
    } else {
      last_user_key_.assign(user.data(), user.size());
      shadowed_ = false;
    }
    const Epoch epoch = DecodeEpochSuffix(
        absl::string_view(key.data() + user.size(), kEpochSuffixSize));
    if (epoch <= safe_) {
      shadowed_ = true;
      if (full_compaction_ && existing_value.size() == 1 &&
          existing_value[0] == kTombstoneTag) {
        return Decision::kRemove;
      }
    }
    return Decision::kKeep;
  }
  const char* Name() const override { return "backfill.MvccCompactionFilter"; }

 private:
  const Epoch safe_;
  const bool full_compaction_;
  // One filter serves one compaction on one thread.
  mutable std::string last_user_key_;
  mutable bool shadowed_ = false;
};

class MvccCompactionFilterFactory final
    : public rocksdb::CompactionFilterFactory {
 public:
  explicit MvccCompactionFilterFactory(std::shared_ptr<GcState> gc)
      : gc_(std::move(gc)) {}
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override {
    return std::make_unique<MvccCompactionFilter>(gc_->BeginCompaction(),
                                                  context.is_full_compaction);
  }
  // Flushes filter too: a version shadowed inside one memtable never reaches
  // an SST file (tombstones stay: a flush is never a full compaction).
  bool ShouldFilterTableFileCreation(
      rocksdb::TableFileCreationReason reason) const override {
    return reason == rocksdb::TableFileCreationReason::kFlush ||
           reason == rocksdb::TableFileCreationReason::kCompaction;
  }
  const char* Name() const override {
    return "backfill.MvccCompactionFilterFactory";
  }

 private:
  const std::shared_ptr<GcState> gc_;
};

// The tombstones of each table file, as its user property
// kTombstonesProperty. At open their sum restarts the GC's count, so that
// tombstones checkpointed before a restart still trigger a full compaction.
constexpr char kTombstonesProperty[] = "backfill.tombstones";

class TombstoneCounter final : public rocksdb::TablePropertiesCollector {
 public:
  rocksdb::Status AddUserKey(const rocksdb::Slice& /*key*/,
                             const rocksdb::Slice& value,
                             rocksdb::EntryType type,
                             rocksdb::SequenceNumber /*seq*/,
                             uint64_t /*file_size*/) override {
    if (type == rocksdb::kEntryPut && !value.empty() &&
        value[0] == kTombstoneTag) {
      ++tombstones_;
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status Finish(
      rocksdb::UserCollectedProperties* properties) override {
    properties->emplace(kTombstonesProperty, absl::StrCat(tombstones_));
    return rocksdb::Status::OK();
  }
  rocksdb::UserCollectedProperties GetReadableProperties() const override {
    return {{kTombstonesProperty, absl::StrCat(tombstones_)}};
  }
  const char* Name() const override { return "backfill.TombstoneCounter"; }

 private:
  uint64_t tombstones_ = 0;
};

class TombstoneCounterFactory final
    : public rocksdb::TablePropertiesCollectorFactory {
 public:
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context /*context*/) override {
    return new TombstoneCounter();
  }
  const char* Name() const override {
    return "backfill.TombstoneCounterFactory";
  }
};

// ---- Fault injection
// -------------------------------------------------------------

rocksdb::IOStatus CheckFault(FaultInjector& injector,
                             FaultInjector::Operation operation,
                             const std::string& file_name) {
  absl::Status status = injector.Check(operation, file_name);
  if (status.ok()) return rocksdb::IOStatus::OK();
  if (absl::IsResourceExhausted(status)) {  // A full disk: ENOSPC.
    return rocksdb::IOStatus::NoSpace(rocksdb::Slice(
        absl::StrCat("injected fault: ", std::string(status.message()))));
  }
  return rocksdb::IOStatus::IOError(
      rocksdb::Slice(absl::StrCat("injected fault: ", status.ToString())));
}

class FaultSequentialFile final : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  FaultSequentialFile(std::unique_ptr<rocksdb::FSSequentialFile> file,
                      std::string name, FaultInjector* injector)
      : FSSequentialFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Read(size_t n, const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->Read(n, options, result, scratch, dbg) : s;
  }
  rocksdb::IOStatus PositionedRead(uint64_t offset, size_t n,
                                   const rocksdb::IOOptions& options,
                                   rocksdb::Slice* result, char* scratch,
                                   rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->PositionedRead(offset, n, options, result,
                                             scratch, dbg)
                  : s;
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultRandomAccessFile final
    : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  FaultRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file,
                        std::string name, FaultInjector* injector)
      : FSRandomAccessFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->Read(offset, n, options, result, scratch, dbg)
                  : s;
  }
  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* requests,
                              size_t num_requests,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    if (!s.ok()) {
      for (size_t i = 0; i < num_requests; ++i) requests[i].status = s;
      return s;
    }
    return target()->MultiRead(requests, num_requests, options, dbg);
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultWritableFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultWritableFile(std::unique_ptr<rocksdb::FSWritableFile> file,
                    std::string name, FaultInjector* injector)
      : FSWritableFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->Append(data, options, dbg) : s;
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->Append(data, options, info, dbg) : s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->PositionedAppend(data, offset, options, dbg) : s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->PositionedAppend(data, offset, options, info, dbg)
                  : s;
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kSync, name_);
    return s.ok() ? target()->Sync(options, dbg) : s;
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kSync, name_);
    return s.ok() ? target()->Fsync(options, dbg) : s;
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultInjectingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FaultInjectingFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                           std::shared_ptr<FaultInjector> injector)
      : FileSystemWrapper(std::move(base)), injector_(std::move(injector)) {}
  const char* Name() const override {
    return "BackfillFaultInjectingFileSystem";
  }

  rocksdb::IOStatus NewSequentialFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSSequentialFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name);
    if (s.ok()) s = target()->NewSequentialFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultSequentialFile>(std::move(*result), name,
                                                      injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name);
    if (s.ok()) s = target()->NewRandomAccessFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultRandomAccessFile>(std::move(*result),
                                                        name, injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name);
    if (s.ok()) s = target()->NewWritableFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultWritableFile>(std::move(*result), name,
                                                    injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name);
    if (s.ok()) s = target()->ReopenWritableFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultWritableFile>(std::move(*result), name,
                                                    injector_.get());
    }
    return s;
  }

 private:
  const std::shared_ptr<FaultInjector> injector_;
};

// ---- Committed reads
// ------------------------------------------------------------

absl::Status CorruptKey(TableId table_id, VirtualNode vnode,
                        absl::string_view key, absl::string_view reason) {
  return absl::DataLossError(
      absl::StrCat("corrupt state store key (", std::string(reason),
                   ") while reading table ", table_id, " vnode ", vnode,
                   "; key ", Escape(key)));
}

absl::Status CorruptValue(TableId table_id, VirtualNode vnode,
                          absl::string_view pk, Epoch epoch,
                          absl::string_view value) {
  return absl::DataLossError(absl::StrCat(
      "corrupt state store value (",
      value.empty()
          ? std::string("empty")
          : absl::StrCat("unknown tag ",
                         static_cast<int>(static_cast<uint8_t>(value[0]))),
      ") of table ", table_id, " vnode ", vnode, " pk ", Escape(pk), " @ ",
      epoch.DebugString()));
}

// The user key (table | vnode | pk) of an MVCC key: the prefix of its
// versions. SST files keep a bloom filter of these prefixes, so a point
// lookup skips every file that has no version of the key (the common case
// for inserts, whose consistency check looks for a key that is absent).
class UserKeyPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "backfill.UserKeyPrefix.v1"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), key.size() - kEpochSuffixSize);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= kMinFullKeySize;
  }
};

// Iterates the MVCC keys of one (table, vnode) within a pk range, emitting
// per pk the newest version <= read_epoch unless it is a tombstone. The
// RocksDB iterator is bounded to the range, so it never leaves the vnode.
class RocksIterator final : public StateStoreIterator {
 public:
  RocksIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* data,
                TableId table_id, VirtualNode vnode, const PkRange& range,
                Epoch read_epoch, const ScanOptions& options,
                std::unique_ptr<EpochPin> pin, bool point_lookup = false)
      : table_id_(table_id),
        vnode_(vnode),
        range_min_(range.inclusive_min),
        read_epoch_(read_epoch),
        pin_(std::move(pin)) {
    AppendTableKeyPrefix(table_id, vnode, &prefix_);
    lower_ = prefix_;
    lower_.append(range.inclusive_min);
    AppendEpochSuffix(Epoch::Max(), &lower_);  // First version of min.
    if (range.exclusive_max.has_value()) {
      upper_ = prefix_;
      upper_.append(*range.exclusive_max);
      AppendEpochSuffix(Epoch::Max(), &upper_);
    } else {
      AppendTableKeyPrefix(table_id, static_cast<VirtualNode>(vnode + 1),
                           &upper_);
      AppendEpochSuffix(Epoch::Max(), &upper_);
    }
    empty_ = range.IsEmpty();
    lower_slice_ = rocksdb::Slice(lower_);
    upper_slice_ = rocksdb::Slice(upper_);
    rocksdb::ReadOptions read_options;
    read_options.fill_cache = options.fill_cache;
    read_options.iterate_lower_bound = &lower_slice_;
    read_options.iterate_upper_bound = &upper_slice_;
    // A point lookup reads the versions of one user key: the prefix bloom
    // filters apply. Scans cross prefixes: total order.
    read_options.prefix_same_as_start = point_lookup;
    read_options.total_order_seek = !point_lookup;
    iterator_.reset(db->NewIterator(read_options, data));
  }

  bool Valid() const override { return valid_; }
  void SeekToFirst() override { Seek(range_min_); }
  void Seek(absl::string_view pk) override {
    valid_ = false;
    if (!status_.ok() || empty_) return;
    seek_key_ = prefix_;
    const absl::string_view target =
        std::max(pk, absl::string_view(range_min_));
    seek_key_.append(target.data(), target.size());
    AppendEpochSuffix(read_epoch_, &seek_key_);  // Skips too-new versions.
    iterator_->Seek(rocksdb::Slice(seek_key_));
    Settle();
  }
  void Next() override {
    // Skip the older versions of the current pk.
    previous_pk_.assign(key_.data(), key_.size());
    iterator_->Next();
    while (iterator_->Valid()) {
      const rocksdb::Slice key = iterator_->key();
      if (key.size() < kMinFullKeySize ||
          absl::string_view(key.data() + kTableKeyPrefixSize,
                            key.size() - kMinFullKeySize) != previous_pk_) {
        break;
      }
      iterator_->Next();
    }
    Settle();
  }
  absl::string_view key() const override { return key_; }
  absl::string_view value() const override { return value_; }
  absl::Status status() const override { return status_; }

 private:
  // From the iterator's position (the first candidate version of some pk),
  // finds the first live row.
  void Settle() {
    valid_ = false;
    while (iterator_->Valid()) {
      const absl::string_view key = ToView(iterator_->key());
      // The bounds keep foreign keys out; these checks catch bytes that
      // decode into a key no checkpoint can have written.
      if (key.size() < kMinFullKeySize ||
          key.compare(0, kTableKeyPrefixSize, prefix_) != 0) {
        status_ =
            CorruptKey(table_id_, vnode_, key,
                       absl::StrCat(key.size(), " bytes, outside the vnode"));
        return;
      }
      const absl::string_view pk =
          key.substr(kTableKeyPrefixSize, key.size() - kMinFullKeySize);
      const Epoch epoch =
          DecodeEpochSuffix(key.substr(key.size() - kEpochSuffixSize));
      if (epoch == Epoch::Zero()) {
        status_ =
            CorruptKey(table_id_, vnode_, key, "epoch 0 is never written");
        return;
      }
      if (epoch > read_epoch_) {  // Too new; older versions follow.
        iterator_->Next();
        continue;
      }
      const absl::string_view value = ToView(iterator_->value());
      if (!value.empty() && value[0] == kValueTag) {
        key_ = pk;
        value_ = value.substr(1);
        valid_ = true;
        return;
      }
      if (value.size() != 1 || value[0] != kTombstoneTag) {
        status_ = CorruptValue(table_id_, vnode_, pk, epoch, value);
        return;
      }
      // A tombstone: skip every version of this pk.
      previous_pk_.assign(pk.data(), pk.size());
      iterator_->Next();
      while (iterator_->Valid()) {
        const rocksdb::Slice next = iterator_->key();
        if (next.size() < kMinFullKeySize ||
            absl::string_view(next.data() + kTableKeyPrefixSize,
                              next.size() - kMinFullKeySize) != previous_pk_) {
          break;
        }
        iterator_->Next();
      }
    }
    if (!iterator_->status().ok()) {
      status_ =
          FromRocksDb(iterator_->status(),
                      absl::StrCat("scan of table ", table_id_, " vnode ",
                                   vnode_, " at ", read_epoch_.DebugString()));
    }
  }

  const TableId table_id_;
  const VirtualNode vnode_;
  const std::string range_min_;
  const Epoch read_epoch_;
  const std::unique_ptr<EpochPin> pin_;
  std::string prefix_;
  std::string lower_;
  std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  bool empty_ = false;
  // Declared after the bounds it points to.
  std::unique_ptr<rocksdb::Iterator> iterator_;
  std::string seek_key_;
  std::string previous_pk_;
  bool valid_ = false;
  absl::string_view key_;
  absl::string_view value_;
  absl::Status status_;
};

// ---- The acknowledged epoch (FORMAT.md)
// ---------------------------------------------

// ACKNOWLEDGED_EPOCH, beside RocksDB's files: the newest checkpoint Commit
// acknowledged (after a synced write) and how long RocksDB's MANIFEST was
// then. RocksDB drops an incomplete last record of its write-ahead log or
// MANIFEST as a write cut short by a crash; a damaged one (say, a corrupt
// length) looks the same, and it would open without what followed. Open
// refuses that: the MANIFEST must hold complete records up to the recorded
// size, and the committed epoch must not be older than the acknowledged one.
constexpr char kAcknowledgedEpochFile[] = "ACKNOWLEDGED_EPOCH";
constexpr char kAcknowledgedEpochMagic[8] = {'b', 'f', 'a', 'c',
                                             'k', 'v', '1', '\n'};
// magic | epoch | MANIFEST number | MANIFEST size | FNV-1a of the 32 before
constexpr size_t kAcknowledgedEpochSize = 40;

struct Acknowledged {
  Epoch epoch;
  uint64_t manifest_number = 0;  // 0 = unknown
  uint64_t manifest_size = 0;
};

uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  return hash;
}

std::string AcknowledgedEpochPath(const std::string& dir) {
  return dir + "/" + kAcknowledgedEpochFile;
}

// Up to `max_bytes` from the start of the file at `path`; nullopt if there
// is no such file. Errors: Internal naming the path and the errno.
absl::StatusOr<std::optional<std::string>> ReadFilePrefix(
    const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return absl::InternalError(
        absl::StrCat("read ", path, ": ", std::strerror(errno)));
  }
  std::string bytes(max_bytes, '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pread(fd, bytes.data() + done, bytes.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int read_errno = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("read ", path, ": ", std::strerror(read_errno)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

// The file's contents; nullopt if there is no file (a store written without
// sync_on_checkpoint, or by an older version) or it is empty (created, then
// the process died before the first checkpoint).
absl::StatusOr<std::optional<Acknowledged>> ReadAcknowledged(
    const std::string& dir) {
  absl::StatusOr<std::optional<std::string>> read =
      ReadFilePrefix(AcknowledgedEpochPath(dir), kAcknowledgedEpochSize + 1);
  if (!read.ok()) {
    return absl::InternalError(
        absl::StrCat("open ", dir, ": ", read.status().message()));
  }
  if (!read->has_value() || (*read)->empty()) return std::nullopt;
  const std::string& bytes = **read;
  if (bytes.size() != kAcknowledgedEpochSize ||
      std::memcmp(bytes.data(), kAcknowledgedEpochMagic, 8) != 0 ||
      absl::big_endian::Load64(bytes.data() + 32) !=
          Fnv1a(absl::string_view(bytes.data(), 32))) {
    return absl::DataLossError(absl::StrCat(
        "open ", dir, ": ", kAcknowledgedEpochFile, " is corrupt (",
        bytes.size(), " bytes: ", Escape(bytes), ")"));
  }
  Acknowledged acknowledged;
  acknowledged.epoch = Epoch(absl::big_endian::Load64(bytes.data() + 8));
  acknowledged.manifest_number = absl::big_endian::Load64(bytes.data() + 16);
  acknowledged.manifest_size = absl::big_endian::Load64(bytes.data() + 24);
  return acknowledged;
}

// Before RocksDB reads the MANIFEST (and replaces it): if CURRENT names the
// one the acknowledged checkpoint saw, its first `manifest_size` bytes must
// be complete log records (RocksDB's log format: 32 KiB blocks of records
// with a 7-byte header: crc, length, type 1-4). RocksDB checks the crcs
// itself; this catches what it would take for a torn tail. A CURRENT or
// MANIFEST that cannot be read is left for RocksDB to report.
absl::Status CheckManifestPrefix(const std::string& dir,
                                 const Acknowledged& acknowledged) {
  if (acknowledged.manifest_number == 0) return absl::OkStatus();
  absl::StatusOr<std::optional<std::string>> current =
      ReadFilePrefix(dir + "/CURRENT", 64);
  if (!current.ok() || !current->has_value()) return absl::OkStatus();
  char expected[64];
  std::snprintf(expected, sizeof(expected), "MANIFEST-%06llu\n",
                static_cast<unsigned long long>(acknowledged.manifest_number));
  if (**current != expected) return absl::OkStatus();  // Another MANIFEST now.
  const std::string name = (*current)->substr(0, (*current)->size() - 1);
  absl::StatusOr<std::optional<std::string>> manifest =
      ReadFilePrefix(dir + "/" + name, acknowledged.manifest_size);
  if (!manifest.ok() || !manifest->has_value()) return absl::OkStatus();
  const std::string& bytes = **manifest;
  constexpr size_t kBlockSize = 32768;
  constexpr size_t kHeaderSize = 7;
  auto damaged = [&](size_t offset, absl::string_view why) {
    return absl::DataLossError(absl::StrCat(
        "open ", dir, ": ", name, " is damaged at offset ", offset, " (",
        std::string(why), "); checkpoint ", acknowledged.epoch.value(),
        " saw its first ", acknowledged.manifest_size, " bytes complete (",
        kAcknowledgedEpochFile, ")"));
  };
  if (bytes.size() < acknowledged.manifest_size) {
    return damaged(bytes.size(), "the file is shorter");
  }
  size_t offset = 0;
  while (offset < acknowledged.manifest_size) {
    const size_t block_left = kBlockSize - offset % kBlockSize;
    if (block_left < kHeaderSize) {  // Block trailer.
      offset += block_left;
      continue;
    }
    if (offset + kHeaderSize > bytes.size()) {
      return damaged(offset, "a record header is cut short");
    }
    const size_t length =
        static_cast<uint8_t>(bytes[offset + 4]) |
        (static_cast<size_t>(static_cast<uint8_t>(bytes[offset + 5])) << 8);
    const int type = static_cast<uint8_t>(bytes[offset + 6]);
    if (type < 1 || type > 4) {
      return damaged(offset, absl::StrCat("record type ", type));
    }
    if (kHeaderSize + length > block_left ||
        offset + kHeaderSize + length > bytes.size()) {
      return damaged(offset, absl::StrCat("record length ", length,
                                          " runs past its block or the "
                                          "acknowledged size"));
    }
    offset += kHeaderSize + length;
  }
  return absl::OkStatus();
}

// `epoch` and the MANIFEST `db` writes now, with its valid size.
Acknowledged CurrentAcknowledged(rocksdb::DB& db, Epoch epoch) {
  Acknowledged acknowledged;
  acknowledged.epoch = epoch;
  std::vector<std::string> live;
  if (db.GetLiveFiles(live, &acknowledged.manifest_size,
                      /*flush_memtable=*/false)
          .ok()) {
    for (const std::string& file : live) {
      if (file.rfind("/MANIFEST-", 0) == 0) {
        acknowledged.manifest_number =
            std::strtoull(file.c_str() + 10, nullptr, 10);
      }
    }
  }
  if (acknowledged.manifest_number == 0) acknowledged.manifest_size = 0;
  return acknowledged;
}

// Rewrites the file in place (one pwrite at offset 0: a process crash
// leaves the old or the new contents). Not synced: after a machine crash it
// may be older than the store, never newer (it is written after the synced
// checkpoint).
class AcknowledgedEpochWriter {
 public:
  static absl::StatusOr<std::unique_ptr<AcknowledgedEpochWriter>> Open(
      const std::string& dir) {
    const std::string path = AcknowledgedEpochPath(dir);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::InternalError(absl::StrCat("open ", dir, ": create ", path,
                                              ": ", std::strerror(errno)));
    }
    return std::unique_ptr<AcknowledgedEpochWriter>(
        new AcknowledgedEpochWriter(fd));
  }
  ~AcknowledgedEpochWriter() { ::close(fd_); }

  // Best effort: a failure leaves an older record, which checks less.
  void Write(const Acknowledged& acknowledged) {
    char bytes[kAcknowledgedEpochSize];
    std::memcpy(bytes, kAcknowledgedEpochMagic, 8);
    absl::big_endian::Store64(bytes + 8, acknowledged.epoch.value());
    absl::big_endian::Store64(bytes + 16, acknowledged.manifest_number);
    absl::big_endian::Store64(bytes + 24, acknowledged.manifest_size);
    absl::big_endian::Store64(bytes + 32, Fnv1a(absl::string_view(bytes, 32)));
    (void)!::pwrite(fd_, bytes, sizeof(bytes), 0);
  }

 private:
  explicit AcknowledgedEpochWriter(int fd) : fd_(fd) {}
  const int fd_;
};

// ---- The layer
// --------------------------------------------------------------------

rocksdb::ReadOptions TotalOrder() {
  rocksdb::ReadOptions options;
  options.total_order_seek = true;
  return options;
}

class RocksCommittedLayer final : public storage_internal::CommittedLayer {
 public:
  RocksCommittedLayer(std::unique_ptr<rocksdb::Env> env,
                      std::shared_ptr<rocksdb::FileSystem> file_system,
                      std::unique_ptr<rocksdb::DB> db,
                      std::vector<rocksdb::ColumnFamilyHandle*> handles,
                      std::shared_ptr<GcState> gc, bool sync,
                      double gc_tombstone_fraction, uint64_t gc_min_tombstones)
      : file_system_(std::move(file_system)),
        env_(std::move(env)),
        db_(std::move(db)),
        meta_(handles[0]),
        data_(handles[1]),
        gc_(std::move(gc)),
        sync_(sync),
        gc_tombstone_fraction_(gc_tombstone_fraction),
        gc_min_tombstones_(gc_min_tombstones) {
    if (gc_tombstone_fraction_ > 0) {
      gc_thread_ = std::thread([this] { RunGcThread(); });
    }
  }

  ~RocksCommittedLayer() override {
    if (gc_thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(gc_mu_);
        stopping_ = true;
      }
      gc_cv_.notify_all();
      db_->DisableManualCompaction();  // Aborts a running full compaction.
      gc_thread_.join();
    }
    db_->DestroyColumnFamilyHandle(data_);
    db_->DestroyColumnFamilyHandle(meta_);
    db_->Close().PermitUncheckedError();
    db_.reset();
  }

  std::unique_ptr<EpochPin> Pin(Epoch epoch) override {
    return gc_->PinEpoch(epoch);
  }
  void SetCommittedEpoch(Epoch epoch) override { gc_->SetCommitted(epoch); }

  absl::Status Commit(const std::vector<CommitBatch>& batches,
                      Epoch committed_epoch) override {
    rocksdb::WriteBatch batch;
    std::string key;
    std::string value;
    uint64_t tombstones = 0;
    for (const CommitBatch& commit : batches) {
      for (const auto& [memtable_key, entry] : *commit.data) {
        key.clear();
        char table[4];
        absl::big_endian::Store32(table, commit.table_id);
        key.append(table, sizeof(table));
        key.append(memtable_key);  // vnode | pk
        AppendEpochSuffix(commit.epoch, &key);
        value.clear();
        if (entry.has_value()) {
          value.push_back(kValueTag);
          value.append(*entry);
        } else {
          value.push_back(kTombstoneTag);
          ++tombstones;
        }
        BACKFILL_RETURN_IF_ERROR(
            FromRocksDb(batch.Put(data_, key, value), "checkpoint batch"));
      }
    }
    char epoch[8];
    absl::big_endian::Store64(epoch, committed_epoch.value());
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(
        batch.Put(meta_, kCommittedEpochKey, rocksdb::Slice(epoch, 8)),
        "checkpoint batch"));
    rocksdb::WriteOptions write_options;
    write_options.sync = sync_;
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(
        db_->Write(write_options, &batch),
        absl::StrCat("checkpoint write of epoch ", committed_epoch.value(),
                     " (", batch.Count(), " entries)")));
    if (acknowledged_ != nullptr) {
      acknowledged_->Write(CurrentAcknowledged(*db_, committed_epoch));
    }
    if (tombstones > 0) NoteTombstones(tombstones);
    return absl::OkStatus();
  }

  // Commit records each acknowledged checkpoint there (sync_on_checkpoint).
  void SetAcknowledgedEpochWriter(
      std::unique_ptr<AcknowledgedEpochWriter> writer) {
    acknowledged_ = std::move(writer);
  }

  absl::StatusOr<std::optional<std::string>> Get(TableId table_id,
                                                 VirtualNode vnode,
                                                 absl::string_view pk,
                                                 Epoch read_epoch) override {
    BACKFILL_RETURN_IF_ERROR(CheckHorizon(read_epoch));
    // A point range [pk, pk + '\0') read at read_epoch.
    std::string upper(pk);
    upper.push_back('\0');
    RocksIterator it(db_.get(), data_, table_id, vnode,
                     PkRange::Between(pk, upper), read_epoch, ScanOptions{},
                     nullptr, /*point_lookup=*/true);
    it.SeekToFirst();
    BACKFILL_RETURN_IF_ERROR(it.status());
    if (!it.Valid()) return std::nullopt;
    return std::string(it.value());
  }

  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options,
      std::unique_ptr<EpochPin> pin) override {
    BACKFILL_RETURN_IF_ERROR(CheckHorizon(read_epoch));
    return std::unique_ptr<StateStoreIterator>(std::make_unique<RocksIterator>(
        db_.get(), data_, table_id, vnode, range, read_epoch, options,
        std::move(pin)));
  }

  absl::Status Compact() {
    std::lock_guard<std::mutex> compact_lock(compact_mu_);
    {
      std::lock_guard<std::mutex> lock(gc_mu_);
      pending_tombstones_ = 0;  // This compaction sees every one so far.
      ++full_compactions_;
    }
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(
        db_->Flush(rocksdb::FlushOptions(), data_), "flush before compaction"));
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction =
        rocksdb::BottommostLevelCompaction::kForce;
    return FromRocksDb(db_->CompactRange(options, data_, nullptr, nullptr),
                       "full compaction");
  }

  // Restarts the GC's count from the tombstones the table files hold (what
  // earlier runs checkpointed and no full compaction has dropped yet); may
  // start a full compaction at once. Files written before the counter
  // existed count 0.
  absl::Status CountStoredTombstones() {
    rocksdb::TablePropertiesCollection files;
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(db_->GetPropertiesOfAllTables(data_, &files),
                    "reading the table files' properties"));
    uint64_t tombstones = 0;
    for (const auto& [name, properties] : files) {
      const auto it =
          properties->user_collected_properties.find(kTombstonesProperty);
      uint64_t count = 0;
      if (it != properties->user_collected_properties.end() &&
          absl::SimpleAtoi(it->second, &count)) {
        tombstones = SaturatingAdd(tombstones, count);
      }
    }
    if (tombstones > 0) NoteTombstones(tombstones);
    return absl::OkStatus();
  }

  GcStats WaitForGc() {
    std::unique_lock<std::mutex> lock(gc_mu_);
    gc_idle_cv_.wait(lock,
                     [&] { return stopping_ || (!gc_due_ && !gc_running_); });
    GcStats stats;
    stats.full_compactions = full_compactions_;
    stats.pending_tombstones = pending_tombstones_;
    stats.last_error = last_gc_error_;
    return stats;
  }

  absl::StatusOr<uint64_t> CountStoredVersions() {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(TotalOrder(), data_));
    uint64_t count = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(it->status(), "count stored versions"));
    return count;
  }

 private:
  absl::Status CheckHorizon(Epoch read_epoch) const {
    const Epoch horizon = gc_->horizon();
    if (read_epoch < horizon) {
      return absl::FailedPreconditionError(
          absl::StrCat("read at ", read_epoch.DebugString(),
                       " is older than the garbage-collection horizon ",
                       horizon.value(), "; versions it needs may be gone"));
    }
    return absl::OkStatus();
  }

  // Counts checkpointed tombstones; wakes the GC thread at the threshold.
  void NoteTombstones(uint64_t count) {
    uint64_t pending;
    {
      std::lock_guard<std::mutex> lock(gc_mu_);
      pending_tombstones_ += count;
      pending = pending_tombstones_;
      if (!gc_thread_.joinable() || gc_due_) return;
    }
    if (pending < gc_min_tombstones_) return;
    uint64_t stored = 0;
    if (!db_->GetIntProperty(data_, "rocksdb.estimate-num-keys", &stored)) {
      stored = 0;
    }
    if (static_cast<double>(pending) <
        gc_tombstone_fraction_ * static_cast<double>(stored)) {
      return;
    }
    {
      std::lock_guard<std::mutex> lock(gc_mu_);
      gc_due_ = true;
    }
    gc_cv_.notify_all();
  }

  void RunGcThread() {
    std::unique_lock<std::mutex> lock(gc_mu_);
    while (true) {
      gc_cv_.wait(lock, [&] { return stopping_ || gc_due_; });
      if (stopping_) break;
      gc_due_ = false;
      gc_running_ = true;
      lock.unlock();
      absl::Status status = Compact();
      lock.lock();
      gc_running_ = false;
      if (!stopping_) last_gc_error_ = status;
      gc_idle_cv_.notify_all();
    }
    gc_idle_cv_.notify_all();
  }

  // Destroyed last: the DB uses them.
  const std::shared_ptr<rocksdb::FileSystem> file_system_;
  const std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* const meta_;
  rocksdb::ColumnFamilyHandle* const data_;
  const std::shared_ptr<GcState> gc_;
  const bool sync_;
  std::unique_ptr<AcknowledgedEpochWriter> acknowledged_;
  const double gc_tombstone_fraction_;
  const uint64_t gc_min_tombstones_;

  std::mutex compact_mu_;  // One full compaction at a time.
  std::mutex gc_mu_;
  std::condition_variable gc_cv_;       // Wakes the GC thread.
  std::condition_variable gc_idle_cv_;  // Signals WaitForGc.
  uint64_t pending_tombstones_ ABSL_GUARDED_BY(gc_mu_) = 0;
  uint64_t full_compactions_ ABSL_GUARDED_BY(gc_mu_) = 0;
  bool gc_due_ ABSL_GUARDED_BY(gc_mu_) = false;
  bool gc_running_ ABSL_GUARDED_BY(gc_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(gc_mu_) = false;
  absl::Status last_gc_error_ ABSL_GUARDED_BY(gc_mu_);
  std::thread gc_thread_;  // Started last, joined first.
};

absl::Status ValidateOptions(const RocksDbStateStoreOptions& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("RocksDbStateStoreOptions.path is empty");
  }
  if (options.write_buffer_bytes < (64 << 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.write_buffer_bytes must be >= "
                     "65536; got ",
                     options.write_buffer_bytes));
  }
  if (!(options.gc_tombstone_fraction >= 0 &&
        options.gc_tombstone_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.gc_tombstone_fraction must be "
                     "in [0, 1]; got ",
                     options.gc_tombstone_fraction));
  }
  if (options.gc_min_tombstones < 1) {
    return absl::InvalidArgumentError(
        "RocksDbStateStoreOptions.gc_min_tombstones must be >= 1; got 0");
  }
  if (options.max_background_jobs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.max_background_jobs must be >= "
                     "1; got ",
                     options.max_background_jobs));
  }
  return absl::OkStatus();
}

// Reads (and on a new database writes) the metadata; returns the committed
// epoch.
absl::StatusOr<Epoch> LoadMetadata(rocksdb::DB& db,
                                   rocksdb::ColumnFamilyHandle* meta,
                                   const std::string& path) {
  std::string version;
  rocksdb::Status status =
      db.Get(rocksdb::ReadOptions(), meta, kFormatVersionKey, &version);
  std::string epoch_bytes;
  rocksdb::Status epoch_status =
      db.Get(rocksdb::ReadOptions(), meta, kCommittedEpochKey, &epoch_bytes);
  if (!epoch_status.ok() && !epoch_status.IsNotFound()) {
    return FromRocksDb(epoch_status,
                       absl::StrCat("open ", path, ": read committed epoch"));
  }
  if (status.IsNotFound()) {
    if (epoch_status.ok()) {
      return absl::DataLossError(
          absl::StrCat("open ", path,
                       ": committed epoch present but format version missing"));
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(
        db.Put(write_options, meta, kFormatVersionKey, kFormatVersion),
        absl::StrCat("open ", path, ": write format version")));
    return Epoch::Zero();
  }
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      status, absl::StrCat("open ", path, ": read format version")));
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("open ", path, ": unsupported format version ",
                     Escape(version), "; expected ", kFormatVersion));
  }
  if (epoch_status.IsNotFound()) return Epoch::Zero();
  if (epoch_bytes.size() != 8) {
    return absl::DataLossError(absl::StrCat(
        "open ", path, ": committed epoch has ", epoch_bytes.size(),
        " bytes, expected 8: ", Escape(epoch_bytes)));
  }
  return Epoch(absl::big_endian::Load64(epoch_bytes.data()));
}

// The database files in `path` (MANIFEST-*, *.sst, *.log,
// ACKNOWLEDGED_EPOCH), sorted; empty
// if there are none or the directory cannot be listed.
std::vector<std::string> DatabaseFiles(const std::string& path) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    const bool wal = name.size() > 4 && name.ends_with(".log");
    if (name.starts_with("MANIFEST-") || name.ends_with(".sst") || wal ||
        name == kAcknowledgedEpochFile) {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Before RocksDB creates a database where CURRENT is missing: if data files
// are there (table files, write-ahead logs, ACKNOWLEDGED_EPOCH), CURRENT was
// lost and creating would silently start over without their data (RocksDB
// would write a new CURRENT and MANIFEST). A MANIFEST alone is what a crash
// while creating the database leaves (it is written before CURRENT, the
// first log after): that is created again.
absl::Status CheckNotOrphaned(const std::string& path) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::path(path) / "CURRENT", error)) {
    return absl::OkStatus();
  }
  const std::vector<std::string> files = DatabaseFiles(path);
  if (std::all_of(files.begin(), files.end(), [](const std::string& file) {
        return file.starts_with("MANIFEST-");
      })) {
    return absl::OkStatus();
  }
  return absl::DataLossError(
      absl::StrCat("open ", path,
                   ": the CURRENT file is missing but database files are "
                   "there (",
                   absl::StrJoin(files, ", "),
                   "); refusing to create a new database over them"));
}

// RocksDB reports a corrupt write-ahead-log record without the file name;
// says which files those are.
absl::Status NameCorruptFile(absl::Status status, const std::string& path) {
  if (status.code() != absl::StatusCode::kDataLoss) return status;
  const absl::string_view message(status.message().data(),
                                  status.message().size());
  for (const char* named : {".sst", "MANIFEST", "CURRENT", ".log"}) {
    if (message.find(named) != absl::string_view::npos) return status;
  }
  std::vector<std::string> logs;
  for (const std::string& file : DatabaseFiles(path)) {
    if (file.ends_with(".log")) logs.push_back(file);
  }
  return absl::DataLossError(absl::StrCat(
      status.message(),
      " (no file named: RocksDB reports corrupt "
      "write-ahead-log records so; the write-ahead log here is ",
      logs.empty() ? std::string("absent") : absl::StrJoin(logs, ", "), ")"));
}

}  // namespace

// ---- RocksDbStateStore
// -------------------------------------------------------

class RocksDbStateStore::Impl {
 public:
  Impl(std::unique_ptr<RocksCommittedLayer> layer, Epoch committed)
      : layer_(layer.get()), store_(std::move(layer), committed) {}

  RocksCommittedLayer* const layer_;  // Owned by store_.
  storage_internal::LayeredStateStore store_;
};

absl::StatusOr<std::unique_ptr<RocksDbStateStore>> RocksDbStateStore::Open(
    const RocksDbStateStoreOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateOptions(options));

  std::shared_ptr<rocksdb::FileSystem> file_system;
  std::unique_ptr<rocksdb::Env> env;
  rocksdb::DBOptions db_options;
  if (options.fault_injector != nullptr) {
    file_system = std::make_shared<FaultInjectingFileSystem>(
        rocksdb::FileSystem::Default(), options.fault_injector);
    env = rocksdb::NewCompositeEnv(file_system);
    db_options.env = env.get();
  }
  db_options.create_if_missing = options.create_if_missing;
  db_options.max_background_jobs = options.max_background_jobs;
  // One filter per compaction sees every version of a key in order.
  db_options.max_subcompactions = 1;
  db_options.keep_log_file_num = 4;
  // Corruption is an error, never silently skipped: paranoid checks (the
  // default, stated) stop at a corrupt file, and a corrupt write-ahead-log
  // record is DataLoss. Only an incomplete record at the end of the log (a
  // write cut short by a crash, which no acknowledged checkpoint can be:
  // Commit returns after the whole record is written) is dropped.
  // RocksDB's default, kPointInTimeRecovery, instead stops replaying at the
  // first corrupt record and opens without the rest: acknowledged
  // checkpoints silently gone.
  db_options.paranoid_checks = true;
  // Both column families flush in one atomic MANIFEST group, so a lost
  // MANIFEST tail loses the data and the committed epoch together (and the
  // acknowledged-epoch check sees it), never the data alone.
  db_options.atomic_flush = true;
  db_options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;

  // The committed epoch, before the DB exists: the compaction filter may run
  // during Open (it then uses epoch 0, a no-op).
  auto gc = std::make_shared<GcState>(Epoch::Zero());

  rocksdb::ColumnFamilyOptions data_options;
  data_options.comparator = MvccComparator();
  data_options.compaction_filter_factory =
      std::make_shared<MvccCompactionFilterFactory>(gc);
  data_options.write_buffer_size = options.write_buffer_bytes;
  data_options.prefix_extractor = std::make_shared<UserKeyPrefix>();
  data_options.table_properties_collector_factories.push_back(
      std::make_shared<TombstoneCounterFactory>());
  rocksdb::BlockBasedTableOptions table_options;
  if (options.block_cache_bytes == 0) {
    table_options.no_block_cache = true;
  } else {
    table_options.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  }
  table_options.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table_options.whole_key_filtering = false;  // Whole keys carry the epoch.
  data_options.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(table_options));

  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kDataColumnFamily, data_options}};
  if (options.create_if_missing) {
    BACKFILL_RETURN_IF_ERROR(CheckNotOrphaned(options.path));
  }
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Acknowledged> acknowledged,
                            ReadAcknowledged(options.path));
  if (acknowledged.has_value()) {
    BACKFILL_RETURN_IF_ERROR(CheckManifestPrefix(options.path, *acknowledged));
  }
  // Also when CURRENT exists: a crash while the database was being created
  // can leave it without `data`. (A MANIFEST that lost `data` later fails
  // CheckManifestPrefix above.)
  db_options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status status =
      rocksdb::DB::Open(db_options, options.path, families, &handles, &raw_db);
  if (!status.ok()) {
    if (!options.create_if_missing && status.IsInvalidArgument() &&
        status.ToString().find("does not exist") != std::string::npos) {
      return absl::NotFoundError(
          absl::StrCat("open ", options.path,
                       ": no state store there (create_if_missing "
                       "is false)"));
    }
    return NameCorruptFile(
        FromRocksDb(status, absl::StrCat("open ", options.path)), options.path);
  }
  std::unique_ptr<rocksdb::DB> db(raw_db);
  if (options.verify_checksums_on_open) {
    // Reads every block of every table file: a corrupt block is DataLoss now,
    // before anything is written, not when some read reaches it.
    rocksdb::Status verified = db->VerifyChecksum();
    if (!verified.ok()) {
      for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
      return FromRocksDb(
          verified, absl::StrCat("open ", options.path, ": verify checksums"));
    }
  }
  absl::StatusOr<Epoch> committed = LoadMetadata(*db, handles[0], options.path);
  if (!committed.ok()) {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    return committed.status();
  }
  absl::Status checked;
  if (acknowledged.has_value() && acknowledged->epoch > *committed) {
    checked = absl::DataLossError(absl::StrCat(
        "open ", options.path, ": the store restored checkpoint ",
        committed->value(), " but checkpoint ", acknowledged->epoch.value(),
        " had been acknowledged (", kAcknowledgedEpochFile,
        "): the write-ahead log or MANIFEST lost its tail"));
  }
  std::unique_ptr<AcknowledgedEpochWriter> acknowledged_writer;
  if (checked.ok() && options.sync_on_checkpoint) {
    absl::StatusOr<std::unique_ptr<AcknowledgedEpochWriter>> writer =
        AcknowledgedEpochWriter::Open(options.path);
    if (writer.ok()) {
      acknowledged_writer = *std::move(writer);
      // Covers what this open wrote to the new MANIFEST at once.
      acknowledged_writer->Write(CurrentAcknowledged(*db, *committed));
    } else {
      checked = writer.status();
    }
  }
  if (!checked.ok()) {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    return checked;
  }
  gc->SetCommitted(*committed);
  auto layer = std::make_unique<RocksCommittedLayer>(
      std::move(env), std::move(file_system), std::move(db), std::move(handles),
      gc, options.sync_on_checkpoint, options.gc_tombstone_fraction,
      options.gc_min_tombstones);
  if (acknowledged_writer != nullptr) {
    layer->SetAcknowledgedEpochWriter(std::move(acknowledged_writer));
  }
  BACKFILL_RETURN_IF_ERROR(
      NameCorruptFile(layer->CountStoredTombstones(), options.path));
  return std::unique_ptr<RocksDbStateStore>(new RocksDbStateStore(
      std::make_unique<Impl>(std::move(layer), *committed)));
}

RocksDbStateStore::RocksDbStateStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
RocksDbStateStore::~RocksDbStateStore() = default;

absl::StatusOr<std::unique_ptr<LocalStateStore>>
RocksDbStateStore::NewLocalStateStore(TableId table_id,
                                      const LocalOptions& options) {
  return impl_->store_.NewLocalStateStore(table_id, options);
}
absl::Status RocksDbStateStore::Checkpoint(Epoch epoch) {
  return impl_->store_.Checkpoint(epoch);
}
Epoch RocksDbStateStore::CommittedEpoch(TableId table_id) const {
  return impl_->store_.CommittedEpoch(table_id);
}
bool RocksDbStateStore::IsCommitted(TableId table_id, Epoch epoch) const {
  return impl_->store_.IsCommitted(table_id, epoch);
}
absl::Status RocksDbStateStore::WaitCommitted(TableId table_id, Epoch epoch,
                                              absl::Time deadline,
                                              Cancellation& cancellation,
                                              Clock& clock) {
  return impl_->store_.WaitCommitted(table_id, epoch, deadline, cancellation,
                                     clock);
}
uint64_t RocksDbStateStore::AddCommitListener(
    std::function<void(Epoch)> listener) {
  return impl_->store_.AddCommitListener(std::move(listener));
}
void RocksDbStateStore::RemoveCommitListener(uint64_t id) {
  impl_->store_.RemoveCommitListener(id);
}
absl::StatusOr<std::optional<std::string>> RocksDbStateStore::Get(
    const TableKey& key, Epoch read_epoch) {
  return impl_->store_.Get(key, read_epoch);
}
absl::StatusOr<std::unique_ptr<StateStoreIterator>>
RocksDbStateStore::NewIterator(TableId table_id, VirtualNode vnode,
                               const PkRange& range, Epoch read_epoch,
                               const ScanOptions& options) {
  return impl_->store_.NewIterator(table_id, vnode, range, read_epoch, options);
}
absl::Status RocksDbStateStore::Compact() { return impl_->layer_->Compact(); }
GcStats RocksDbStateStore::WaitForGc() { return impl_->layer_->WaitForGc(); }
absl::StatusOr<uint64_t> RocksDbStateStore::CountStoredVersions() {
  return impl_->layer_->CountStoredVersions();
}

}  // namespace backfill
