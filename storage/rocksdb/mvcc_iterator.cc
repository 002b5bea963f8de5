#include "storage/rocksdb/mvcc_iterator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
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
  // [first version of min, first version of max), or to the vnode's end when
  // the range has no max.
  AppendFullKey(scan_.table_id, scan_.vnode, scan_.range.inclusive_min,
                Epoch::Max(), &lower_);
  lower_slice_ = ToSlice(lower_);
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = scan_.fill_cache;
  read_options.iterate_lower_bound = &lower_slice_;
  if (scan_.range.exclusive_max.has_value()) {
    AppendFullKey(scan_.table_id, scan_.vnode, *scan_.range.exclusive_max,
                  Epoch::Max(), &upper_);
    upper_slice_ = ToSlice(upper_);
    read_options.iterate_upper_bound = &upper_slice_;
  }
  // else no RocksDB bound: Settle ends the scan at the first key of another
  // prefix (the next vnode's). RocksDB checks its bound with a comparison
  // per key read, which cost about 7% of a snapshot scan's time
  // (backfill_bench). What the bound would also stop is DBIter skipping the
  // invisible entries (GC's deletion markers) at the start of the next
  // vnode: work of the same kind as a run of them inside the range.
  read_options.prefix_same_as_start = scan_.point_lookup;
  read_options.total_order_seek = !scan_.point_lookup;
  iterator_.reset(open(read_options));
}

namespace {

// Whether [a, a + size) and [b, b + size) hold the same bytes; inline for
// the sizes of most user keys (the 6-byte prefix and a pk of 2 to 10
// bytes), where a call to memcmp cost more than the comparison.
inline bool SameBytes(const char* a, const char* b, size_t size) {
  if (size >= 8 && size <= 16) {
    uint64_t a_head, b_head, a_tail, b_tail;
    std::memcpy(&a_head, a, 8);
    std::memcpy(&b_head, b, 8);
    std::memcpy(&a_tail, a + size - 8, 8);
    std::memcpy(&b_tail, b + size - 8, 8);
    return ((a_head ^ b_head) | (a_tail ^ b_tail)) == 0;
  }
  return std::memcmp(a, b, size) == 0;
}

// Copies `size` bytes, inline for the same sizes.
inline void CopyBytes(char* to, const char* from, size_t size) {
  if (size >= 8 && size <= 16) {
    uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + size - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + size - 8, &tail, 8);
    return;
  }
  std::memcpy(to, from, size);
}

}  // namespace

void MvccIterator::Seek(absl::string_view pk) {
  valid_ = false;
  if (!status_.ok() || scan_.range.IsEmpty()) return;
  seek_key_.clear();
  // The read epoch's suffix skips the versions newer than it.
  AppendFullKey(scan_.table_id, scan_.vnode,
                std::max(pk, absl::string_view(scan_.range.inclusive_min)),
                scan_.read_epoch, &seek_key_);
  iterator_->Seek(ToSlice(seek_key_));
  Settle(/*skipping=*/false);
}

void MvccIterator::Next() {
  SkipFrom(ToStringView(iterator_->key()));
  iterator_->Next();
  Settle(/*skipping=*/true);
}

size_t MvccIterator::VisitRows(
    size_t max_rows,
    absl::FunctionRef<bool(absl::string_view, absl::string_view)> visit) {
  size_t n = 0;
  while (n < max_rows && valid_) {
    if (!visit(key_, value_)) break;
    ++n;
    Next();  // a direct call: the class is final
  }
  return n;
}

void MvccIterator::SkipFrom(absl::string_view key) {
  // `key` passed Settle's checks: at least kMinFullKeySize bytes.
  const size_t user_size = SplitEncodedFullKey(key).user_key.size();
  if (skipped_user_key_.size() < user_size) skipped_user_key_.resize(user_size);
  CopyBytes(skipped_user_key_.data(), key.data(), user_size);
  skipped_key_size_ = key.size();
}

bool MvccIterator::IsSkipped(absl::string_view key) const {
  // An older version has the same size and user key; anything else (another
  // row, or a key too short to be a version: corrupt, which Settle reports)
  // ends the skip.
  return key.size() == skipped_key_size_ &&
         SameBytes(key.data(), skipped_user_key_.data(),
                   skipped_key_size_ - kEpochSuffixSize);
}

void MvccIterator::Settle(bool skipping) {
  valid_ = false;
  while (iterator_->Valid()) {
    const absl::string_view key = ToStringView(iterator_->key());
    if (skipping) {
      if (IsSkipped(key)) {
        iterator_->Next();
        continue;
      }
      skipping = false;
    }
    // The lower bound (and the upper one, if any) keep foreign keys out;
    // these checks catch bytes that decode into a key no checkpoint can have
    // written: too short, or not of the scan's table_id | vnode prefix (the
    // first bytes of the lower bound).
    const int prefix_order =
        key.size() < kTableKeyPrefixSize
            ? -1
            : std::memcmp(key.data(), lower_.data(), kTableKeyPrefixSize);
    if (key.size() < kMinFullKeySize || prefix_order != 0) {
      if (prefix_order > 0 && !scan_.range.exclusive_max.has_value()) {
        return;  // past the vnode: the end of an unbounded range
      }
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
        SkipFrom(key);
        skipping = true;
        iterator_->Next();
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
