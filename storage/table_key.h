// Keys of the state store.
//
// A TableKey addresses one row of one table: (table id, vnode, pk bytes). The
// pk bytes are opaque here: the caller memcomparable-encodes the primary key,
// so byte order is row order. A FullKey adds the epoch of one version. The
// on-disk layout of a FullKey is specified in storage/FORMAT.md and is
// persisted: never change it.
//
// clang-format off
//   TableKey key{.table_id = 7, .vnode = 3, .pk = "\x00\x01"};
//   std::string encoded = EncodeFullKey(FullKey{key, Epoch(42)});
//   absl::StatusOr<FullKeyView> view = DecodeFullKey(encoded);  // DataLoss if corrupt
//   PkRange range = PkRange::Between("a", "m");                  // ["a", "m")
// clang-format on
#ifndef STORAGE_TABLE_KEY_H_
#define STORAGE_TABLE_KEY_H_

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/epoch.h"

namespace backfill {

// Identifies a table (or materialized view, or internal state table).
using TableId = uint32_t;

// Reserved: the table in which a store keeps its epoch pins (StateStore::
// PinEpoch; key: the owner's name, vnode 0; value: the epoch, 8 bytes
// big-endian). NewLocalStateStore refuses it, and so does
// ValidateTableCatalog: no table of a catalog may take it.
inline constexpr TableId kEpochPinTableId = 0xFFFFFFFF;

// One row's address: table, vnode, memcomparable pk bytes (may be empty and
// may contain any byte, including 0x00 and 0xFF).
struct TableKey {
  TableId table_id = 0;
  VirtualNode vnode = 0;
  std::string pk;

  friend auto operator<=>(const TableKey&, const TableKey&) = default;
  friend bool operator==(const TableKey&, const TableKey&) = default;

  // "table 7 vnode 3 pk \x00\x01" (pk C-escaped).
  std::string DebugString() const;
};

// One version of a row: the key plus the epoch that wrote it.
struct FullKey {
  TableKey table_key;
  Epoch epoch;

  friend bool operator==(const FullKey&, const FullKey&) = default;

  // "table 7 vnode 3 pk \x00\x01 @ epoch 42".
  std::string DebugString() const;
};

// A decoded full key that points into the encoded bytes (no copy). Valid as
// long as those bytes are.
struct FullKeyView {
  TableId table_id = 0;
  VirtualNode vnode = 0;
  absl::string_view pk;
  Epoch epoch;

  FullKey ToFullKey() const {
    return FullKey{TableKey{table_id, vnode, std::string(pk)}, epoch};
  }
};

// ---- On-disk key layout (never change: persisted; see FORMAT.md) ----------
//
//   table_id: u32 big-endian | vnode: u16 big-endian | pk bytes | ~epoch: u64
//   big-endian
//
// The epoch suffix is bit-inverted so that, for one (table, vnode, pk), the
// newest version sorts first under a bytewise comparison of the suffix.

// Size of the table_id + vnode prefix.
inline constexpr size_t kTableKeyPrefixSize = 6;
// Size of the inverted-epoch suffix.
inline constexpr size_t kEpochSuffixSize = 8;
// The smallest valid encoded full key (empty pk).
inline constexpr size_t kMinFullKeySize =
    kTableKeyPrefixSize + kEpochSuffixSize;

// Appends the 6-byte table_id | vnode prefix.
void AppendTableKeyPrefix(TableId table_id, VirtualNode vnode,
                          std::string* out);
// Appends the 8-byte inverted big-endian epoch suffix.
void AppendEpochSuffix(Epoch epoch, std::string* out);
// Appends prefix | pk | suffix.
void AppendFullKey(TableId table_id, VirtualNode vnode, absl::string_view pk,
                   Epoch epoch, std::string* out);
std::string EncodeFullKey(const FullKey& key);

// An encoded full key split into its user key (table_id | vnode | pk: the
// bytes every version of a row shares) and its epoch suffix. Views into the
// encoded bytes.
struct EncodedFullKeyParts {
  absl::string_view user_key;
  absl::string_view epoch_suffix;
};
// Splits any bytes (no validation, no copy): a key shorter than the suffix
// (only a corrupt one) is all user key, with an empty suffix. For
// comparators and prefix extractors, which must accept every key.
// Inline: the MVCC comparator calls it twice per key comparison.
inline EncodedFullKeyParts SplitEncodedFullKey(absl::string_view encoded) {
  if (encoded.size() < kEpochSuffixSize) return {encoded, absl::string_view()};
  const size_t user_size = encoded.size() - kEpochSuffixSize;
  return {encoded.substr(0, user_size), encoded.substr(user_size)};
}

// Reads the epoch from an 8-byte suffix. REQUIRES: suffix.size() == 8.
inline Epoch DecodeEpochSuffix(absl::string_view suffix) {
  uint64_t value;  // big-endian: one load and a byte swap (a scan's per-row
                   // cost; g++ compiled the byte loop it replaces as a loop)
  static_assert(kEpochSuffixSize == sizeof(value));
  std::memcpy(&value, suffix.data(), sizeof(value));
  if constexpr (std::endian::native == std::endian::little) {
    value = __builtin_bswap64(value);
  }
  return Epoch(~value);
}

// Decodes an encoded full key. Errors: DataLoss if `encoded` is shorter than
// kMinFullKeySize or its vnode is >= kMaxVnodeCount (bytes from disk are
// never trusted).
absl::StatusOr<FullKeyView> DecodeFullKey(absl::string_view encoded);

// A range of pk bytes within one (table, vnode): [inclusive_min,
// exclusive_max), where an absent exclusive_max means "to the end of the
// vnode". The empty inclusive_min is the start of the vnode.
struct PkRange {
  std::string inclusive_min;
  std::optional<std::string> exclusive_max;

  // Every pk of the vnode.
  static PkRange All() { return PkRange{}; }
  // [inclusive_min, end of vnode).
  static PkRange From(absl::string_view inclusive_min) {
    return PkRange{std::string(inclusive_min), std::nullopt};
  }
  // [inclusive_min, exclusive_max).
  static PkRange Between(absl::string_view inclusive_min,
                         absl::string_view exclusive_max) {
    return PkRange{std::string(inclusive_min), std::string(exclusive_max)};
  }

  bool Contains(absl::string_view pk) const {
    return pk >= inclusive_min && (!exclusive_max || pk < *exclusive_max);
  }
  // True if no pk can be in the range.
  bool IsEmpty() const {
    return exclusive_max.has_value() && *exclusive_max <= inclusive_min;
  }

  // "[\x00, \xff)" or "[a, +inf)" (C-escaped).
  std::string DebugString() const;
};

}  // namespace backfill

#endif  // STORAGE_TABLE_KEY_H_
