#include "storage/rocksdb/mvcc_format.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "storage/table_key.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

int CompareBytes(absl::string_view a, absl::string_view b) {
  const size_t common = std::min(a.size(), b.size());
  const int r = common == 0 ? 0 : std::memcmp(a.data(), b.data(), common);
  if (r != 0) return r;
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

class MvccKeyComparator final : public rocksdb::Comparator {
 public:
  const char* Name() const override { return "backfill.MvccKeyComparator.v1"; }
  int Compare(const rocksdb::Slice& a, const rocksdb::Slice& b) const override {
    // Keys of one size have user keys of one size, so the order is their
    // bytes' order: one memcmp (most keys of a table have one size).
    if (a.size() == b.size()) {
      return a.size() == 0 ? 0 : std::memcmp(a.data(), b.data(), a.size());
    }
    const EncodedFullKeyParts a_parts = SplitEncodedFullKey(ToStringView(a));
    const EncodedFullKeyParts b_parts = SplitEncodedFullKey(ToStringView(b));
    const int r = CompareBytes(a_parts.user_key, b_parts.user_key);
    if (r != 0) return r;
    return CompareBytes(a_parts.epoch_suffix, b_parts.epoch_suffix);
  }
  // Key shortening would have to respect the suffix split; not worth it.
  void FindShortestSeparator(std::string* /*start*/,
                             const rocksdb::Slice& /*limit*/) const override {}
  void FindShortSuccessor(std::string* /*key*/) const override {}
  bool CanKeysWithDifferentByteContentsBeEqual() const override {
    return false;
  }
};

class UserKeyPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "backfill.UserKeyPrefix.v1"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return ToSlice(SplitEncodedFullKey(ToStringView(key)).user_key);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= kMinFullKeySize;
  }
};

}  // namespace

const rocksdb::Comparator* MvccComparator() {
  static const MvccKeyComparator* const comparator = new MvccKeyComparator();
  return comparator;
}

std::shared_ptr<const rocksdb::SliceTransform> NewUserKeyPrefixExtractor() {
  return std::make_shared<UserKeyPrefix>();
}

void AppendRowValue(absl::string_view row, std::string* out) {
  out->push_back(kRowTag);
  out->append(row.data(), row.size());
}

void AppendTombstoneValue(std::string* out) { out->push_back(kTombstoneTag); }

std::string DescribeCorruptValue(absl::string_view stored) {
  if (stored.empty()) return "empty";
  return absl::StrCat("unknown tag ",
                      static_cast<int>(static_cast<uint8_t>(stored[0])));
}

}  // namespace rocksdb_internal
}  // namespace backfill
