#include "storage/rocksdb/mvcc_iterator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "storage/rocksdb/mvcc_format.h"
#include "storage/rocksdb/status.h"

namespace backfill {
namespace rocksdb_internal {

MvccIterator::MvccIterator(
    MvccScan scan,
    absl::FunctionRef<rocksdb::Iterator*(const rocksdb::ReadOptions&)> open,
    std::unique_ptr<storage_internal::EpochPin> pin)
    : scan_(std::move(scan)), pin_(std::move(pin)) {
  // [first version of min, first version of max), or up to the next vnode's
  // first key when the range has no max.
  AppendFullKey(scan_.table_id, scan_.vnode, scan_.range.inclusive_min,
                Epoch::Max(), &lower_);
  if (scan_.range.exclusive_max.has_value()) {
    AppendFullKey(scan_.table_id, scan_.vnode, *scan_.range.exclusive_max,
                  Epoch::Max(), &upper_);
  } else {
    // vnode + 1 fits: vnode < kMaxVnodeCount <= 65535.
    AppendFullKey(scan_.table_id, static_cast<VirtualNode>(scan_.vnode + 1), "",
                  Epoch::Max(), &upper_);
  }
  lower_slice_ = ToSlice(lower_);
  upper_slice_ = ToSlice(upper_);
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = scan_.fill_cache;
  read_options.iterate_lower_bound = &lower_slice_;
  read_options.iterate_upper_bound = &upper_slice_;
  read_options.prefix_same_as_start = scan_.point_lookup;
  read_options.total_order_seek = !scan_.point_lookup;
  iterator_.reset(open(read_options));
}

void MvccIterator::Seek(absl::string_view pk) {
  valid_ = false;
  if (!status_.ok() || scan_.range.IsEmpty()) return;
  seek_key_.clear();
  // The read epoch's suffix skips the versions newer than it.
  AppendFullKey(scan_.table_id, scan_.vnode,
                std::max(pk, absl::string_view(scan_.range.inclusive_min)),
                scan_.read_epoch, &seek_key_);
  iterator_->Seek(ToSlice(seek_key_));
  Settle();
}

void MvccIterator::Next() {
  SkipOlderVersions();
  Settle();
}

void MvccIterator::SkipOlderVersions() {
  const absl::string_view user_key =
      SplitEncodedFullKey(ToStringView(iterator_->key())).user_key;
  skipped_user_key_.assign(user_key.data(), user_key.size());
  for (iterator_->Next(); iterator_->Valid(); iterator_->Next()) {
    const EncodedFullKeyParts next =
        SplitEncodedFullKey(ToStringView(iterator_->key()));
    // A key too short to be a version (corrupt) stops here and is reported.
    if (next.epoch_suffix.size() != kEpochSuffixSize ||
        next.user_key != skipped_user_key_) {
      return;
    }
  }
}

void MvccIterator::Settle() {
  valid_ = false;
  while (iterator_->Valid()) {
    const absl::string_view key = ToStringView(iterator_->key());
    // The bounds keep foreign keys out; these checks catch bytes that decode
    // into a key no checkpoint can have written: too short, or not of the
    // scan's table_id | vnode prefix (the first bytes of either bound).
    if (key.size() < kMinFullKeySize ||
        key.substr(0, kTableKeyPrefixSize) !=
            absl::string_view(lower_).substr(0, kTableKeyPrefixSize)) {
      status_ = CorruptKey(
          key, absl::StrCat(key.size(), " bytes, outside the vnode"));
      return;
    }
    const Epoch epoch =
        DecodeEpochSuffix(key.substr(key.size() - kEpochSuffixSize));
    if (epoch == Epoch::Zero()) {
      status_ = CorruptKey(key, "epoch 0 is never written");
      return;
    }
    if (epoch > scan_.read_epoch) {  // Too new; older ones follow.
      iterator_->Next();
      continue;
    }
    const absl::string_view stored = ToStringView(iterator_->value());
    absl::string_view row;
    switch (ParseMvccValue(stored, &row)) {
      case MvccValueKind::kRow:
        key_ = key.substr(kTableKeyPrefixSize, key.size() - kMinFullKeySize);
        value_ = row;
        valid_ = true;
        return;
      case MvccValueKind::kTombstone:
        SkipOlderVersions();
        continue;
      case MvccValueKind::kCorrupt:
        status_ = absl::DataLossError(absl::StrCat(
            "corrupt state store value (", DescribeCorruptValue(stored),
            ") of table ", scan_.table_id, " vnode ", scan_.vnode, " pk ",
            absl::CHexEscape(
                key.substr(kTableKeyPrefixSize, key.size() - kMinFullKeySize)),
            " @ ", epoch.DebugString()));
        return;
    }
  }
  if (!iterator_->status().ok()) {
    status_ = FromRocksDb(
        iterator_->status(),
        absl::StrCat("scan of table ", scan_.table_id, " vnode ", scan_.vnode,
                     " at ", scan_.read_epoch.DebugString()));
  }
}

absl::Status MvccIterator::CorruptKey(absl::string_view key,
                                      absl::string_view reason) const {
  return absl::DataLossError(absl::StrCat(
      "corrupt state store key (", reason, ") while reading table ",
      scan_.table_id, " vnode ", scan_.vnode, "; key ", absl::CHexEscape(key)));
}

}  // namespace rocksdb_internal
}  // namespace backfill
