#include "tools/hanging_state_store.h"

#include <atomic>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace backfill {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<int> g_blocked{0};

// Blocks while the switch is armed.
void HangWhileArmed() {
  if (!g_armed.load()) return;
  g_blocked.fetch_add(1);
  while (g_armed.load()) absl::SleepFor(absl::Milliseconds(10));
  g_blocked.fetch_sub(1);
}

class HangingLocalStateStore final : public LocalStateStore {
 public:
  explicit HangingLocalStateStore(std::unique_ptr<LocalStateStore> inner)
      : inner_(std::move(inner)) {}

  TableId table_id() const override { return inner_->table_id(); }
  bool replicated() const override { return inner_->replicated(); }
  absl::Status Init(EpochPair first) override {
    HangWhileArmed();
    return inner_->Init(first);
  }
  absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value) override {
    HangWhileArmed();
    return inner_->Insert(vnode, pk, value);
  }
  absl::Status Delete(VirtualNode vnode, absl::string_view pk) override {
    HangWhileArmed();
    return inner_->Delete(vnode, pk);
  }
  absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) override {
    HangWhileArmed();
    return inner_->Get(vnode, pk);
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options) override {
    HangWhileArmed();
    return inner_->NewIterator(vnode, range, options);
  }
  absl::Status Seal(EpochPair next) override {
    HangWhileArmed();
    return inner_->Seal(next);
  }
  Epoch epoch() const override { return inner_->epoch(); }

 private:
  std::unique_ptr<LocalStateStore> inner_;
};

}  // namespace

void ActorHang::Arm() { g_armed.store(true); }
void ActorHang::Release() { g_armed.store(false); }
bool ActorHang::armed() { return g_armed.load(); }
int ActorHang::blocked() { return g_blocked.load(); }

absl::StatusOr<std::unique_ptr<LocalStateStore>>
HangingStateStore::NewLocalStateStore(TableId table_id,
                                      const LocalOptions& options) {
  HangWhileArmed();
  absl::StatusOr<std::unique_ptr<LocalStateStore>> local =
      inner().NewLocalStateStore(table_id, options);
  if (!local.ok()) return local.status();
  return std::make_unique<HangingLocalStateStore>(*std::move(local));
}

}  // namespace backfill
