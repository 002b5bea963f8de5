// The MVCC format of the `data` column family (storage/FORMAT.md): the key
// comparator, the user-key prefix extractor and the value encoding. Keys are
// storage/table_key.h's encoded FullKeys; this file reads them only through
// that header (SplitEncodedFullKey, DecodeFullKey), never by offsets.
//
//   std::string key = EncodeFullKey(FullKey{TableKey{7, 3, "pk"}, Epoch(5)});
//   std::string value;
//   AppendRowValue("bytes", &value);            // "\x01bytes"
//   MvccComparator()->Compare(key, other_key);  // versions newest first
//
// Never change: persisted (the comparator's name is recorded by RocksDB).
#ifndef STORAGE_ROCKSDB_MVCC_FORMAT_H_
#define STORAGE_ROCKSDB_MVCC_FORMAT_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "rocksdb/comparator.h"
#include "rocksdb/slice.h"
#include "rocksdb/slice_transform.h"

namespace backfill {
namespace rocksdb_internal {

// A view of a RocksDB slice (valid as long as the slice's bytes), and back.
inline absl::string_view ToStringView(const rocksdb::Slice& slice) {
  return absl::string_view(slice.data(), slice.size());
}
inline rocksdb::Slice ToSlice(absl::string_view view) {
  return rocksdb::Slice(view.data(), view.size());
}

// "backfill.MvccKeyComparator.v1": the user key (table | vnode | pk)
// bytewise, then the inverted epoch suffix bytewise (= epoch descending, so
// the newest version of a row comes first). Total over any bytes: a key
// shorter than the suffix (only a corrupt one) is all user key. Key
// shortening is disabled. A process-wide singleton; thread-safe.
const rocksdb::Comparator* MvccComparator();

// "backfill.UserKeyPrefix.v1": maps a key to its user key, the prefix every
// version of a row shares, so that SST bloom filters of prefixes let a point
// lookup skip the files without any version of its key. Keys shorter than a
// full key (corrupt) are outside its domain.
std::shared_ptr<const rocksdb::SliceTransform> NewUserKeyPrefixExtractor();

// ---- Values (first byte a tag; never change: persisted) -------------------

// Appends a row version: kRowTag | `row`.
void AppendRowValue(absl::string_view row, std::string* out);
// Appends a tombstone: the single byte kTombstoneTag.
void AppendTombstoneValue(std::string* out);

enum class MvccValueKind {
  kRow,        // A row version; the row bytes follow the tag.
  kTombstone,  // The row was deleted.
  kCorrupt,    // Empty, an unknown tag, or a tombstone with a payload.
};

inline constexpr char kTombstoneTag = '\x00';
inline constexpr char kRowTag = '\x01';

// Classifies a stored value; for kRow sets `*row` to the row bytes (a view
// into `stored`). Inline: a scan calls it once per row, and an out-of-line
// call returned the view through memory, which the caller's next load then
// waited on.
inline MvccValueKind ParseMvccValue(absl::string_view stored,
                                    absl::string_view* row) {
  if (stored.empty()) return MvccValueKind::kCorrupt;
  if (stored[0] == kRowTag) {
    *row = stored.substr(1);
    return MvccValueKind::kRow;
  }
  if (stored[0] == kTombstoneTag && stored.size() == 1) {
    return MvccValueKind::kTombstone;
  }
  return MvccValueKind::kCorrupt;
}

// A description of a corrupt value for error messages: "empty" or "unknown
// tag 7" (a tombstone with a payload is "unknown tag 0").
std::string DescribeCorruptValue(absl::string_view stored);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_MVCC_FORMAT_H_
