#include "storage/rocksdb/sst_file.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rocksdb/cache.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"
#include "storage/internal/mem_table.h"
#include "storage/rocksdb/mvcc_format.h"
#include "storage/rocksdb/mvcc_iterator.h"
#include "storage/rocksdb/status.h"
#include "storage/rocksdb/tombstone_counter.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

using rocksdb_internal::AppendRowValue;
using rocksdb_internal::AppendTombstoneValue;
using rocksdb_internal::FromRocksDb;
using rocksdb_internal::MvccComparator;
using rocksdb_internal::MvccIterator;
using rocksdb_internal::MvccScan;
using rocksdb_internal::MvccValueKind;
using rocksdb_internal::ParseMvccValue;
using rocksdb_internal::ToSlice;
using rocksdb_internal::ToStringView;
using storage_internal::CommitBatch;
using storage_internal::EpochPin;
using storage_internal::MemTablePk;
using storage_internal::MemTableVnode;

namespace {

constexpr char kFileName[] = "/object.sst";

struct MvccLess {
  bool operator()(const std::string& a, const std::string& b) const {
    return MvccComparator()->Compare(a, b) < 0;
  }
};

// The options of `data` (database.cc's MakeDataOptions) that shape an SST.
rocksdb::Options SstOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                            size_t block_size, int bloom_bits_per_key) {
  rocksdb::Options options;
  options.comparator = MvccComparator();
  options.prefix_extractor = rocksdb_internal::NewUserKeyPrefixExtractor();
  options.table_properties_collector_factories.push_back(
      std::make_shared<rocksdb_internal::TombstoneCounterFactory>());
  rocksdb::BlockBasedTableOptions table;
  if (cache == nullptr) {
    table.no_block_cache = true;
  } else {
    table.block_cache = cache;
  }
  table.block_size = block_size;
  if (bloom_bits_per_key > 0) {
    table.filter_policy.reset(
        rocksdb::NewBloomFilterPolicy(bloom_bits_per_key));
  }
  table.whole_key_filtering = false;  // Whole keys carry the epoch.
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// A rocksdb::Status of a file, with the object's name in its message.
rocksdb::Status NameStatus(const rocksdb::Status& status,
                           const std::string& name) {
  if (status.ok()) return status;
  const std::string context = absl::StrCat("SST object ", name);
  if (status.IsCorruption()) {
    return rocksdb::Status::Corruption(context, status.ToString());
  }
  if (status.IsNotFound() || status.IsPathNotFound()) {
    return rocksdb::Status::NotFound(context, status.ToString());
  }
  return rocksdb::Status::IOError(context, status.ToString());
}

// Builds one SST in memory (a file of its own MemEnv) and its SstFileInfo:
// Open, Add in comparator order, Finish. Errors name `operation`.
class MemorySstBuilder {
 public:
  explicit MemorySstBuilder(absl::string_view operation)
      : operation_(operation) {}

  // InvalidArgument for a block size < 256; Internal for RocksDB.
  absl::Status Open(const SstWriteOptions& options) {
    if (options.block_size < 256) {
      return absl::InvalidArgumentError(
          absl::StrCat("SstWriteOptions.block_size must be >= 256, got ",
                       options.block_size));
    }
    env_.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    rocksdb::Options sst_options =
        SstOptions(nullptr, options.block_size, options.bloom_bits_per_key);
    sst_options.env = env_.get();
    writer_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(),
                                                       sst_options);
    info_.min_epoch = Epoch::Max();
    return FromRocksDb(writer_->Open(kFileName),
                       absl::StrCat(operation_, ": open"));
  }

  // `epoch` and `tombstone` describe the entry (the caller has decoded it).
  absl::Status Add(absl::string_view full_key, absl::string_view value,
                   Epoch epoch, bool tombstone) {
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(writer_->Put(ToSlice(full_key), ToSlice(value)),
                    absl::StrCat(operation_, ": put")));
    if (info_.num_entries == 0) info_.smallest_key = std::string(full_key);
    info_.largest_key.assign(full_key.data(), full_key.size());
    ++info_.num_entries;
    if (tombstone) ++info_.num_tombstones;
    info_.min_epoch = std::min(info_.min_epoch, epoch);
    info_.max_epoch = std::max(info_.max_epoch, epoch);
    return absl::OkStatus();
  }

  // The info of the entries added so far (size_bytes is set by Finish).
  const SstFileInfo& info() const { return info_; }

  // REQUIRES: at least one entry added. Returns the bytes and sets *info
  // (may be null).
  absl::StatusOr<std::string> Finish(SstFileInfo* info) {
    rocksdb::ExternalSstFileInfo file_info;
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(writer_->Finish(&file_info),
                                         absl::StrCat(operation_, ": finish")));
    std::string bytes;
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(rocksdb::ReadFileToString(env_.get(), kFileName, &bytes),
                    absl::StrCat(operation_, ": read back")));
    info_.size_bytes = bytes.size();
    if (info != nullptr) *info = std::move(info_);
    return bytes;
  }

 private:
  const std::string operation_;
  std::unique_ptr<rocksdb::Env> env_;  // Outlives writer_.
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
  SstFileInfo info_;
};

}  // namespace

absl::StatusOr<std::string> WriteSst(const std::vector<CommitBatch>& batches,
                                     const SstWriteOptions& options,
                                     SstFileInfo* info) {
  MemorySstBuilder builder("WriteSst");
  BACKFILL_RETURN_IF_ERROR(builder.Open(options));
  // Sorted by the comparator; a later batch's version of the same full key
  // replaces an earlier one.
  std::map<std::string, std::string, MvccLess> entries;
  std::string key;
  for (const CommitBatch& batch : batches) {
    if (batch.epoch == Epoch::Zero()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WriteSst: a batch of table ", batch.table_id, " at epoch 0"));
    }
    if (batch.data == nullptr) continue;
    for (const auto& [memtable_key, entry] : *batch.data) {
      const VirtualNode vnode = MemTableVnode(memtable_key);
      if (vnode >= kMaxVnodeCount) {
        return absl::InvalidArgumentError(
            absl::StrCat("WriteSst: vnode ", vnode, " of table ",
                         batch.table_id, " is >= ", kMaxVnodeCount));
      }
      key.clear();
      AppendFullKey(batch.table_id, vnode, MemTablePk(memtable_key),
                    batch.epoch, &key);
      std::string value;
      if (entry.has_value()) {
        AppendRowValue(*entry, &value);
      } else {
        AppendTombstoneValue(&value);
      }
      entries.insert_or_assign(key, std::move(value));
    }
  }
  if (entries.empty()) {
    return absl::InvalidArgumentError("WriteSst: no entry to write");
  }
  for (const auto& [full_key, value] : entries) {
    absl::string_view row;
    BACKFILL_RETURN_IF_ERROR(builder.Add(
        full_key, value,
        DecodeEpochSuffix(SplitEncodedFullKey(full_key).epoch_suffix),
        ParseMvccValue(value, &row) == MvccValueKind::kTombstone));
  }
  return builder.Finish(info);
}

// ---- SstBlockCache
// ------------------------------------------------------------

class SstBlockCache::Rep {
 public:
  explicit Rep(size_t capacity) : cache(rocksdb::NewLRUCache(capacity)) {}
  std::shared_ptr<rocksdb::Cache> cache;
};

SstBlockCache::SstBlockCache(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
SstBlockCache::~SstBlockCache() = default;

std::shared_ptr<SstBlockCache> SstBlockCache::Create(size_t capacity_bytes) {
  return std::shared_ptr<SstBlockCache>(
      new SstBlockCache(std::make_unique<Rep>(capacity_bytes)));
}

size_t SstBlockCache::usage_bytes() const { return rep_->cache->GetUsage(); }

// ---- SstReader
// ----------------------------------------------------------------

class SstReader::Rep {
 public:
  std::string name;
  std::shared_ptr<SstBlockCache> block_cache;  // Keeps the cache alive.
  std::unique_ptr<rocksdb::Env> memory_env;  // OpenBytes only; outlives reader.
  std::shared_ptr<rocksdb::Statistics> statistics;
  std::unique_ptr<rocksdb::SstFileReader> reader;
  SstFileInfo info;

  absl::Status Open(const std::string& path, const SstReaderOptions& options) {
    rocksdb::Options rocksdb_options = SstOptions(
        options.block_cache == nullptr ? nullptr
                                       : options.block_cache->rep().cache,
        4096, 10);
    if (memory_env != nullptr) rocksdb_options.env = memory_env.get();
    statistics = rocksdb::CreateDBStatistics();
    rocksdb_options.statistics = statistics;
    reader = std::make_unique<rocksdb::SstFileReader>(rocksdb_options);
    const std::string operation = absl::StrCat("open SST object ", name);
    rocksdb::Status status = reader->Open(path);
    if (status.IsPathNotFound() || status.IsNotFound()) {
      return absl::NotFoundError(
          absl::StrCat(operation, ": ", status.ToString()));
    }
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(NameStatus(status, name), operation));
    std::shared_ptr<const rocksdb::TableProperties> properties =
        reader->GetTableProperties();
    if (properties == nullptr ||
        properties->comparator_name != MvccComparator()->Name()) {
      return absl::DataLossError(absl::StrCat(
          operation, ": written with comparator '",
          properties == nullptr ? "?" : properties->comparator_name, "', not ",
          MvccComparator()->Name()));
    }
    if (options.verify_checksums) {
      BACKFILL_RETURN_IF_ERROR(
          FromRocksDb(NameStatus(reader->VerifyChecksum(), name), operation));
    }
    info.num_entries = properties->num_entries;
    rocksdb::ReadOptions read_options;
    read_options.total_order_seek = true;
    read_options.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(reader->NewIterator(read_options));
    it->SeekToFirst();
    if (it->Valid()) {
      info.smallest_key = std::string(ToStringView(it->key()));
      it->SeekToLast();
      if (it->Valid()) info.largest_key = std::string(ToStringView(it->key()));
    }
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(NameStatus(it->status(), name), operation));
    for (const std::string* key : {&info.smallest_key, &info.largest_key}) {
      if (!DecodeFullKey(*key).ok()) {
        return absl::DataLossError(absl::StrCat(
            operation, ": holds a key that is not a state store key (",
            key->size(), " bytes)"));
      }
    }
    return absl::OkStatus();
  }
};

SstReader::SstReader(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
SstReader::~SstReader() = default;

absl::StatusOr<std::shared_ptr<const SstReader>> SstReader::OpenFile(
    std::string name, const std::string& path,
    const SstReaderOptions& options) {
  auto rep = std::make_unique<Rep>();
  rep->name = std::move(name);
  rep->block_cache = options.block_cache;
  BACKFILL_RETURN_IF_ERROR(rep->Open(path, options));
  return std::shared_ptr<const SstReader>(new SstReader(std::move(rep)));
}

absl::StatusOr<std::shared_ptr<const SstReader>> SstReader::OpenBytes(
    std::string name, absl::string_view bytes,
    const SstReaderOptions& options) {
  auto rep = std::make_unique<Rep>();
  rep->name = std::move(name);
  rep->block_cache = options.block_cache;
  rep->memory_env.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  {
    std::unique_ptr<rocksdb::WritableFile> file;
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(rep->memory_env->NewWritableFile(kFileName, &file,
                                                     rocksdb::EnvOptions()),
                    "OpenBytes: copy"));
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(file->Append(ToSlice(bytes)), "OpenBytes: copy"));
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(file->Close(), "OpenBytes: copy"));
  }
  BACKFILL_RETURN_IF_ERROR(rep->Open(kFileName, options));
  return std::shared_ptr<const SstReader>(new SstReader(std::move(rep)));
}

const std::string& SstReader::name() const { return rep_->name; }
const SstFileInfo& SstReader::info() const { return rep_->info; }
uint64_t SstReader::bloom_filter_skips() const {
  return rep_->statistics->getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_USEFUL) +
         rep_->statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
}

// ---- Reads over several files
// ------------------------------------------------

namespace {

// A forward-only rocksdb::Iterator merging the iterators of several SSTs in
// comparator order (ties: the earlier file first). Errors name the object.
class MergingSstIterator final : public rocksdb::Iterator {
 public:
  MergingSstIterator(const std::vector<std::shared_ptr<const SstReader>>& files,
                     const rocksdb::ReadOptions& options) {
    for (const auto& file : files) {
      children_.push_back(
          Child{file->name(), std::unique_ptr<rocksdb::Iterator>(
                                  file->rep().reader->NewIterator(options))});
    }
  }

  bool Valid() const override { return current_ != nullptr; }
  void SeekToFirst() override {
    for (Child& child : children_) child.it->SeekToFirst();
    FindSmallest();
  }
  void Seek(const rocksdb::Slice& target) override {
    for (Child& child : children_) child.it->Seek(target);
    FindSmallest();
  }
  void Next() override {
    current_->it->Next();
    FindSmallest();
  }
  rocksdb::Slice key() const override { return current_->it->key(); }
  rocksdb::Slice value() const override { return current_->it->value(); }
  rocksdb::Status status() const override {
    if (!status_.ok()) return status_;
    for (const Child& child : children_) {
      if (!child.it->status().ok()) {
        return NameStatus(child.it->status(), child.name);
      }
    }
    return rocksdb::Status::OK();
  }
  // MvccIterator only moves forward.
  void SeekToLast() override { Unsupported("SeekToLast"); }
  void SeekForPrev(const rocksdb::Slice& /*target*/) override {
    Unsupported("SeekForPrev");
  }
  void Prev() override { Unsupported("Prev"); }

 private:
  struct Child {
    std::string name;
    std::unique_ptr<rocksdb::Iterator> it;
  };

  void FindSmallest() {
    current_ = nullptr;
    for (Child& child : children_) {
      if (!child.it->Valid()) {
        if (!child.it->status().ok()) {  // Stop at the first error.
          current_ = nullptr;
          return;
        }
        continue;
      }
      if (current_ == nullptr ||
          MvccComparator()->Compare(child.it->key(), current_->it->key()) < 0) {
        current_ = &child;
      }
    }
  }
  void Unsupported(const char* what) {
    current_ = nullptr;
    status_ = rocksdb::Status::NotSupported(what, "merged SST iterator");
  }

  std::vector<Child> children_;
  Child* current_ = nullptr;
  rocksdb::Status status_;
};

// Whether a file's [smallest, largest] meets [lower, upper).
bool Overlaps(const SstFileInfo& info, absl::string_view lower,
              absl::string_view upper) {
  const rocksdb::Comparator* cmp = MvccComparator();
  return cmp->Compare(ToSlice(info.largest_key), ToSlice(lower)) >= 0 &&
         cmp->Compare(ToSlice(info.smallest_key), ToSlice(upper)) < 0;
}

// The scan's bounds, as MvccIterator computes them.
void ScanBounds(TableId table_id, VirtualNode vnode, const PkRange& range,
                std::string* lower, std::string* upper) {
  AppendFullKey(table_id, vnode, range.inclusive_min, Epoch::Max(), lower);
  if (range.exclusive_max.has_value()) {
    AppendFullKey(table_id, vnode, *range.exclusive_max, Epoch::Max(), upper);
  } else {
    AppendFullKey(table_id, static_cast<VirtualNode>(vnode + 1), "",
                  Epoch::Max(), upper);
  }
}

std::vector<std::shared_ptr<const SstReader>> FilesInRange(
    const std::vector<std::shared_ptr<const SstReader>>& files,
    TableId table_id, VirtualNode vnode, const PkRange& range) {
  std::string lower, upper;
  ScanBounds(table_id, vnode, range, &lower, &upper);
  std::vector<std::shared_ptr<const SstReader>> result;
  for (const auto& file : files) {
    if (Overlaps(file->info(), lower, upper)) result.push_back(file);
  }
  return result;
}

// DataLoss from the MVCC decoding (a bad key or value) names the files.
absl::Status NameFiles(
    const absl::Status& status,
    const std::vector<std::shared_ptr<const SstReader>>& files) {
  if (status.code() != absl::StatusCode::kDataLoss ||
      absl::StrContains(status.message(), "SST object")) {
    return status;
  }
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file->name());
  return absl::DataLossError(absl::StrCat(
      status.message(), "; in SST object(s) ", absl::StrJoin(names, ", ")));
}

class SstsIterator final : public StateStoreIterator {
 public:
  SstsIterator(std::vector<std::shared_ptr<const SstReader>> files,
               MvccScan scan, std::unique_ptr<EpochPin> pin)
      : files_(std::move(files)),
        mvcc_(
            std::move(scan),
            [this](const rocksdb::ReadOptions& options) -> rocksdb::Iterator* {
              return new MergingSstIterator(files_, options);
            },
            std::move(pin)) {}

  bool Valid() const override { return mvcc_.Valid(); }
  void SeekToFirst() override { mvcc_.SeekToFirst(); }
  void Seek(absl::string_view pk) override { mvcc_.Seek(pk); }
  void Next() override { mvcc_.Next(); }
  absl::string_view key() const override { return mvcc_.key(); }
  absl::string_view value() const override { return mvcc_.value(); }
  absl::Status status() const override {
    return NameFiles(mvcc_.status(), files_);
  }

 private:
  const std::vector<std::shared_ptr<const SstReader>> files_;
  MvccIterator mvcc_;  // After files_: its RocksDB iterators read them.
};

}  // namespace

absl::StatusOr<std::optional<std::string>> GetFromSsts(
    const std::vector<std::shared_ptr<const SstReader>>& files,
    TableId table_id, VirtualNode vnode, absl::string_view pk,
    Epoch read_epoch) {
  std::string upper(pk);
  upper.push_back('\0');
  const PkRange range = PkRange::Between(pk, upper);
  std::vector<std::shared_ptr<const SstReader>> candidates =
      FilesInRange(files, table_id, vnode, range);
  if (candidates.empty()) return std::nullopt;
  SstsIterator it(std::move(candidates),
                  MvccScan{.table_id = table_id,
                           .vnode = vnode,
                           .range = range,
                           .read_epoch = read_epoch,
                           .point_lookup = true},
                  nullptr);
  it.SeekToFirst();
  BACKFILL_RETURN_IF_ERROR(it.status());
  if (!it.Valid()) return std::nullopt;
  return std::string(it.value());
}

absl::StatusOr<std::string> CompactSsts(
    const std::vector<std::shared_ptr<const SstReader>>& inputs, Epoch safe,
    bool drop_tombstones, const SstWriteOptions& options, SstFileInfo* info) {
  MemorySstBuilder builder("CompactSsts");
  BACKFILL_RETURN_IF_ERROR(builder.Open(options));
  rocksdb::ReadOptions read_options;
  read_options.total_order_seek = true;
  read_options.fill_cache = false;
  MergingSstIterator it(inputs, read_options);
  std::string last_user_key;
  bool any_key = false;
  bool shadowed = false;  // a version <= safe of last_user_key was seen
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const absl::string_view key = ToStringView(it.key());
    const absl::string_view value = ToStringView(it.value());
    absl::StatusOr<FullKeyView> decoded = DecodeFullKey(key);
    if (!decoded.ok()) {
      return NameFiles(absl::DataLossError(absl::StrCat(
                           "CompactSsts: ", decoded.status().message())),
                       inputs);
    }
    const absl::string_view user_key = SplitEncodedFullKey(key).user_key;
    if (any_key && user_key == last_user_key) {
      if (shadowed) continue;
    } else {
      last_user_key.assign(user_key.data(), user_key.size());
      shadowed = false;
      any_key = true;
    }
    if (builder.info().num_entries > 0 && key == builder.info().largest_key) {
      continue;  // A tie: the earlier input won.
    }
    absl::string_view row;
    const bool tombstone =
        ParseMvccValue(value, &row) == MvccValueKind::kTombstone;
    if (decoded->epoch <= safe) {
      shadowed = true;
      if (tombstone && drop_tombstones) continue;
    }
    BACKFILL_RETURN_IF_ERROR(
        builder.Add(key, value, decoded->epoch, tombstone));
  }
  BACKFILL_RETURN_IF_ERROR(
      FromRocksDb(it.status(), "CompactSsts: read inputs"));
  if (builder.info().num_entries == 0) {
    if (info != nullptr) *info = SstFileInfo{};
    return std::string();
  }
  return builder.Finish(info);
}

std::unique_ptr<StateStoreIterator> NewSstsIterator(
    std::vector<std::shared_ptr<const SstReader>> files, TableId table_id,
    VirtualNode vnode, const PkRange& range, Epoch read_epoch, bool fill_cache,
    std::unique_ptr<EpochPin> pin) {
  return std::make_unique<SstsIterator>(
      FilesInRange(files, table_id, vnode, range),
      MvccScan{.table_id = table_id,
               .vnode = vnode,
               .range = range,
               .read_epoch = read_epoch,
               .fill_cache = fill_cache},
      std::move(pin));
}

}  // namespace backfill
