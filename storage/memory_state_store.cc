#include "storage/memory_state_store.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "storage/internal/committed_layer.h"
#include "storage/internal/layered_state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace {

using storage_internal::CommitBatch;
using storage_internal::MemTablePk;
using storage_internal::MemTableVnode;

class MemoryCommittedLayer final : public storage_internal::CommittedLayer {
 public:
  // Newest first.
  using Versions = std::map<Epoch, std::optional<std::string>, std::greater<>>;
  using Data = std::map<TableKey, Versions>;

  absl::Status Commit(const std::vector<CommitBatch>& batches,
                      Epoch /*committed_epoch*/) override {
    MutexLock lock(&mu_);
    for (const CommitBatch& batch : batches) {
      for (const auto& [key, value] : *batch.data) {
        data_[TableKey{batch.table_id, MemTableVnode(key),
                       std::string(MemTablePk(key))}][batch.epoch] = value;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<std::string>> Get(TableId table_id,
                                                 VirtualNode vnode,
                                                 absl::string_view pk,
                                                 Epoch read_epoch) override {
    MutexLock lock(&mu_);
    auto it = data_.find(TableKey{table_id, vnode, std::string(pk)});
    if (it == data_.end()) return std::nullopt;
    const std::optional<std::string>* visible = Visible(it->second, read_epoch);
    if (visible == nullptr) return std::nullopt;
    return *visible;
  }

  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& /*options*/,
      std::unique_ptr<storage_internal::EpochPin> /*pin*/) override {
    return std::unique_ptr<StateStoreIterator>(
        std::make_unique<Iterator>(this, table_id, vnode, range, read_epoch));
  }

 private:
  // The version visible at read_epoch, or null.
  static const std::optional<std::string>* Visible(const Versions& versions,
                                                   Epoch read_epoch) {
    auto it = versions.lower_bound(read_epoch);  // First epoch <= read_epoch.
    return it == versions.end() ? nullptr : &it->second;
  }

  // Locks the layer on every move: commits may insert concurrently. Map
  // nodes are never erased or changed once visible at an epoch <= the
  // committed epoch, so the views stay valid without the lock.
  class Iterator final : public StateStoreIterator {
   public:
    Iterator(MemoryCommittedLayer* layer, TableId table_id, VirtualNode vnode,
             PkRange range, Epoch read_epoch)
        : layer_(layer),
          table_id_(table_id),
          vnode_(vnode),
          range_(std::move(range)),
          read_epoch_(read_epoch) {}

    bool Valid() const override { return valid_; }
    void SeekToFirst() override { Seek(range_.inclusive_min); }
    void Seek(absl::string_view pk) override {
      MutexLock lock(&layer_->mu_);
      const absl::string_view target =
          std::max(pk, absl::string_view(range_.inclusive_min));
      it_ = layer_->data_.lower_bound(
          TableKey{table_id_, vnode_, std::string(target)});
      Settle();
    }
    void Next() override {
      MutexLock lock(&layer_->mu_);
      ++it_;
      Settle();
    }
    absl::string_view key() const override { return it_->first.pk; }
    absl::string_view value() const override { return *value_; }
    absl::Status status() const override { return absl::OkStatus(); }

   private:
    // Moves to the first live row at or after it_.
    void Settle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(layer_->mu_) {
      for (; it_ != layer_->data_.end(); ++it_) {
        const TableKey& key = it_->first;
        if (key.table_id != table_id_ || key.vnode != vnode_ ||
            !range_.Contains(key.pk)) {
          break;
        }
        const std::optional<std::string>* visible =
            Visible(it_->second, read_epoch_);
        if (visible != nullptr && visible->has_value()) {
          value_ = &**visible;
          valid_ = true;
          return;
        }
      }
      valid_ = false;
    }

    MemoryCommittedLayer* const layer_;
    const TableId table_id_;
    const VirtualNode vnode_;
    const PkRange range_;
    const Epoch read_epoch_;
    Data::const_iterator it_;
    const std::string* value_ = nullptr;
    bool valid_ = false;
  };

  Mutex mu_;
  Data data_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<StateStore> NewMemoryStateStore() {
  return std::make_unique<storage_internal::LayeredStateStore>(
      std::make_unique<MemoryCommittedLayer>(), Epoch::Zero());
}

}  // namespace backfill
