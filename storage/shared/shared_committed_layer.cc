#include "storage/shared/shared_committed_layer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/base/internal/endian.h"
#include "absl/functional/function_ref.h"
#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "storage/internal/epoch_pin_rows.h"
#include "storage/shared/shared_version.pb.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::Status ValidateSharedStateStoreOptions(
    const SharedStateStoreOptions& options) {
  if (options.object_store == nullptr) {
    return absl::InvalidArgumentError(
        "SharedStateStoreOptions.object_store is required");
  }
  if (options.etcd == nullptr) {
    return absl::InvalidArgumentError(
        "SharedStateStoreOptions.etcd is required");
  }
  if (options.etcd_prefix.empty()) {
    return absl::InvalidArgumentError(
        "SharedStateStoreOptions.etcd_prefix must not be empty");
  }
  if (options.cache_dir.empty()) {
    return absl::InvalidArgumentError(
        "SharedStateStoreOptions.cache_dir is required");
  }
  if (!options.object_prefix.empty()) {
    BACKFILL_RETURN_IF_ERROR(ValidateObjectKeyPrefix(options.object_prefix));
    if (options.object_prefix.back() != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "SharedStateStoreOptions.object_prefix must end in '/': '",
          options.object_prefix, "'"));
    }
  }
  return absl::OkStatus();
}

namespace shared_internal {
namespace {

using storage_internal::CommitBatch;
using storage_internal::EpochPin;
using storage_internal::ForEachPinnedEpoch;

std::string RandomHex() {
  absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

proto::SstDescriptor ToProto(const std::string& object_key,
                             const SstFileInfo& info) {
  proto::SstDescriptor sst;
  sst.set_object_key(object_key);
  sst.set_size_bytes(info.size_bytes);
  sst.set_num_entries(info.num_entries);
  sst.set_num_tombstones(info.num_tombstones);
  sst.set_min_epoch(info.min_epoch.value());
  sst.set_max_epoch(info.max_epoch.value());
  sst.set_smallest_key(info.smallest_key);
  sst.set_largest_key(info.largest_key);
  return sst;
}

absl::StatusOr<SstFileInfo> FromProto(const proto::SstDescriptor& sst,
                                      absl::string_view etcd_key) {
  SstFileInfo info;
  info.size_bytes = sst.size_bytes();
  info.num_entries = sst.num_entries();
  info.num_tombstones = sst.num_tombstones();
  info.min_epoch = Epoch(sst.min_epoch());
  info.max_epoch = Epoch(sst.max_epoch());
  info.smallest_key = sst.smallest_key();
  info.largest_key = sst.largest_key();
  if (ValidateObjectKey(sst.object_key()).ok() && info.num_entries > 0 &&
      info.min_epoch != Epoch::Zero() && info.min_epoch <= info.max_epoch &&
      DecodeFullKey(info.smallest_key).ok() &&
      DecodeFullKey(info.largest_key).ok()) {
    return info;
  }
  return absl::DataLossError(
      absl::StrCat("etcd key '", absl::CHexEscape(etcd_key),
                   "': malformed SST descriptor of object '",
                   absl::CHexEscape(sst.object_key()), "'"));
}

// The epoch in an SST object's name: <prefix>sst/<20 digits>-...; nullopt
// for other names.
std::optional<uint64_t> EpochOfObject(absl::string_view key,
                                      absl::string_view sst_prefix) {
  if (!absl::ConsumePrefix(&key, sst_prefix) || key.size() < 21 ||
      key[20] != '-') {
    return std::nullopt;
  }
  uint64_t epoch = 0;
  if (!absl::SimpleAtoi(key.substr(0, 20), &epoch)) return std::nullopt;
  return epoch;
}

// The oldest epoch pin persisted in `ssts[begin, end)` of `version`: the
// rows of kEpochPinTableId (epoch_pin_rows.h; storage/FORMAT.md, "Epoch
// pins") those SSTs hold as of the version's committed epoch, whichever
// process's checkpoint wrote them. nullopt if none. Errors: DataLoss naming
// the owner of a row that is not an 8-byte epoch, or the object of corrupt
// bytes.
absl::StatusOr<std::optional<Epoch>> OldestPersistedPin(const Version& version,
                                                        size_t begin,
                                                        size_t end) {
  std::vector<std::shared_ptr<const SstReader>> files;
  for (size_t i = begin; i < end; ++i) files.push_back(version.ssts[i].reader);
  std::unique_ptr<StateStoreIterator> it = NewSstsIterator(
      std::move(files), kEpochPinTableId, 0, PkRange::All(),
      version.committed_epoch, /*fill_cache=*/false, /*pin=*/nullptr);
  std::optional<Epoch> oldest;
  absl::Status read =
      ForEachPinnedEpoch(*it, [&](absl::string_view /*owner*/, Epoch epoch) {
        if (!oldest.has_value() || epoch < *oldest) oldest = epoch;
      });
  if (!read.ok()) {
    return absl::Status(read.code(), absl::StrCat("version ", version.id, ": ",
                                                  read.message()));
  }
  return oldest;
}

}  // namespace

// Pins a version (its SSTs stay open and are not vacuumed) and an epoch
// (compactions keep what reads at it see) while it lives.
class SharedCommittedLayer::VersionPin final : public EpochPin {
 public:
  VersionPin(SharedCommittedLayer* layer,
             std::shared_ptr<const Version> version,
             std::multiset<uint64_t>::iterator epoch)
      : version(std::move(version)), layer_(layer), epoch_(epoch) {}
  ~VersionPin() override { layer_->Unpin(epoch_); }
  const std::shared_ptr<const Version> version;

 private:
  SharedCommittedLayer* const layer_;
  const std::multiset<uint64_t>::iterator epoch_;
};

SharedCommittedLayer::SharedCommittedLayer(
    const SharedStateStoreOptions& options,
    std::shared_ptr<SstBlockCache> block_cache)
    : options_(options),
      block_cache_(std::move(block_cache)),
      token_prefix_(RandomHex()),
      current_(std::make_shared<const Version>()) {}

absl::StatusOr<std::unique_ptr<SharedCommittedLayer>>
SharedCommittedLayer::Open(const SharedStateStoreOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateSharedStateStoreOptions(options));
  std::error_code error;
  std::filesystem::create_directories(options.cache_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        "create cache directory ", options.cache_dir, ": ", error.message()));
  }
  std::shared_ptr<SstBlockCache> cache;
  if (options.block_cache_bytes > 0) {
    cache = SstBlockCache::Create(options.block_cache_bytes);
  }
  std::unique_ptr<SharedCommittedLayer> layer(
      new SharedCommittedLayer(options, std::move(cache)));
  BACKFILL_RETURN_IF_ERROR(layer->Load());
  layer->maintenance_thread_ =
      std::thread([layer = layer.get()] { layer->RunMaintenance(); });
  return layer;
}

SharedCommittedLayer::~SharedCommittedLayer() { StopGarbageCollection(); }

void SharedCommittedLayer::StopGarbageCollection() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  maintenance_cv_.SignalAll();
  if (maintenance_thread_.joinable()) maintenance_thread_.join();
}

std::string SharedCommittedLayer::PointerKey() const {
  return absl::StrCat(options_.etcd_prefix, "version");
}

std::string SharedCommittedLayer::DeltaKey(uint64_t id) const {
  return absl::StrCat(options_.etcd_prefix, "delta/",
                      absl::StrFormat("%020d", id));
}

std::string SharedCommittedLayer::ObjectName(
    const std::string& object_key) const {
  return absl::StrCat(options_.object_store->DebugString(), "/", object_key);
}

std::string SharedCommittedLayer::CachePath(
    const std::string& object_key) const {
  return (std::filesystem::path(options_.cache_dir) / object_key).string();
}

std::string SharedCommittedLayer::CheckpointKey() const {
  return absl::StrCat(options_.etcd_prefix, "checkpoint");
}

absl::Status SharedCommittedLayer::NotThisObjectStore(
    absl::string_view what, const absl::Status& cause) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "the object store ", options_.object_store->DebugString(),
      " does not hold ", what, " of the store whose versions ",
      "etcd keeps under '", absl::CHexEscape(options_.etcd_prefix),
      "': the store was created with another object store (use that one: ",
      "the command's --object_store, whose default is DATA_DIR/objects), ",
      "the versions under that prefix are another job's (each job needs a ",
      "prefix of its own), or the object was deleted (", cause.message(), ")"));
}

absl::StatusOr<SharedCommittedLayer::LoadedVersion>
SharedCommittedLayer::ReadCheckedVersion() {
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<LoadedVersion> loaded = ReadVersion();
    if (absl::IsNotFound(loaded.status())) {
      // A file of the version (an SST not in the cache, the version
      // checkpoint) is not there, and no newer version explains it
      // (ReadVersion reads again if one does).
      return NotThisObjectStore("a file", loaded.status());
    }
    if (!loaded.ok() || loaded->version->ssts.empty()) return loaded;
    const std::string& newest = loaded->version->ssts.back().object_key;
    absl::StatusOr<ObjectInfo> head = options_.object_store->Head(newest);
    if (head.ok()) return loaded;
    if (!absl::IsNotFound(head.status())) return head.status();
    // Found in the cache, not in the object store. A compaction elsewhere
    // may have replaced it and its garbage collection deleted it since:
    // only a version that still names it after a fresh read is missing a
    // file.
    absl::StatusOr<std::optional<EtcdKeyValue>> pointer =
        options_.etcd->Get(PointerKey());
    if (!pointer.ok()) return pointer.status();
    const bool moved = !pointer->has_value() ||
                       (*pointer)->mod_revision != loaded->pointer_revision;
    if (!moved || attempt + 1 >= kReadVersionAttempts) {
      return NotThisObjectStore(absl::StrCat("SST '", newest, "'"),
                                head.status());
    }
  }
}

absl::Status SharedCommittedLayer::Load() {
  BACKFILL_ASSIGN_OR_RETURN(LoadedVersion loaded, ReadCheckedVersion());
  MutexLock commit_lock(&commit_mu_);
  MutexLock lock(&mu_);
  Adopt(std::move(loaded));
  // The store starts with this committed epoch (SharedStateStore::Open).
  published_epoch_ = current_->committed_epoch;
  serving_published_.reset();  // No reader is older than the store.
  return absl::OkStatus();
}

absl::StatusOr<SharedCommittedLayer::LoadedVersion>
SharedCommittedLayer::ReadVersion() {
  absl::Status last;
  for (int attempt = 0; attempt < kReadVersionAttempts; ++attempt) {
    absl::StatusOr<LoadedVersion> loaded = ReadVersionOnce();
    if (loaded.ok() || loaded.status().code() != absl::StatusCode::kAborted) {
      return loaded;
    }
    last = loaded.status();
  }
  return absl::UnavailableError(absl::StrCat(
      "reading the version of '", PointerKey(), "': ", kReadVersionAttempts,
      " attempts met a version checkpoint being written or a version "
      "replaced meanwhile; last: ",
      last.message()));
}

absl::StatusOr<SharedCommittedLayer::LoadedVersion>
SharedCommittedLayer::ReadVersionOnce() {
  const std::string pointer_key = PointerKey();
  LoadedVersion loaded;
  BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> pointer,
                            options_.etcd->Get(pointer_key));
  if (!pointer.has_value()) {  // A new store.
    loaded.version = std::make_shared<Version>();
    return loaded;
  }
  proto::CurrentVersion current;
  if (!current.ParseFromString(pointer->value) || current.id() == 0) {
    return absl::DataLossError(absl::StrCat(
        "etcd key '", absl::CHexEscape(pointer_key),
        "': not a version pointer (", pointer->value.size(), " bytes)"));
  }
  loaded.pointer_revision = pointer->mod_revision;
  // The newest version checkpoint, if any: deltas up to it may be trimmed.
  const std::string checkpoint_key = CheckpointKey();
  BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> checkpoint,
                            options_.etcd->Get(checkpoint_key));
  // An error that a checkpoint written meanwhile explains is Aborted (the
  // caller reads again); otherwise `status`.
  auto unless_moved = [&](absl::Status status) -> absl::Status {
    absl::StatusOr<std::optional<EtcdKeyValue>> now =
        options_.etcd->Get(checkpoint_key);
    if (!now.ok()) return now.status();
    const int64_t before =
        checkpoint.has_value() ? checkpoint->mod_revision : 0;
    const int64_t after = now->has_value() ? (*now)->mod_revision : 0;
    if (before != after) {
      return absl::AbortedError(
          absl::StrCat("a version checkpoint was written meanwhile (",
                       status.message(), ")"));
    }
    return status;
  };
  proto::VersionCheckpointRef ref;
  if (checkpoint.has_value()) {
    if (!ref.ParseFromString(checkpoint->value) || ref.id() == 0 ||
        !ValidateObjectKey(ref.object_key()).ok()) {
      return absl::DataLossError(
          absl::StrCat("etcd key '", absl::CHexEscape(checkpoint_key),
                       "': not a version checkpoint record (",
                       checkpoint->value.size(), " bytes)"));
    }
    if (ref.id() > current.id()) {
      return absl::AbortedError("a version checkpoint newer than the pointer");
    }
    loaded.checkpoint_id = ref.id();
    loaded.checkpoint_object = ref.object_key();
  }
  // The base the deltas apply to: the version this process has, unless the
  // checkpoint is newer (its deltas may be gone); then the checkpoint
  // object. Only a process that fell behind a checkpoint fetches it.
  const std::shared_ptr<const Version> mine = this->current();
  if (mine->id <= current.id() && loaded.checkpoint_id <= mine->id) {
    loaded.version = std::make_shared<Version>(*mine);
  } else {
    loaded.version = std::make_shared<Version>();
    if (checkpoint.has_value()) {
      absl::StatusOr<std::string> bytes =
          options_.object_store->Get(ref.object_key());
      if (!bytes.ok()) return unless_moved(bytes.status());
      proto::VersionCheckpoint full;
      if (!full.ParseFromString(*bytes) || full.id() != ref.id()) {
        return absl::DataLossError(absl::StrCat(
            "version checkpoint object ", ObjectName(ref.object_key()),
            ": not version ", ref.id(), " (", bytes->size(), " bytes)"));
      }
      loaded.version->id = full.id();
      loaded.version->committed_epoch = Epoch(full.committed_epoch());
      loaded.version->gc_horizon = Epoch(full.gc_horizon());
      for (const proto::SstDescriptor& sst : full.ssts()) {
        BACKFILL_ASSIGN_OR_RETURN(SstFileInfo info,
                                  FromProto(sst, ObjectName(ref.object_key())));
        loaded.version->ssts.push_back(
            VersionSst{sst.object_key(), std::move(info), nullptr});
      }
    }
  }
  Version& version = *loaded.version;
  // Only the deltas after the base are read; those past current.id() (a
  // commit after the pointer was read) are not applied.
  uint64_t expected_id = version.id + 1;
  BACKFILL_ASSIGN_OR_RETURN(
      EtcdRangeResult deltas,
      options_.etcd->GetPrefix(absl::StrCat(options_.etcd_prefix, "delta/"),
                               {.from_key = DeltaKey(expected_id)}));
  for (const EtcdKeyValue& kv : deltas.kvs) {
    if (expected_id > current.id()) break;
    proto::VersionDelta delta;
    if (kv.key != DeltaKey(expected_id) || !delta.ParseFromString(kv.value) ||
        delta.id() != expected_id) {
      return unless_moved(absl::DataLossError(
          absl::StrCat("etcd key '", absl::CHexEscape(kv.key),
                       "': expected version delta ", expected_id, " of ",
                       current.id(), " at '", DeltaKey(expected_id), "'")));
    }
    // A compaction's output takes the place of its (contiguous) inputs;
    // a checkpoint's SSTs go at the end.
    size_t insert_at = version.ssts.size();
    for (const std::string& removed : delta.removed()) {
      auto it = std::find_if(
          version.ssts.begin(), version.ssts.end(),
          [&](const VersionSst& sst) { return sst.object_key == removed; });
      if (it == version.ssts.end()) {
        return absl::DataLossError(absl::StrCat(
            "etcd key '", absl::CHexEscape(kv.key), "': removes SST '",
            absl::CHexEscape(removed), "', which version ", expected_id - 1,
            " does not list"));
      }
      insert_at =
          std::min(insert_at, static_cast<size_t>(it - version.ssts.begin()));
      version.ssts.erase(it);
    }
    insert_at = std::min(insert_at, version.ssts.size());
    version.gc_horizon =
        std::max(version.gc_horizon, Epoch(delta.gc_horizon()));
    for (const proto::SstDescriptor& sst : delta.added()) {
      BACKFILL_ASSIGN_OR_RETURN(SstFileInfo info, FromProto(sst, kv.key));
      version.ssts.insert(
          version.ssts.begin() + static_cast<std::ptrdiff_t>(insert_at++),
          VersionSst{sst.object_key(), std::move(info), nullptr});
    }
    ++expected_id;
  }
  if (expected_id != current.id() + 1) {
    return unless_moved(absl::DataLossError(
        absl::StrCat("etcd key '", absl::CHexEscape(DeltaKey(expected_id)),
                     "': version delta missing (the pointer '", pointer_key,
                     "' names version ", current.id(), ")")));
  }
  version.id = current.id();
  version.committed_epoch = Epoch(current.committed_epoch());
  // Files this process has open already (synced by it, or in its version)
  // are not opened again.
  for (VersionSst& sst : version.ssts) {
    if (sst.reader != nullptr) continue;
    {
      MutexLock lock(&mu_);
      auto synced = synced_.find(sst.object_key);
      if (synced != synced_.end()) sst.reader = synced->second.reader;
    }
    for (const VersionSst& open : mine->ssts) {
      if (open.object_key == sst.object_key) sst.reader = open.reader;
    }
    if (sst.reader == nullptr) {
      absl::StatusOr<std::shared_ptr<const SstReader>> reader =
          OpenSst(sst.object_key, sst.info);
      if (reader.status().code() == absl::StatusCode::kNotFound) {
        // The committer's vacuum deletes the objects its newer version no
        // longer lists (a compaction's inputs): if the pointer moved, read
        // that version instead (Aborted: the caller reads again).
        BACKFILL_ASSIGN_OR_RETURN(std::optional<EtcdKeyValue> now,
                                  options_.etcd->Get(pointer_key));
        if (now.has_value() && now->mod_revision != loaded.pointer_revision) {
          return absl::AbortedError(absl::StrCat(
              "version ", current.id(), " was replaced meanwhile (",
              reader.status().message(), ")"));
        }
      }
      BACKFILL_RETURN_IF_ERROR(reader.status());
      sst.reader = *std::move(reader);
    }
  }
  return loaded;
}

absl::Status SharedCommittedLayer::WriteVersionCheckpoint(
    const Version& version) {
  proto::VersionCheckpoint full;
  full.set_id(version.id);
  full.set_committed_epoch(version.committed_epoch.value());
  full.set_gc_horizon(version.gc_horizon.value());
  for (const VersionSst& sst : version.ssts) {
    *full.add_ssts() = ToProto(sst.object_key, sst.info);
  }
  const std::string object_key = absl::StrCat(
      options_.object_prefix, "versions/", absl::StrFormat("%020d", version.id),
      "-", RandomHex(), ".pb");
  BACKFILL_RETURN_IF_ERROR(
      options_.object_store->PutIfAbsent(object_key, full.SerializeAsString()));
  proto::VersionCheckpointRef ref;
  ref.set_id(version.id);
  ref.set_object_key(object_key);
  const std::string ref_value = ref.SerializeAsString();
  uint64_t previous_id = 0;
  std::string previous_object;
  {
    // Fenced like a commit, between version changes: only this process,
    // while it is the committer, records it. The pointer may have moved
    // past `version` since (a newer commit of this process): the record
    // names a version <= the pointer's, and the deltas after it stay.
    MutexLock commit_lock(&commit_mu_);
    EtcdTxn txn;
    txn.compares = {
        EtcdCompare::ModRevisionEquals(PointerKey(), fence_revision_)};
    txn.then_puts = {EtcdPut{CheckpointKey(), ref_value, 0}};
    txn.else_gets = {CheckpointKey()};
    BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, options_.etcd->Txn(txn));
    if (!result.succeeded) {
      const std::optional<EtcdKeyValue>& now = result.else_values.at(0);
      if (!(result.attempts > 1 && now.has_value() &&
            now->value == ref_value)) {
        options_.object_store->Delete(object_key).IgnoreError();
        return absl::FailedPreconditionError(
            absl::StrCat("version checkpoint ", version.id, " refused: '",
                         PointerKey(), "' was changed by another committer"));
      }
    }
    MutexLock lock(&mu_);
    previous_id = checkpoint_id_;
    previous_object = checkpoint_object_;
    checkpoint_id_ = version.id;
    checkpoint_object_ = object_key;
  }
  // The deltas it covers, and the previous checkpoint object, are no longer
  // read (ReadVersion skips deltas up to the checkpoint and reads again if
  // an object it wanted is gone). Deleted in transactions of at most 120.
  for (uint64_t id = previous_id + 1; id <= version.id;) {
    EtcdTxn trim;
    for (; id <= version.id && trim.then_deletes.size() < 120; ++id) {
      trim.then_deletes.push_back(DeltaKey(id));
    }
    BACKFILL_RETURN_IF_ERROR(options_.etcd->Txn(trim).status());
  }
  if (!previous_object.empty()) {
    options_.object_store->Delete(previous_object).IgnoreError();
  }
  return absl::OkStatus();
}

void SharedCommittedLayer::SetCurrent(std::shared_ptr<const Version> version) {
  std::erase_if(versions_, [](const std::weak_ptr<const Version>& old) {
    return old.expired();
  });
  // A synced SST of an epoch the version commits is in it (its reader is
  // shared) or never will be (README.md, "Compaction, the GC horizon and the
  // vacuum").
  const std::string sst_prefix = absl::StrCat(options_.object_prefix, "sst/");
  std::erase_if(synced_, [&](const auto& synced) {
    const std::optional<uint64_t> epoch =
        EpochOfObject(synced.first, sst_prefix);
    return epoch.has_value() && Epoch(*epoch) <= version->committed_epoch;
  });
  if (version->gc_horizon > published_epoch_ && serving_published_ == nullptr) {
    serving_published_ = ServingVersionLocked(published_epoch_);
  }
  versions_.push_back(version);
  current_ = std::move(version);
}

void SharedCommittedLayer::Adopt(LoadedVersion loaded) {
  if (current_->id >= loaded.version->id) return;
  SetCurrent(std::move(loaded.version));
  fence_revision_ = loaded.pointer_revision;
  checkpoint_id_ = loaded.checkpoint_id;
  checkpoint_object_ = std::move(loaded.checkpoint_object);
}

absl::StatusOr<std::string> SharedCommittedLayer::CacheFile(
    const std::string& object_key, absl::string_view bytes) {
  const std::string path = CachePath(object_key);
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      error);
  const std::string temporary = absl::StrCat(path, ".tmp-", RandomHex());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (error || !out) {
      std::filesystem::remove(temporary, error);
      return absl::InternalError(absl::StrCat("write cache file ", temporary,
                                              " of ", ObjectName(object_key)));
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("rename cache file to ", path, ": ", error.message()));
  }
  return path;
}

absl::StatusOr<std::shared_ptr<const SstReader>> SharedCommittedLayer::OpenSst(
    const std::string& object_key, const SstFileInfo& expected) {
  const std::string name = ObjectName(object_key);
  const SstReaderOptions reader_options{.block_cache = block_cache_,
                                        .verify_checksums = true};
  auto matches = [&](const SstReader& reader) {
    return reader.info().num_entries == expected.num_entries &&
           reader.info().smallest_key == expected.smallest_key &&
           reader.info().largest_key == expected.largest_key;
  };
  const std::string path = CachePath(object_key);
  std::error_code error;
  if (std::filesystem::file_size(path, error) == expected.size_bytes &&
      !error) {
    absl::StatusOr<std::shared_ptr<const SstReader>> cached =
        SstReader::OpenFile(name, path, reader_options);
    if (cached.ok() && matches(**cached)) return cached;
    // A damaged or foreign cache file: fetch the object again.
  }
  BACKFILL_ASSIGN_OR_RETURN(std::string bytes,
                            options_.object_store->Get(object_key));
  if (bytes.size() != expected.size_bytes) {
    return absl::DataLossError(absl::StrCat(
        "SST object ", name, " has ", bytes.size(),
        " bytes; its version descriptor says ", expected.size_bytes));
  }
  // Checked before it is cached: a corrupt object is DataLoss naming it.
  BACKFILL_RETURN_IF_ERROR(
      SstReader::OpenBytes(name, bytes, reader_options).status());
  BACKFILL_ASSIGN_OR_RETURN(std::string cached_path,
                            CacheFile(object_key, bytes));
  BACKFILL_ASSIGN_OR_RETURN(
      std::shared_ptr<const SstReader> reader,
      SstReader::OpenFile(name, cached_path, reader_options));
  if (!matches(*reader)) {
    return absl::DataLossError(absl::StrCat(
        "SST object ", name, " does not match its version descriptor (",
        reader->info().num_entries, " entries, descriptor ",
        expected.num_entries, ")"));
  }
  return reader;
}

std::shared_ptr<const Version> SharedCommittedLayer::current() const {
  MutexLock lock(&mu_);
  return current_;
}

std::shared_ptr<const Version> SharedCommittedLayer::ServingVersion(
    Epoch read_epoch) const {
  MutexLock lock(&mu_);
  return ServingVersionLocked(read_epoch);
}

std::shared_ptr<const Version> SharedCommittedLayer::ServingVersionLocked(
    Epoch read_epoch) const {
  for (auto it = versions_.rbegin(); it != versions_.rend(); ++it) {
    std::shared_ptr<const Version> version = it->lock();
    if (version != nullptr && version->gc_horizon <= read_epoch &&
        read_epoch <= version->committed_epoch) {
      return version;
    }
  }
  return nullptr;
}

std::unique_ptr<EpochPin> SharedCommittedLayer::Pin(Epoch epoch) {
  MutexLock lock(&mu_);
  std::shared_ptr<const Version> version = current_;
  if (epoch < version->gc_horizon) {
    // A compaction committed after its safe epoch was taken and before this
    // pin: a version still in use may serve the epoch (the reads through
    // this pin use it); if none does, the reads are refused.
    if (std::shared_ptr<const Version> older = ServingVersionLocked(epoch)) {
      version = std::move(older);
    }
  }
  return std::make_unique<VersionPin>(this, std::move(version),
                                      pins_.insert(epoch.value()));
}

void SharedCommittedLayer::SetCommittedEpoch(Epoch epoch) {
  MutexLock lock(&mu_);
  published_epoch_ = std::max(published_epoch_, epoch);
  if (current_->gc_horizon <= published_epoch_) serving_published_.reset();
}

void SharedCommittedLayer::Unpin(std::multiset<uint64_t>::iterator pin) {
  MutexLock lock(&mu_);
  pins_.erase(pin);
}

absl::Status SharedCommittedLayer::last_maintenance_status() const {
  MutexLock lock(&mu_);
  return last_maintenance_status_;
}

absl::Status SharedCommittedLayer::WaitForMaintenance() {
  MutexLock lock(&mu_);
  const uint64_t requested = maintenance_requested_;
  while (maintenance_served_ < requested && !stopping_) {
    maintenance_cv_.Wait(&mu_);
  }
  return last_maintenance_status_;
}

absl::StatusOr<VersionSst> SharedCommittedLayer::UploadSst(
    Epoch epoch, const std::string& bytes, SstFileInfo info) {
  // A fresh name; a taken one (a 2^-64 chance) gets another.
  std::string object_key;
  for (int attempt = 0;; ++attempt) {
    object_key = absl::StrCat(options_.object_prefix, "sst/",
                              absl::StrFormat("%020d", epoch.value()), "-",
                              RandomHex(), ".sst");
    absl::Status put = options_.object_store->PutIfAbsent(object_key, bytes);
    if (put.ok()) break;
    if (put.code() != absl::StatusCode::kFailedPrecondition || attempt > 3) {
      return put;
    }
  }
  if (options_.after_upload_for_test) {
    BACKFILL_RETURN_IF_ERROR(options_.after_upload_for_test(object_key));
  }
  BACKFILL_ASSIGN_OR_RETURN(std::string path, CacheFile(object_key, bytes));
  BACKFILL_ASSIGN_OR_RETURN(std::shared_ptr<const SstReader> reader,
                            SstReader::OpenFile(ObjectName(object_key), path,
                                                {.block_cache = block_cache_,
                                                 .verify_checksums = false}));
  return VersionSst{object_key, std::move(info), std::move(reader)};
}

absl::Status SharedCommittedLayer::Commit(
    const std::vector<CommitBatch>& batches, Epoch committed_epoch) {
  BACKFILL_ASSIGN_OR_RETURN(storage_internal::SyncResult synced,
                            Sync(batches, committed_epoch));
  BACKFILL_ASSIGN_OR_RETURN(storage_internal::CommittedVersion version,
                            CommitVersion({synced}, committed_epoch));
  return ApplyVersion(version);
}

absl::StatusOr<storage_internal::SyncResult> SharedCommittedLayer::Sync(
    const std::vector<CommitBatch>& batches, Epoch epoch) {
  storage_internal::SyncResult result;
  result.epoch = epoch;
  bool has_entries = false;
  for (const CommitBatch& batch : batches) {
    if (batch.data != nullptr && !batch.data->empty()) has_entries = true;
  }
  if (!has_entries) return result;
  SstFileInfo info;
  BACKFILL_ASSIGN_OR_RETURN(std::string bytes,
                            WriteSst(batches, options_.sst, &info));
  BACKFILL_ASSIGN_OR_RETURN(VersionSst sst, UploadSst(epoch, bytes, info));
  result.descriptors.push_back(
      ToProto(sst.object_key, sst.info).SerializeAsString());
  MutexLock lock(&mu_);
  synced_[sst.object_key] = std::move(sst);
  return result;
}

absl::StatusOr<storage_internal::CommittedVersion>
SharedCommittedLayer::CommitVersion(
    const std::vector<storage_internal::SyncResult>& syncs,
    Epoch committed_epoch) {
  // The SSTs first (another process's are fetched): no lock is held.
  std::vector<VersionSst> added;
  proto::VersionDelta delta;
  for (const storage_internal::SyncResult& sync : syncs) {
    for (const std::string& bytes : sync.descriptors) {
      proto::SstDescriptor descriptor;
      if (!descriptor.ParseFromString(bytes)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CommitVersion of epoch ", committed_epoch.value(),
            ": a sync result of epoch ", sync.epoch.value(),
            " holds an undecodable SST descriptor (", bytes.size(), " bytes)"));
      }
      absl::StatusOr<SstFileInfo> info =
          FromProto(descriptor, "(a sync result)");
      if (!info.ok())
        return absl::InvalidArgumentError(info.status().message());
      VersionSst sst{descriptor.object_key(), *std::move(info), nullptr};
      {
        // Forgotten once the version is current (SetCurrent).
        MutexLock lock(&mu_);
        auto mine = synced_.find(sst.object_key);
        if (mine != synced_.end()) sst.reader = mine->second.reader;
      }
      if (sst.reader == nullptr) {  // Synced by another process.
        BACKFILL_ASSIGN_OR_RETURN(sst.reader,
                                  OpenSst(sst.object_key, sst.info));
      }
      *delta.add_added() = descriptor;
      added.push_back(std::move(sst));
    }
  }
  // Then the version change, after (or before) any compaction's commit,
  // never during one.
  MutexLock commit_lock(&commit_mu_);
  std::shared_ptr<const Version> previous;
  uint64_t commit_number = 0;
  {
    MutexLock lock(&mu_);
    previous = current_;
    commit_number = ++commits_;
  }
  auto next = std::make_shared<Version>(*previous);
  next->id = previous->id + 1;
  next->committed_epoch = committed_epoch;
  for (VersionSst& sst : added) next->ssts.push_back(std::move(sst));
  delta.set_id(next->id);
  delta.set_committed_epoch(committed_epoch.value());
  const storage_internal::CommittedVersion committed{next->id, committed_epoch};
  BACKFILL_RETURN_IF_ERROR(
      CommitDelta(*previous, std::move(next), delta, commit_number));
  return committed;
}

absl::Status SharedCommittedLayer::ApplyVersion(
    const storage_internal::CommittedVersion& version) {
  if (current()->id >= version.id) return absl::OkStatus();
  BACKFILL_ASSIGN_OR_RETURN(LoadedVersion loaded, ReadVersion());
  if (loaded.version->id < version.id) {
    return absl::UnavailableError(absl::StrCat(
        "ApplyVersion: version ", version.id, " (epoch ",
        version.committed_epoch.value(), ") is not in etcd ('", PointerKey(),
        "' names version ", loaded.version->id, ")"));
  }
  MutexLock commit_lock(&commit_mu_);
  MutexLock lock(&mu_);
  Adopt(std::move(loaded));
  return absl::OkStatus();
}

void SharedCommittedLayer::AfterCommit() {
  {
    MutexLock lock(&mu_);
    ++maintenance_requested_;
  }
  maintenance_cv_.SignalAll();
}

void SharedCommittedLayer::RunMaintenance() {
  while (true) {
    uint64_t serving = 0;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && maintenance_served_ == maintenance_requested_) {
        maintenance_cv_.Wait(&mu_);
      }
      if (stopping_) return;
      // Requests that came while the last maintenance ran are served by
      // one more: it looks at the version as it is now.
      serving = maintenance_requested_;
    }
    // The checkpoints are committed: a failed maintenance does not undo
    // them (the next commit meets the same fence, if that was the cause).
    absl::Status maintained = Maintain();
    {
      MutexLock lock(&mu_);
      last_maintenance_status_ = std::move(maintained);
      maintenance_served_ = serving;
    }
    maintenance_cv_.SignalAll();
  }
}

absl::Status SharedCommittedLayer::Maintain() {
  MutexLock maintenance_lock(&maintenance_mu_);
  BACKFILL_ASSIGN_OR_RETURN(const bool compacted,
                            CompactWithRetries([this](const Version& base) {
                              return CompactionStart(base);
                            }));
  if (compacted) BACKFILL_RETURN_IF_ERROR(VacuumLocked().status());
  const std::shared_ptr<const Version> version = current();
  uint64_t checkpoint_id = 0;
  {
    MutexLock lock(&mu_);
    checkpoint_id = checkpoint_id_;
  }
  const uint64_t every = options_.version_checkpoint_deltas;
  if (every > 0 && version->id >= checkpoint_id + every) {
    BACKFILL_RETURN_IF_ERROR(WriteVersionCheckpoint(*version));
  }
  return absl::OkStatus();
}

absl::Status SharedCommittedLayer::CommitDelta(const Version& previous,
                                               std::shared_ptr<Version> next,
                                               proto::VersionDelta& delta,
                                               uint64_t commit_number) {
  const int64_t fence = fence_revision_;
  proto::CurrentVersion pointer;
  pointer.set_id(next->id);
  pointer.set_committed_epoch(next->committed_epoch.value());
  pointer.set_commit_token(absl::StrCat(token_prefix_, "-", commit_number));
  const std::string pointer_value = pointer.SerializeAsString();
  const std::string pointer_key = PointerKey();
  EtcdTxn txn;
  txn.compares = {EtcdCompare::ModRevisionEquals(pointer_key, fence)};
  txn.then_puts = {EtcdPut{DeltaKey(next->id), delta.SerializeAsString(), 0},
                   EtcdPut{pointer_key, pointer_value, 0}};
  txn.else_gets = {pointer_key};
  BACKFILL_ASSIGN_OR_RETURN(EtcdTxnResult result, options_.etcd->Txn(txn));
  int64_t revision = result.revision;
  if (!result.succeeded) {
    const std::optional<EtcdKeyValue>& now = result.else_values.at(0);
    if (result.attempts > 1 && now.has_value() && now->value == pointer_value) {
      revision = now->mod_revision;  // Our own earlier attempt applied.
    } else {
      proto::CurrentVersion theirs;
      if (now.has_value()) theirs.ParseFromString(now->value);
      return absl::FailedPreconditionError(absl::StrCat(
          "version commit of epoch ", next->committed_epoch.value(),
          " refused: etcd key '", pointer_key,
          "' was changed by another committer (this process last saw mod "
          "revision ",
          fence, ", version ", previous.id, "; now ",
          now.has_value()
              ? absl::StrCat("mod revision ", now->mod_revision, ", version ",
                             theirs.id(), ", epoch ", theirs.committed_epoch())
              : std::string("absent"),
          "); reopen the store"));
    }
  }
  MutexLock lock(&mu_);
  SetCurrent(std::move(next));
  fence_revision_ = revision;
  return absl::OkStatus();
}

std::optional<size_t> SharedCommittedLayer::CompactionStart(
    const Version& version) const {
  const size_t count = version.ssts.size();
  if (options_.compaction_trigger_ssts == 0 ||
      count <= options_.compaction_trigger_ssts) {
    return std::nullopt;
  }
  // Size-tiered: from the newest SST back, take each older SST while it is
  // at most twice the size of the newer ones taken (so a big old SST is
  // rewritten only once the newer data has grown to its order of size).
  size_t first = count - 1;
  uint64_t newer_bytes = version.ssts[first].info.size_bytes;
  while (first > 0 &&
         version.ssts[first - 1].info.size_bytes <= 2 * newer_bytes) {
    --first;
    newer_bytes += version.ssts[first].info.size_bytes;
  }
  if (count - first < 2) first = 0;  // Nothing similar: merge everything.
  return first;
}

absl::Status SharedCommittedLayer::Compact() {
  MutexLock maintenance_lock(&maintenance_mu_);
  return CompactWithRetries([](const Version& base) -> std::optional<size_t> {
           if (base.ssts.size() < 2) return std::nullopt;
           return 0;
         })
      .status();
}

absl::StatusOr<bool> SharedCommittedLayer::CompactWithRetries(
    absl::FunctionRef<std::optional<size_t>(const Version&)> start) {
  for (int attempt = 1;; ++attempt) {
    std::shared_ptr<const Version> base = current();
    const std::optional<size_t> first = start(*base);
    if (!first.has_value()) return false;
    // (`base` goes with the call: a version it kept alive would keep its
    // inputs from the vacuum.)
    const absl::Status compacted = CompactFrom(std::move(base), *first);
    if (compacted.ok()) return true;
    // Aborted: a checkpoint committed an older epoch pin meanwhile.
    if (compacted.code() != absl::StatusCode::kAborted ||
        attempt == kCompactionAttempts) {
      return compacted;
    }
  }
}

absl::Status SharedCommittedLayer::CompactFrom(
    std::shared_ptr<const Version> base, size_t first) {
  Epoch safe;
  {
    MutexLock lock(&mu_);
    // What reads at the published committed epoch and at every pinned epoch
    // see is kept; a pin taken later at an older epoch is refused
    // (gc_horizon). Bounded by the base's epoch too: the inputs are all the
    // base's SSTs that can hold versions <= safe (commits since add only
    // newer epochs).
    safe = std::min(base->committed_epoch, published_epoch_);
    if (!pins_.empty()) safe = std::min(safe, Epoch(*pins_.begin()));
  }
  // And every epoch pin the base persists, whichever process took it (this
  // process's own are in pins_ as well; another process's are known only
  // from its checkpoints' rows).
  BACKFILL_ASSIGN_OR_RETURN(const std::optional<Epoch> persisted,
                            OldestPersistedPin(*base, 0, base->ssts.size()));
  if (persisted.has_value()) safe = std::min(safe, *persisted);
  std::vector<std::shared_ptr<const SstReader>> inputs;
  for (size_t i = first; i < base->ssts.size(); ++i) {
    inputs.push_back(base->ssts[i].reader);
  }
  const bool full = first == 0;
  SstFileInfo info;
  BACKFILL_ASSIGN_OR_RETURN(
      std::string bytes, CompactSsts(inputs, safe, full, options_.sst, &info));
  std::optional<VersionSst> output;
  if (info.num_entries > 0) {
    // Named one epoch past the base's committed one: if this commit never
    // lands, the object is vacuumed once that epoch is committed without
    // it.
    BACKFILL_ASSIGN_OR_RETURN(
        output,
        UploadSst(Epoch(base->committed_epoch.value() + 1), bytes, info));
  }

  // The version change, rebased onto the commits that came since `base`:
  // they only appended SSTs (compactions are serialised by maintenance_mu_),
  // so the inputs are still there, contiguous; the output takes their place.
  MutexLock commit_lock(&commit_mu_);
  std::shared_ptr<const Version> previous;
  uint64_t commit_number = 0;
  {
    MutexLock lock(&mu_);
    previous = current_;
    commit_number = ++commits_;
  }
  const size_t count = base->ssts.size() - first;
  auto at = std::find_if(
      previous->ssts.begin(), previous->ssts.end(), [&](const VersionSst& sst) {
        return sst.object_key == base->ssts[first].object_key;
      });
  const size_t position = static_cast<size_t>(at - previous->ssts.begin());
  bool inputs_in_place = position + count <= previous->ssts.size();
  for (size_t i = 0; inputs_in_place && i < count; ++i) {
    inputs_in_place = previous->ssts[position + i].object_key ==
                      base->ssts[first + i].object_key;
  }
  // Nothing is committed: the output is never listed by a version.
  auto discard = [&](absl::Status status) {
    if (output.has_value()) {
      options_.object_store->Delete(output->object_key).IgnoreError();
    }
    return status;
  };
  if (!inputs_in_place) {
    // Another committer's version was adopted meanwhile (ApplyVersion):
    // this compaction's base is gone.
    return discard(absl::FailedPreconditionError(absl::StrCat(
        "compaction of version ", base->id, " refused: version ", previous->id,
        " no longer lists its ", count, " input SSTs in place")));
  }
  if (previous->id != base->id) {
    // A checkpoint committed since `base` may carry a pin of an epoch below
    // `safe`: another process pinned an epoch its own (older) version still
    // served and its sync committed the row while this merge ran. Its
    // versions may be merged away in `output`, so nothing is committed (the
    // caller compacts again from `previous`). Only the SSTs those checkpoints
    // appended can hold such a row (the base's pins are counted in `safe`;
    // a release only raises the oldest). Read here, under commit_mu_, from
    // files open locally: no version can come between this check and the
    // commit below.
    absl::StatusOr<std::optional<Epoch>> pinned =
        OldestPersistedPin(*previous, position + count, previous->ssts.size());
    if (!pinned.ok()) return discard(pinned.status());
    if (pinned->has_value() && **pinned < safe) {
      return discard(absl::AbortedError(
          absl::StrCat("compaction of version ", base->id, " at safe epoch ",
                       safe.value(), " not committed: version ", previous->id,
                       " persists an epoch pin of ", (*pinned)->value(),
                       ", committed while it merged")));
    }
  }
  auto next = std::make_shared<Version>(*previous);
  next->id = previous->id + 1;
  next->gc_horizon = std::max(previous->gc_horizon, safe);
  const auto begin = next->ssts.begin() + static_cast<std::ptrdiff_t>(position);
  next->ssts.erase(begin, begin + static_cast<std::ptrdiff_t>(count));
  proto::VersionDelta delta;
  delta.set_id(next->id);
  delta.set_committed_epoch(previous->committed_epoch.value());
  delta.set_gc_horizon(next->gc_horizon.value());
  for (size_t i = first; i < base->ssts.size(); ++i) {
    delta.add_removed(base->ssts[i].object_key);
  }
  if (output.has_value()) {
    *delta.add_added() = ToProto(output->object_key, output->info);
    next->ssts.insert(
        next->ssts.begin() + static_cast<std::ptrdiff_t>(position),
        *std::move(output));
  }
  return CommitDelta(*previous, std::move(next), delta, commit_number);
}

absl::StatusOr<VacuumStats> SharedCommittedLayer::Vacuum() {
  MutexLock maintenance_lock(&maintenance_mu_);
  return VacuumLocked();
}

absl::StatusOr<VacuumStats> SharedCommittedLayer::VacuumLocked() {
  const std::string sst_prefix = absl::StrCat(options_.object_prefix, "sst/");
  // Listed before the versions are read: an object uploaded after the list
  // is not considered; one listed and committed since is in the versions.
  BACKFILL_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                            options_.object_store->List(sst_prefix));
  std::set<std::string> referenced;
  Epoch committed;
  {
    MutexLock lock(&mu_);
    committed = current_->committed_epoch;
    for (const std::weak_ptr<const Version>& weak : versions_) {
      if (std::shared_ptr<const Version> version = weak.lock()) {
        for (const VersionSst& sst : version->ssts) {
          referenced.insert(sst.object_key);
        }
      }
    }
  }
  VacuumStats stats;
  for (const ObjectInfo& object : objects) {
    const std::optional<uint64_t> epoch = EpochOfObject(object.key, sst_prefix);
    if (!epoch.has_value()) continue;  // Not an SST object of this store.
    ++stats.listed;
    if (referenced.contains(object.key)) {
      ++stats.kept_referenced;
    } else if (Epoch(*epoch) > committed) {
      ++stats.kept_pending;
    } else if (options_.object_store->Delete(object.key).ok()) {
      ++stats.deleted;
      std::error_code ignored;
      std::filesystem::remove(CachePath(object.key), ignored);
    }
  }
  return stats;
}

namespace {

// The SSTs of `version` that can hold versions <= read_epoch.
std::vector<std::shared_ptr<const SstReader>> Readable(const Version& version,
                                                       Epoch read_epoch) {
  std::vector<std::shared_ptr<const SstReader>> files;
  for (const VersionSst& sst : version.ssts) {
    if (sst.info.min_epoch <= read_epoch) files.push_back(sst.reader);
  }
  return files;
}

absl::Status CheckHorizon(const Version& version, Epoch read_epoch) {
  if (read_epoch >= version.gc_horizon) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "read at epoch ", read_epoch.value(), " refused: version ", version.id,
      " was compacted at safe epoch ", version.gc_horizon.value(),
      " (versions only older reads saw are gone)"));
}

}  // namespace

absl::StatusOr<std::optional<std::string>> SharedCommittedLayer::Get(
    TableId table_id, VirtualNode vnode, absl::string_view pk,
    Epoch read_epoch) {
  std::shared_ptr<const Version> version = current();
  if (read_epoch < version->gc_horizon) {
    // A compaction committed since the caller pinned read_epoch (it ran on
    // the maintenance thread with a safe epoch taken before that pin): the
    // version the pin holds still serves it.
    if (std::shared_ptr<const Version> older = ServingVersion(read_epoch)) {
      version = std::move(older);
    }
  }
  BACKFILL_RETURN_IF_ERROR(CheckHorizon(*version, read_epoch));
  return GetFromSsts(Readable(*version, read_epoch), table_id, vnode, pk,
                     read_epoch);
}

absl::StatusOr<std::unique_ptr<StateStoreIterator>>
SharedCommittedLayer::NewIterator(TableId table_id, VirtualNode vnode,
                                  const PkRange& range, Epoch read_epoch,
                                  const ScanOptions& options,
                                  std::unique_ptr<EpochPin> pin) {
  std::shared_ptr<const Version> version;
  if (auto* pinned = dynamic_cast<VersionPin*>(pin.get()); pinned != nullptr) {
    version = pinned->version;
  } else {
    version = current();
  }
  BACKFILL_RETURN_IF_ERROR(CheckHorizon(*version, read_epoch));
  return NewSstsIterator(Readable(*version, read_epoch), table_id, vnode, range,
                         read_epoch, options.fill_cache, std::move(pin));
}

}  // namespace shared_internal
}  // namespace backfill
