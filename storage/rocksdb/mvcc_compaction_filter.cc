#include "storage/rocksdb/mvcc_compaction_filter.h"

#include <algorithm>
#include <utility>

#include "storage/rocksdb/mvcc_format.h"
#include "storage/table_key.h"

namespace backfill {
namespace rocksdb_internal {

class GcEpochs::EpochPinImpl final : public storage_internal::EpochPin {
 public:
  EpochPinImpl(GcEpochs* gc, std::multiset<uint64_t>::iterator it)
      : gc_(gc), it_(it) {}
  ~EpochPinImpl() override {
    MutexLock lock(&gc_->mu_);
    gc_->pins_.erase(it_);
  }

 private:
  GcEpochs* const gc_;
  const std::multiset<uint64_t>::iterator it_;
};

std::unique_ptr<storage_internal::EpochPin> GcEpochs::Pin(Epoch epoch) {
  MutexLock lock(&mu_);
  return std::make_unique<EpochPinImpl>(this, pins_.insert(epoch.value()));
}

void GcEpochs::SetCommitted(Epoch epoch) {
  MutexLock lock(&mu_);
  committed_ = std::max(committed_, epoch.value());
}

void GcEpochs::Freeze() {
  MutexLock lock(&mu_);
  frozen_ = true;
}

Epoch GcEpochs::BeginCompaction() {
  MutexLock lock(&mu_);
  if (frozen_) return Epoch::Zero();
  uint64_t safe = committed_;
  if (!pins_.empty()) safe = std::min(safe, *pins_.begin());
  RaiseHorizon(Epoch(safe));
  return Epoch(safe);
}

void GcEpochs::RaiseHorizon(Epoch epoch) {
  uint64_t horizon = horizon_.load();
  while (epoch.value() > horizon &&
         !horizon_.compare_exchange_weak(horizon, epoch.value())) {
  }
}

rocksdb::CompactionFilter::Decision MvccCompactionFilter::FilterV2(
    int /*level*/, const rocksdb::Slice& key, ValueType value_type,
    const rocksdb::Slice& existing_value, std::string* /*new_value*/,
    std::string* /*skip_until*/) const {
  if (value_type != ValueType::kValue) return Decision::kKeep;
  const absl::string_view encoded = ToStringView(key);
  const absl::StatusOr<FullKeyView> decoded = DecodeFullKey(encoded);
  if (!decoded.ok()) return Decision::kKeep;
  const absl::string_view user_key = SplitEncodedFullKey(encoded).user_key;
  if (user_key == last_user_key_) {
    if (shadowed_) return Decision::kRemove;
  } else {
    last_user_key_.assign(user_key.data(), user_key.size());
    shadowed_ = false;
  }
  if (decoded->epoch <= safe_) {
    shadowed_ = true;
    absl::string_view row;
    if (full_compaction_ && ParseMvccValue(ToStringView(existing_value),
                                           &row) == MvccValueKind::kTombstone) {
      return Decision::kRemove;
    }
  }
  return Decision::kKeep;
}

std::unique_ptr<rocksdb::CompactionFilter>
MvccCompactionFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& context) {
  return std::make_unique<MvccCompactionFilter>(gc_->BeginCompaction(),
                                                context.is_full_compaction);
}

bool MvccCompactionFilterFactory::ShouldFilterTableFileCreation(
    rocksdb::TableFileCreationReason reason) const {
  return reason == rocksdb::TableFileCreationReason::kFlush ||
         reason == rocksdb::TableFileCreationReason::kCompaction;
}

}  // namespace rocksdb_internal
}  // namespace backfill
