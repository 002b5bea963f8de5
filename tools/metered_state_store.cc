#include "tools/metered_state_store.h"

#include <memory>
#include <utility>

#include "absl/strings/string_view.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// A local instance of the counted table: counts Insert and Delete calls.
class CountingLocalStateStore : public LocalStateStore {
 public:
  CountingLocalStateStore(std::unique_ptr<LocalStateStore> target,
                          Counter written_rows)
      : target_(std::move(target)), written_rows_(written_rows) {}

  TableId table_id() const override { return target_->table_id(); }
  bool replicated() const override { return target_->replicated(); }
  absl::Status Init(EpochPair first) override { return target_->Init(first); }
  absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value) override {
    BACKFILL_RETURN_IF_ERROR(target_->Insert(vnode, pk, value));
    written_rows_.Increment();
    return absl::OkStatus();
  }
  absl::Status Delete(VirtualNode vnode, absl::string_view pk) override {
    BACKFILL_RETURN_IF_ERROR(target_->Delete(vnode, pk));
    written_rows_.Increment();
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) override {
    return target_->Get(vnode, pk);
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options) override {
    return target_->NewIterator(vnode, range, options);
  }
  absl::Status Seal(EpochPair next) override { return target_->Seal(next); }
  Epoch epoch() const override { return target_->epoch(); }

 private:
  const std::unique_ptr<LocalStateStore> target_;
  const Counter written_rows_;
};

}  // namespace

MeteredStateStore::MeteredStateStore(StateStore* target,
                                     MeteredStateStoreOptions options,
                                     Clock& clock)
    : ForwardingStateStore(target),
      options_(std::move(options)),
      clock_(clock) {}

absl::StatusOr<std::unique_ptr<LocalStateStore>>
MeteredStateStore::NewLocalStateStore(TableId table_id,
                                      const LocalOptions& options) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<LocalStateStore> local,
                            inner().NewLocalStateStore(table_id, options));
  if (options.replicated) return local;
  for (const CountedTable& counted : options_.counted_tables) {
    if (counted.table_id != table_id) continue;
    return std::unique_ptr<LocalStateStore>(
        std::make_unique<CountingLocalStateStore>(std::move(local),
                                                  counted.written_rows));
  }
  return local;
}

absl::Status MeteredStateStore::Checkpoint(Epoch epoch) {
  HistogramTimer timer(options_.checkpoint_duration, clock_);
  return inner().Checkpoint(epoch);
}

}  // namespace backfill
