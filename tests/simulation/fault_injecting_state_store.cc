#include "tests/simulation/fault_injecting_state_store.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {
namespace simulation {
namespace {

class FaultInjectingIterator final : public StateStoreIterator {
 public:
  FaultInjectingIterator(std::unique_ptr<StateStoreIterator> inner,
                         std::shared_ptr<FaultPlan> plan, std::string name)
      : inner_(std::move(inner)),
        plan_(std::move(plan)),
        name_(std::move(name)) {}

  bool Valid() const override { return status_.ok() && inner_->Valid(); }
  void SeekToFirst() override {
    if (Move("SeekToFirst")) inner_->SeekToFirst();
  }
  void Seek(absl::string_view pk) override {
    if (Move("Seek")) inner_->Seek(pk);
  }
  void Next() override {
    if (Move("Next")) inner_->Next();
  }
  absl::string_view key() const override { return inner_->key(); }
  absl::string_view value() const override { return inner_->value(); }
  absl::Status status() const override {
    return status_.ok() ? inner_->status() : status_;
  }

 private:
  bool Move(absl::string_view what) {
    if (!status_.ok()) return false;
    status_ = plan_->Check(FaultOp::kIteratorMove,
                           absl::StrCat(what, " of an iterator over ", name_));
    return status_.ok();
  }

  std::unique_ptr<StateStoreIterator> inner_;
  std::shared_ptr<FaultPlan> plan_;
  std::string name_;
  absl::Status status_;
};

class FaultInjectingLocalStore final : public LocalStateStore {
 public:
  FaultInjectingLocalStore(std::unique_ptr<LocalStateStore> inner,
                           std::shared_ptr<FaultPlan> plan, StateStore& store)
      : inner_(std::move(inner)),
        plan_(std::move(plan)),
        store_(store),
        keep_(!inner_->replicated() &&
              plan_->KeepsUncommittedWritesOf(inner_->table_id())) {}

  // The sabotage of FaultPlan::KeepUncommittedWritesOf: what this instance
  // wrote after the committed epoch outlives it.
  ~FaultInjectingLocalStore() override {
    if (!keep_) return;
    const Epoch committed = store_.CommittedEpoch(inner_->table_id());
    std::vector<FaultPlan::KeptWrite> kept;
    for (FaultPlan::KeptWrite& write : writes_) {
      if (write.epoch > committed) kept.push_back(std::move(write));
    }
    plan_->StashWrites(inner_->table_id(), std::move(kept));
  }

  TableId table_id() const override { return inner_->table_id(); }
  bool replicated() const override { return inner_->replicated(); }
  absl::Status Init(EpochPair first) override {
    if (absl::Status s = plan_->Check(
            FaultOp::kInit,
            absl::StrCat(Name(std::nullopt), " at ", first.DebugString()));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = inner_->Init(first); !s.ok() || !keep_) return s;
    // The sabotage: the writes a dropped instance never committed come back.
    for (FaultPlan::KeptWrite& write :
         plan_->TakeStashedWrites(inner_->table_id())) {
      absl::Status s = write.value.has_value()
                           ? inner_->Insert(write.vnode, write.pk, *write.value)
                           : inner_->Delete(write.vnode, write.pk);
      if (!s.ok()) return s;
      write.epoch = inner_->epoch();
      writes_.push_back(std::move(write));
    }
    return absl::OkStatus();
  }
  absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value) override {
    if (absl::Status s = plan_->Check(FaultOp::kInsert, Name(vnode)); !s.ok()) {
      return s;
    }
    if (keep_)
      writes_.push_back(
          {inner_->epoch(), vnode, std::string(pk), std::string(value)});
    return inner_->Insert(vnode, pk, value);
  }
  absl::Status Delete(VirtualNode vnode, absl::string_view pk) override {
    if (absl::Status s = plan_->Check(FaultOp::kDelete, Name(vnode)); !s.ok()) {
      return s;
    }
    if (keep_) {
      writes_.push_back(
          {inner_->epoch(), vnode, std::string(pk), std::nullopt});
    }
    return inner_->Delete(vnode, pk);
  }
  absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) override {
    if (absl::Status s = plan_->Check(FaultOp::kGet, Name(vnode)); !s.ok()) {
      return s;
    }
    return inner_->Get(vnode, pk);
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options) override {
    if (absl::Status s = plan_->Check(FaultOp::kNewIterator, Name(vnode));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::unique_ptr<StateStoreIterator>> it =
        inner_->NewIterator(vnode, range, options);
    if (!it.ok()) return it.status();
    return std::unique_ptr<StateStoreIterator>(
        new FaultInjectingIterator(std::move(*it), plan_, Name(vnode)));
  }
  absl::Status Seal(EpochPair next) override {
    if (absl::Status s = plan_->Check(
            FaultOp::kSeal,
            absl::StrCat(Name(std::nullopt), " at ", next.DebugString()));
        !s.ok()) {
      return s;
    }
    return inner_->Seal(next);
  }
  Epoch epoch() const override { return inner_->epoch(); }

 private:
  std::string Name(std::optional<VirtualNode> vnode) const {
    std::string name = absl::StrCat(inner_->replicated() ? "replicated " : "",
                                    "table ", inner_->table_id());
    if (vnode.has_value()) absl::StrAppend(&name, " vnode ", *vnode);
    return name;
  }

  std::unique_ptr<LocalStateStore> inner_;
  std::shared_ptr<FaultPlan> plan_;
  StateStore& store_;
  const bool keep_;
  std::vector<FaultPlan::KeptWrite> writes_;
};

}  // namespace

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kInit:
      return "Init";
    case FaultOp::kInsert:
      return "Insert";
    case FaultOp::kDelete:
      return "Delete";
    case FaultOp::kSeal:
      return "Seal";
    case FaultOp::kGet:
      return "Get";
    case FaultOp::kNewIterator:
      return "NewIterator";
    case FaultOp::kIteratorMove:
      return "iterator move";
    case FaultOp::kCheckpoint:
      return "Checkpoint";
    case FaultOp::kCheckpointAfterCommit:
      return "Checkpoint(after commit)";
  }
  return "?";
}

void FaultPlan::Arm(FaultOp op, uint64_t nth) {
  MutexLock lock(&mu_);
  op_ = op;
  remaining_ = nth == 0 ? 1 : nth;
  hang_ = false;
}

void FaultPlan::ArmHang(FaultOp op, uint64_t nth) {
  MutexLock lock(&mu_);
  op_ = op;
  remaining_ = nth == 0 ? 1 : nth;
  hang_ = true;
}

void FaultPlan::ReleaseHangs() {
  MutexLock lock(&mu_);
  ++releases_;
  if (hang_) {  // Armed, not fired yet: it never will.
    hang_ = false;
    op_.reset();
  }
  released_.SignalAll();
}

bool FaultPlan::hanging() const {
  MutexLock lock(&mu_);
  return hanging_;
}

void FaultPlan::Disarm() {
  MutexLock lock(&mu_);
  op_.reset();
}

bool FaultPlan::armed() const {
  MutexLock lock(&mu_);
  return op_.has_value();
}

absl::Status FaultPlan::Check(FaultOp op, absl::string_view what) {
  MutexLock lock(&mu_);
  // kCheckpointAfterCommit counts the checkpoints that committed.
  if (!op_.has_value() || *op_ != op) return absl::OkStatus();
  if (--remaining_ > 0) return absl::OkStatus();
  op_.reset();
  ++num_fired_;
  fired_ = true;
  last_message_ = absl::StrCat("injected fault #", num_fired_, ": ",
                               FaultOpName(op), " of ", what);
  if (hang_) {
    hang_ = false;
    hanging_ = true;
    const uint64_t releases = releases_;
    while (releases_ == releases) released_.Wait(&mu_);
    hanging_ = false;
    return absl::UnavailableError(
        absl::StrCat(last_message_, " (hung until released)"));
  }
  return absl::UnavailableError(last_message_);
}

void FaultPlan::KeepUncommittedWritesOf(TableId table_id) {
  MutexLock lock(&mu_);
  kept_table_ = table_id;
}

bool FaultPlan::KeepsUncommittedWritesOf(TableId table_id) const {
  MutexLock lock(&mu_);
  return kept_table_ == table_id;
}

void FaultPlan::StashWrites(TableId table_id, std::vector<KeptWrite> writes) {
  MutexLock lock(&mu_);
  std::vector<KeptWrite>& stash = stashed_[table_id];
  for (KeptWrite& write : writes) stash.push_back(std::move(write));
}

std::vector<FaultPlan::KeptWrite> FaultPlan::TakeStashedWrites(
    TableId table_id) {
  MutexLock lock(&mu_);
  std::vector<KeptWrite> writes = std::move(stashed_[table_id]);
  stashed_.erase(table_id);
  return writes;
}

uint64_t FaultPlan::num_fired() const {
  MutexLock lock(&mu_);
  return num_fired_;
}

std::string FaultPlan::last_message() const {
  MutexLock lock(&mu_);
  return last_message_;
}

bool FaultPlan::TakeFired() {
  MutexLock lock(&mu_);
  const bool fired = fired_;
  fired_ = false;
  return fired;
}

FaultInjectingStateStore::FaultInjectingStateStore(
    StateStore& inner, std::shared_ptr<FaultPlan> plan)
    : ForwardingStateStore(&inner), plan_(std::move(plan)) {}

absl::StatusOr<std::unique_ptr<LocalStateStore>>
FaultInjectingStateStore::NewLocalStateStore(TableId table_id,
                                             const LocalOptions& options) {
  absl::StatusOr<std::unique_ptr<LocalStateStore>> local =
      inner().NewLocalStateStore(table_id, options);
  if (!local.ok()) return local.status();
  return std::unique_ptr<LocalStateStore>(
      new FaultInjectingLocalStore(std::move(*local), plan_, inner()));
}

absl::Status FaultInjectingStateStore::Checkpoint(Epoch epoch) {
  const std::string what = absl::StrCat("epoch ", epoch.value());
  if (absl::Status s = plan_->Check(FaultOp::kCheckpoint, what); !s.ok()) {
    return s;
  }
  if (absl::Status s = inner().Checkpoint(epoch); !s.ok()) return s;
  return plan_->Check(FaultOp::kCheckpointAfterCommit, what);
}

absl::StatusOr<std::optional<std::string>> FaultInjectingStateStore::Get(
    const TableKey& key, Epoch read_epoch) {
  if (absl::Status s = plan_->Check(FaultOp::kGet, "a committed read");
      !s.ok()) {
    return s;
  }
  return inner().Get(key, read_epoch);
}

absl::StatusOr<std::unique_ptr<StateStoreIterator>>
FaultInjectingStateStore::NewIterator(TableId table_id, VirtualNode vnode,
                                      const PkRange& range, Epoch read_epoch,
                                      const ScanOptions& options) {
  const std::string name =
      absl::StrCat("committed table ", table_id, " vnode ", vnode);
  if (absl::Status s = plan_->Check(FaultOp::kNewIterator, name); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> it =
      inner().NewIterator(table_id, vnode, range, read_epoch, options);
  if (!it.ok()) return it.status();
  return std::unique_ptr<StateStoreIterator>(
      new FaultInjectingIterator(std::move(*it), plan_, name));
}

}  // namespace simulation
}  // namespace backfill
