// ForwardingStateStore: a StateStore that passes every call to another one,
// the base of wrappers that change a few calls (metering, fault injection,
// tests) and leave the rest alone. A method added to StateStore is
// forwarded here once, not in every wrapper.
//
//   class CountingStore : public ForwardingStateStore {
//    public:
//     using ForwardingStateStore::ForwardingStateStore;
//     absl::Status Checkpoint(Epoch epoch) override {
//       ++checkpoints_;
//       return ForwardingStateStore::Checkpoint(epoch);
//     }
//     int checkpoints_ = 0;
//   };
//
// Thread-safety: as the inner store's; replacing the inner store
// (set_inner) is not synchronised with calls.
#ifndef STORAGE_FORWARDING_STATE_STORE_H_
#define STORAGE_FORWARDING_STATE_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "storage/state_store.h"

namespace backfill {

class ForwardingStateStore : public StateStore {
 public:
  // REQUIRES: `inner` outlives this store (or until set_inner replaces it).
  explicit ForwardingStateStore(StateStore* inner) : inner_(inner) {}

  StateStore& inner() const { return *inner_; }

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override {
    return inner_->NewLocalStateStore(table_id, options);
  }
  absl::Status Checkpoint(Epoch epoch) override {
    return inner_->Checkpoint(epoch);
  }
  Epoch CommittedEpoch(TableId table_id) const override {
    return inner_->CommittedEpoch(table_id);
  }
  bool IsCommitted(TableId table_id, Epoch epoch) const override {
    return inner_->IsCommitted(table_id, epoch);
  }
  absl::Status WaitCommitted(TableId table_id, Epoch epoch, absl::Time deadline,
                             Cancellation& cancellation,
                             Clock& clock) override {
    return inner_->WaitCommitted(table_id, epoch, deadline, cancellation,
                                 clock);
  }
  uint64_t AddCommitListener(std::function<void(Epoch)> listener) override {
    return inner_->AddCommitListener(std::move(listener));
  }
  void RemoveCommitListener(uint64_t id) override {
    inner_->RemoveCommitListener(id);
  }
  absl::StatusOr<std::optional<std::string>> Get(const TableKey& key,
                                                 Epoch read_epoch) override {
    return inner_->Get(key, read_epoch);
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options = {}) override {
    return inner_->NewIterator(table_id, vnode, range, read_epoch, options);
  }
  absl::Status PinEpoch(absl::string_view owner, Epoch epoch) override {
    return inner_->PinEpoch(owner, epoch);
  }
  absl::Status ReleaseEpochPin(absl::string_view owner, Epoch epoch) override {
    return inner_->ReleaseEpochPin(owner, epoch);
  }
  std::map<std::string, Epoch> EpochPins() const override {
    return inner_->EpochPins();
  }

 protected:
  // Forwards to `inner` from now on (e.g. after its owner reopened it).
  void set_inner(StateStore* inner) { inner_ = inner; }

 private:
  StateStore* inner_;
};

}  // namespace backfill

#endif  // STORAGE_FORWARDING_STATE_STORE_H_
