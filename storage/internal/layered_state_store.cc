#include "storage/internal/layered_state_store.h"

#include <algorithm>
#include <cassert>
#include <utility>
#include <vector>

#include "absl/base/internal/endian.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "storage/internal/epoch_pin_rows.h"
#include "storage/internal/merging_iterator.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace storage_internal {
namespace {

absl::Status CheckVnode(VirtualNode vnode) {
  if (vnode >= kMaxVnodeCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("vnode out of range: ", vnode, " >= ", kMaxVnodeCount));
  }
  return absl::OkStatus();
}

bool HasEntriesIn(const MemTable& table, VirtualNode vnode,
                  const PkRange& range) {
  MemTable::const_iterator begin, end;
  MemTableRange(table, vnode, range, &begin, &end);
  return begin != end;
}

}  // namespace

// ---- Instance
// -----------------------------------------------------------------

class LayeredStateStore::Instance final : public LocalStateStore {
 public:
  Instance(LayeredStateStore* store, TableId table_id, bool replicated)
      : store_(store), memtable_(std::make_shared<MemTable>()) {
    state_.table_id = table_id;
    state_.replicated = replicated;
    store_->Register(&state_);
  }
  ~Instance() override { store_->Unregister(&state_); }

  TableId table_id() const override { return state_.table_id; }
  bool replicated() const override { return state_.replicated; }
  Epoch epoch() const override { return epoch_; }

  absl::Status Init(EpochPair first) override {
    if (initialized_) {
      return absl::FailedPreconditionError(
          absl::StrCat("Init called twice on table ", table_id(),
                       "; current epoch ", epoch_.value()));
    }
    if (!first.IsWellFormed()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Init with a malformed epoch pair ", first.DebugString(),
                       " (REQUIRES curr > prev); table ", table_id()));
    }
    MutexLock lock(&store_->mu_);
    const Epoch committed =
        std::max(store_->committed_, store_->pending_.value_or(Epoch::Zero()));
    if (first.curr <= committed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Init at ", first.DebugString(), " of table ", table_id(), ": epoch ",
          first.curr.value(), " is already committed (committed ",
          committed.value(), ")"));
    }
    initialized_ = true;
    epoch_ = first.curr;
    state_.initialized = true;
    state_.epoch = epoch_;
    return absl::OkStatus();
  }

  absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value) override {
    BACKFILL_RETURN_IF_ERROR(CheckWritable(vnode));
    std::string key;
    SetMemTableKey(vnode, pk, &key);
    MutableMemTable().insert_or_assign(std::move(key),
                                       std::optional<std::string>(value));
    return absl::OkStatus();
  }

  absl::Status Delete(VirtualNode vnode, absl::string_view pk) override {
    BACKFILL_RETURN_IF_ERROR(CheckWritable(vnode));
    std::string key;
    SetMemTableKey(vnode, pk, &key);
    MutableMemTable().insert_or_assign(std::move(key), std::nullopt);
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) override {
    BACKFILL_RETURN_IF_ERROR(CheckReadable(vnode));
    SetMemTableKey(vnode, pk, &scratch_);
    if (auto it = memtable_->find(scratch_); it != memtable_->end()) {
      return it->second;
    }
    Snapshot snapshot = store_->TakeSnapshot(&state_, epoch_);
    for (auto batch = snapshot.sealed.rbegin(); batch != snapshot.sealed.rend();
         ++batch) {
      if (auto it = batch->data->find(scratch_); it != batch->data->end()) {
        return it->second;
      }
    }
    if (point_reader_ == nullptr) {
      point_reader_ = store_->layer_->NewPointReader(table_id());
    }
    auto result = point_reader_->Get(vnode, pk, snapshot.read_epoch);
    if (!result.ok()) return Annotate(result.status(), vnode, pk);
    return result;
  }

  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options) override {
    BACKFILL_RETURN_IF_ERROR(CheckReadable(vnode));
    Snapshot snapshot = store_->TakeSnapshot(&state_, epoch_);
    auto base_or = store_->layer_->NewIterator(table_id(), vnode, range,
                                               snapshot.read_epoch, options,
                                               std::move(snapshot.pin));
    if (!base_or.ok()) {
      return Annotate(base_or.status(), vnode, range.inclusive_min);
    }
    std::unique_ptr<StateStoreIterator> base = *std::move(base_or);
    std::vector<std::shared_ptr<const MemTable>> overlays;
    if (!memtable_->empty() && HasEntriesIn(*memtable_, vnode, range)) {
      overlays.push_back(memtable_);  // Copy-on-write from now on.
    }
    for (auto batch = snapshot.sealed.rbegin(); batch != snapshot.sealed.rend();
         ++batch) {
      if (HasEntriesIn(*batch->data, vnode, range)) {
        overlays.push_back(batch->data);
      }
    }
    // The common case during a backfill scan: nothing to merge.
    if (overlays.empty()) return base;
    return std::unique_ptr<StateStoreIterator>(
        std::make_unique<MergingIterator>(std::move(base), std::move(overlays),
                                          vnode, range));
  }

  absl::Status Seal(EpochPair next) override {
    if (!initialized_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Seal(", next.DebugString(), ") before Init; table ", table_id()));
    }
    if (!next.IsWellFormed()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Seal with a malformed epoch pair ", next.DebugString(),
                       " (REQUIRES curr > prev); table ", table_id()));
    }
    if (next.prev != epoch_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Seal(", next.DebugString(), ") does not follow the current epoch ",
          epoch_.value(), " (REQUIRES prev == current epoch); table ",
          table_id()));
    }
    std::shared_ptr<const MemTable> batch;
    if (!memtable_->empty()) {
      batch = std::move(memtable_);
      memtable_ = std::make_shared<MemTable>();
    }
    MutexLock lock(&store_->mu_);
    if (batch != nullptr) {
      if (state_.replicated && epoch_ <= store_->committed_) {
        // The committed store already holds this epoch of the table.
      } else {
        assert(epoch_ > store_->committed_);
        state_.sealed.push_back(SealedBatch{epoch_, std::move(batch)});
      }
    }
    epoch_ = next.curr;
    state_.epoch = epoch_;
    // What the reader keeps open (an iterator pinning the layer's files)
    // lives for one epoch at most: an idle table holds nothing.
    point_reader_.reset();
    return absl::OkStatus();
  }

 private:
  absl::Status CheckWritable(VirtualNode vnode) const {
    if (!initialized_) {
      return absl::FailedPreconditionError(
          absl::StrCat("write before Init; table ", table_id()));
    }
    return CheckVnode(vnode);
  }
  absl::Status CheckReadable(VirtualNode vnode) const {
    if (!initialized_) {
      return absl::FailedPreconditionError(
          absl::StrCat("read before Init; table ", table_id()));
    }
    return CheckVnode(vnode);
  }
  absl::Status Annotate(const absl::Status& status, VirtualNode vnode,
                        absl::string_view pk) const {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), "; local read of table ",
                                     table_id(), " vnode ", vnode, " pk ",
                                     absl::CHexEscape(std::string(pk)), " at ",
                                     epoch_.DebugString()));
  }
  // The buffer, copied first if an iterator shares it.
  MemTable& MutableMemTable() {
    if (memtable_.use_count() > 1) {
      memtable_ = std::make_shared<MemTable>(*memtable_);
    }
    return *memtable_;
  }

  LayeredStateStore* const store_;
  // Only `sealed`, `initialized` and `epoch` are shared (under store_->mu_);
  // the rest is owned by the instance's thread.
  InstanceState state_;
  bool initialized_ = false;
  Epoch epoch_;
  std::shared_ptr<MemTable> memtable_;
  std::string scratch_;
  // Point reads of the committed layer (made at the first Get of an epoch).
  std::unique_ptr<PointReader> point_reader_;
};

// ---- Store
// ----------------------------------------------------------------------

LayeredStateStore::LayeredStateStore(std::unique_ptr<CommittedLayer> layer,
                                     Epoch committed_epoch)
    : layer_(std::move(layer)), committed_(committed_epoch) {}

LayeredStateStore::~LayeredStateStore() {
  // Before pins_ goes: see CommittedLayer::StopGarbageCollection.
  layer_->StopGarbageCollection();
  MutexLock lock(&mu_);
  assert(instances_.empty() && "a LocalStateStore outlives its StateStore");
}

void LayeredStateStore::Register(InstanceState* state) {
  MutexLock lock(&mu_);
  instances_.insert(state);
}

void LayeredStateStore::Unregister(InstanceState* state) {
  MutexLock lock(&mu_);
  instances_.erase(state);
}

LayeredStateStore::Snapshot LayeredStateStore::TakeSnapshot(
    const InstanceState* state, Epoch read_epoch) {
  Snapshot snapshot;
  MutexLock lock(&mu_);
  snapshot.committed = committed_;
  snapshot.read_epoch = std::min(read_epoch, committed_);
  snapshot.pin = layer_->Pin(snapshot.read_epoch);
  if (state != nullptr && !state->sealed.empty()) {
    for (const SealedBatch& batch : state->sealed) {
      // Replicated batches the committed store already covers are skipped.
      if (batch.epoch > committed_) snapshot.sealed.push_back(batch);
    }
  }
  return snapshot;
}

absl::StatusOr<std::unique_ptr<LocalStateStore>>
LayeredStateStore::NewLocalStateStore(TableId table_id,
                                      const LocalOptions& options) {
  if (table_id == kEpochPinTableId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table id ", table_id,
        " is reserved for the store's epoch pins (kEpochPinTableId)"));
  }
  return std::unique_ptr<LocalStateStore>(
      std::make_unique<Instance>(this, table_id, options.replicated));
}

absl::Status LayeredStateStore::Checkpoint(Epoch epoch) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  std::vector<CommitBatch> batches;
  {
    MutexLock lock(&mu_);
    BACKFILL_ASSIGN_OR_RETURN(batches,
                              CollectCommitBatches(epoch, "Checkpoint"));
    pending_ = epoch;
  }
  absl::Status status = layer_->Commit(batches, epoch);
  if (!status.ok()) {
    MutexLock lock(&mu_);
    pending_.reset();
    synced_pins_.erase(epoch);
    failure_ = status;
    return absl::Status(
        status.code(),
        absl::StrCat("Checkpoint(", epoch.value(), "): ", status.message()));
  }
  PublishCommitted(epoch);
  layer_->AfterCommit();  // Still under checkpoint_mu_: not with a Commit.
  return absl::OkStatus();
}

absl::StatusOr<SyncResult> LayeredStateStore::SyncCheckpoint(Epoch epoch) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  std::vector<CommitBatch> batches;
  {
    MutexLock lock(&mu_);
    BACKFILL_ASSIGN_OR_RETURN(batches,
                              CollectCommitBatches(epoch, "SyncCheckpoint"));
    // Kept until a version committing it is applied: an instance that
    // started at a synced epoch would write rows this sync missed, and the
    // version would then drop them from its sealed batches.
    pending_ = std::max(pending_.value_or(epoch), epoch);
  }
  absl::StatusOr<SyncResult> synced = layer_->Sync(batches, epoch);
  if (!synced.ok()) {
    return absl::Status(synced.status().code(),
                        absl::StrCat("SyncCheckpoint(", epoch.value(),
                                     "): ", synced.status().message()));
  }
  return synced;
}

absl::StatusOr<CommittedVersion> LayeredStateStore::CommitSyncedCheckpoint(
    const std::vector<SyncResult>& syncs, Epoch epoch) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  {
    MutexLock lock(&mu_);
    if (!failure_.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("CommitSyncedCheckpoint(", epoch.value(),
                       ") refused: an earlier commit failed (",
                       failure_.ToString(), "); reopen the store"));
    }
    if (epoch <= committed_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "CommitSyncedCheckpoint(", epoch.value(),
          ") is not after the committed epoch ", committed_.value()));
    }
    BACKFILL_RETURN_IF_ERROR(CheckSynced(epoch, "CommitSyncedCheckpoint"));
  }
  absl::StatusOr<CommittedVersion> version =
      layer_->CommitVersion(syncs, epoch);
  if (!version.ok()) {
    MutexLock lock(&mu_);
    // An etcd write that failed may still have been applied: as after a
    // failed Checkpoint, this store no longer knows its fence. Undecodable
    // sync results are refused before anything is written.
    if (version.status().code() != absl::StatusCode::kInvalidArgument) {
      failure_ = version.status();
    }
    return absl::Status(version.status().code(),
                        absl::StrCat("CommitSyncedCheckpoint(", epoch.value(),
                                     "): ", version.status().message()));
  }
  PublishCommitted(epoch);
  layer_->AfterCommit();  // Under checkpoint_mu_: not with another commit.
  return version;
}

absl::Status LayeredStateStore::ApplyCommittedCheckpoint(
    const CommittedVersion& version) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  {
    MutexLock lock(&mu_);
    if (version.committed_epoch <= committed_) return absl::OkStatus();
    BACKFILL_RETURN_IF_ERROR(
        CheckSynced(version.committed_epoch, "ApplyCommittedCheckpoint"));
  }
  absl::Status applied = layer_->ApplyVersion(version);
  if (!applied.ok()) {
    return absl::Status(
        applied.code(),
        absl::StrCat("ApplyCommittedCheckpoint(version ", version.id,
                     ", epoch ", version.committed_epoch.value(),
                     "): ", applied.message()));
  }
  PublishCommitted(version.committed_epoch);
  return absl::OkStatus();
}

absl::Status LayeredStateStore::AbandonUncommittedSyncs(Epoch epoch) {
  MutexLock checkpoint_lock(&checkpoint_mu_);
  MutexLock lock(&mu_);
  if (epoch != committed_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "AbandonUncommittedSyncs(", epoch.value(),
        "): not the committed epoch ", committed_.value()));
  }
  for (const InstanceState* state : instances_) {
    if (!state->sealed.empty() && state->sealed.back().epoch > epoch) {
      return absl::FailedPreconditionError(absl::StrCat(
          "AbandonUncommittedSyncs(", epoch.value(), "): table ",
          state->table_id, " still holds data sealed at epoch ",
          state->sealed.back().epoch.value()));
    }
  }
  pending_.reset();
  synced_pins_.erase(synced_pins_.upper_bound(epoch), synced_pins_.end());
  return absl::OkStatus();
}

absl::Status LayeredStateStore::CheckSynced(Epoch epoch,
                                            absl::string_view step) const {
  // Every batch at or below the last synced epoch was sealed before that
  // sync (its instance had to be past it), so it was synced; a later one
  // was not.
  const Epoch synced = pending_.value_or(committed_);
  for (const InstanceState* state : instances_) {
    if (state->replicated) continue;
    for (const SealedBatch& batch : state->sealed) {
      if (batch.epoch > synced && batch.epoch <= epoch) {
        return absl::FailedPreconditionError(absl::StrCat(
            step, "(epoch ", epoch.value(), "): table ", state->table_id,
            " has data sealed at epoch ", batch.epoch.value(),
            " that this store has not synced (last synced epoch ",
            synced.value(), "): the version would drop them"));
      }
    }
  }
  return absl::OkStatus();
}

void LayeredStateStore::PublishCommitted(Epoch epoch) {
  {
    MutexLock lock(&mu_);
    if (epoch <= committed_) return;
    if (pending_.has_value() && *pending_ <= epoch) pending_.reset();
    committed_ = epoch;
    layer_->SetCommittedEpoch(epoch);
    // The pins this process wrote for `epoch` are committed with it; those
    // of an earlier sync that never committed were written again since.
    if (auto it = synced_pins_.find(epoch); it != synced_pins_.end()) {
      ApplyPinWrites(it->second);
    }
    synced_pins_.erase(synced_pins_.begin(), synced_pins_.upper_bound(epoch));
    for (InstanceState* state : instances_) {
      // Non-replicated: exactly the committed batches (all <= epoch: no
      // instance can seal at or below a pending checkpoint). Replicated: the
      // committed store now holds the same data.
      std::erase_if(state->sealed, [&](const SealedBatch& batch) {
        return batch.epoch <= epoch;
      });
    }
  }
  committed_changed_.SignalAll();
  MutexLock lock(&listeners_mu_);
  for (auto& [id, listener] : listeners_) listener(epoch);
}

Epoch LayeredStateStore::CommittedEpoch(TableId /*table_id*/) const {
  MutexLock lock(&mu_);
  return committed_;
}

bool LayeredStateStore::IsCommitted(TableId table_id, Epoch epoch) const {
  return CommittedEpoch(table_id) >= epoch;
}

absl::Status LayeredStateStore::WaitCommitted(TableId table_id, Epoch epoch,
                                              absl::Time deadline,
                                              Cancellation& cancellation,
                                              Clock& clock) {
  const uint64_t callback = cancellation.AddCallback([this] {
    MutexLock lock(&mu_);
    committed_changed_.SignalAll();
  });
  absl::Status result;
  {
    MutexLock lock(&mu_);
    clock.WaitUntil(
        mu_, committed_changed_,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return committed_ >= epoch || cancellation.IsCancelled();
        },
        deadline);
    if (committed_ >= epoch) {
      result = absl::OkStatus();
    } else if (cancellation.IsCancelled()) {
      result = absl::CancelledError(absl::StrCat(
          "WaitCommitted(table ", table_id, ", epoch ", epoch.value(),
          ") cancelled; committed epoch ", committed_.value()));
    } else {
      result = absl::DeadlineExceededError(absl::StrCat(
          "WaitCommitted(table ", table_id, ", epoch ", epoch.value(),
          ") reached its deadline ", absl::FormatTime(deadline),
          "; committed epoch ", committed_.value()));
    }
  }
  // Not under mu_: Cancel() may be running the callback, which takes mu_.
  cancellation.RemoveCallback(callback);
  return result;
}

uint64_t LayeredStateStore::AddCommitListener(
    std::function<void(Epoch)> listener) {
  MutexLock lock(&listeners_mu_);
  const uint64_t id = next_listener_id_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void LayeredStateStore::RemoveCommitListener(uint64_t id) {
  MutexLock lock(&listeners_mu_);
  listeners_.erase(id);
}

absl::StatusOr<std::optional<std::string>> LayeredStateStore::Get(
    const TableKey& key, Epoch read_epoch) {
  BACKFILL_RETURN_IF_ERROR(CheckVnode(key.vnode));
  Snapshot snapshot = TakeSnapshot(nullptr, read_epoch);
  auto result =
      layer_->Get(key.table_id, key.vnode, key.pk, snapshot.read_epoch);
  if (!result.ok()) {
    return absl::Status(
        result.status().code(),
        absl::StrCat(result.status().message(), "; read of ", key.DebugString(),
                     " at ", read_epoch.DebugString()));
  }
  return result;
}

absl::StatusOr<std::unique_ptr<StateStoreIterator>>
LayeredStateStore::NewIterator(TableId table_id, VirtualNode vnode,
                               const PkRange& range, Epoch read_epoch,
                               const ScanOptions& options) {
  BACKFILL_RETURN_IF_ERROR(CheckVnode(vnode));
  Snapshot snapshot = TakeSnapshot(nullptr, read_epoch);
  auto result = layer_->NewIterator(table_id, vnode, range, snapshot.read_epoch,
                                    options, std::move(snapshot.pin));
  if (!result.ok()) {
    return absl::Status(
        result.status().code(),
        absl::StrCat(result.status().message(), "; scan of table ", table_id,
                     " vnode ", vnode, " range ", range.DebugString(), " at ",
                     read_epoch.DebugString()));
  }
  return result;
}

// ---- Epoch pins
// ---------------------------------------------------------------

absl::Status LayeredStateStore::PinEpoch(absl::string_view owner, Epoch epoch) {
  if (owner.empty()) {
    return absl::InvalidArgumentError("PinEpoch: the owner's name is empty");
  }
  std::unique_ptr<EpochPin> pin;
  std::unique_ptr<EpochPin> check_pin;
  {
    MutexLock lock(&mu_);
    if (epoch > committed_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PinEpoch(", owner, ", ", epoch.value(),
          "): the epoch is above the committed epoch ", committed_.value()));
    }
    pin = layer_->Pin(epoch);
    check_pin = layer_->Pin(epoch);
  }
  // `pin` holds the epoch from here on; a read at it tells whether garbage
  // collection had passed it before.
  auto check = layer_->NewIterator(kEpochPinTableId, 0, PkRange::All(), epoch,
                                   ScanOptions{.fill_cache = false},
                                   std::move(check_pin));
  if (!check.ok()) {
    return absl::Status(check.status().code(),
                        absl::StrCat("PinEpoch(", owner, ", ", epoch.value(),
                                     "): ", check.status().message()));
  }
  MutexLock lock(&mu_);
  auto [it, inserted] = pins_.try_emplace(std::string(owner));
  PinState& state = it->second;
  state.epoch = epoch;
  state.pin = std::move(pin);
  state.release_at.reset();
  state.change = ++pin_changes_;
  return absl::OkStatus();
}

absl::Status LayeredStateStore::ReleaseEpochPin(absl::string_view owner,
                                                Epoch epoch) {
  MutexLock lock(&mu_);
  auto it = pins_.find(owner);
  if (it == pins_.end()) return absl::OkStatus();
  it->second.release_at = epoch;
  it->second.change = ++pin_changes_;
  return absl::OkStatus();
}

std::map<std::string, Epoch> LayeredStateStore::EpochPins() const {
  MutexLock lock(&mu_);
  std::map<std::string, Epoch> pins;
  for (const auto& [owner, state] : pins_) pins.emplace(owner, state.epoch);
  return pins;
}

LayeredStateStore::PinWrites LayeredStateStore::CollectPinWrites(Epoch epoch) {
  PinWrites writes;
  for (const auto& [owner, state] : pins_) {
    std::optional<Epoch> written;  // nullopt: released.
    if (!state.release_at.has_value() || *state.release_at > epoch) {
      if (state.persisted == state.epoch) continue;  // Nothing new.
      written = state.epoch;
    }
    writes.changes.push_back({owner, state.change, written});
    // A release of a pin never persisted deletes nothing.
    if (!written.has_value() && !state.persisted.has_value()) continue;
    if (writes.batch == nullptr) writes.batch = std::make_shared<MemTable>();
    std::string key;
    SetMemTableKey(0, owner, &key);
    writes.batch->insert_or_assign(
        std::move(key), written.has_value() ? std::optional<std::string>(
                                                  EncodePinnedEpoch(*written))
                                            : std::nullopt);
  }
  return writes;
}

absl::StatusOr<std::vector<CommitBatch>>
LayeredStateStore::CollectCommitBatches(Epoch epoch, absl::string_view step) {
  if (!failure_.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        step, "(", epoch.value(), ") refused: an earlier checkpoint failed (",
        failure_.ToString(), "); reopen the store"));
  }
  if (epoch <= committed_) {
    return absl::FailedPreconditionError(absl::StrCat(
        step, "(", epoch.value(), ") is not after the committed epoch ",
        committed_.value()));
  }
  for (const InstanceState* state : instances_) {
    if (state->replicated || !state->initialized) continue;
    if (state->epoch <= epoch) {
      return absl::FailedPreconditionError(absl::StrCat(
          step, "(", epoch.value(), "): an instance of table ", state->table_id,
          " has not sealed the epoch (its current epoch is ",
          state->epoch.value(), ")"));
    }
  }
  std::vector<CommitBatch> batches;
  for (const InstanceState* state : instances_) {
    if (state->replicated) continue;
    for (const SealedBatch& batch : state->sealed) {
      if (batch.epoch <= epoch) {
        batches.push_back(
            CommitBatch{state->table_id, batch.epoch, batch.data});
      }
    }
  }
  AddPinWrites(epoch, batches);
  // Deterministic write order (the set is ordered by address).
  std::stable_sort(batches.begin(), batches.end(),
                   [](const CommitBatch& a, const CommitBatch& b) {
                     return a.table_id != b.table_id ? a.table_id < b.table_id
                                                     : a.epoch < b.epoch;
                   });
  return batches;
}

void LayeredStateStore::AddPinWrites(Epoch epoch,
                                     std::vector<CommitBatch>& batches) {
  PinWrites writes = CollectPinWrites(epoch);
  if (writes.batch != nullptr) {
    batches.push_back(CommitBatch{kEpochPinTableId, epoch, writes.batch});
  }
  if (!writes.changes.empty()) synced_pins_[epoch] = std::move(writes);
}

void LayeredStateStore::ApplyPinWrites(const PinWrites& writes) {
  for (const PinWrites::Change& written : writes.changes) {
    auto it = pins_.find(written.owner);
    if (it == pins_.end()) continue;
    PinState& state = it->second;
    // What the committed store holds now, whatever changed meanwhile.
    state.persisted = written.epoch;
    state.persisted_pin =
        written.epoch.has_value() ? layer_->Pin(*written.epoch) : nullptr;
    // A committed release, not cancelled during the checkpoint: nothing
    // needs the pin any more.
    if (!written.epoch.has_value() && state.change == written.change) {
      pins_.erase(it);
    }
  }
}

absl::StatusOr<std::optional<Epoch>> LayeredStateStore::RestoreEpochPins() {
  std::unique_ptr<EpochPin> read_pin;
  Epoch committed;
  {
    MutexLock lock(&mu_);
    committed = committed_;
    read_pin = layer_->Pin(committed);
  }
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateStoreIterator> it,
      layer_->NewIterator(kEpochPinTableId, 0, PkRange::All(), committed,
                          ScanOptions{.fill_cache = false},
                          std::move(read_pin)));
  std::optional<Epoch> oldest;
  MutexLock lock(&mu_);
  BACKFILL_RETURN_IF_ERROR(
      ForEachPinnedEpoch(*it, [&](absl::string_view owner, Epoch epoch)
                                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                                    PinState& state = pins_[std::string(owner)];
                                    state.epoch = epoch;
                                    state.pin = layer_->Pin(epoch);
                                    state.persisted = epoch;
                                    state.persisted_pin = layer_->Pin(epoch);
                                    state.change = ++pin_changes_;
                                    if (!oldest.has_value() || epoch < *oldest)
                                      oldest = epoch;
                                  }));
  return oldest;
}

}  // namespace storage_internal
}  // namespace backfill
