#include "storage/table_key.h"

#include "absl/base/internal/endian.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace backfill {

std::string TableKey::DebugString() const {
  return absl::StrCat("table ", table_id, " vnode ", vnode, " pk ",
                      absl::CHexEscape(pk));
}

std::string FullKey::DebugString() const {
  return absl::StrCat(table_key.DebugString(), " @ ", epoch.DebugString());
}

std::string PkRange::DebugString() const {
  return absl::StrCat(
      "[", absl::CHexEscape(inclusive_min), ", ",
      exclusive_max ? absl::CHexEscape(*exclusive_max) : std::string("+inf"),
      ")");
}

void AppendTableKeyPrefix(TableId table_id, VirtualNode vnode,
                          std::string* out) {
  char buffer[kTableKeyPrefixSize];
  absl::big_endian::Store32(buffer, table_id);
  absl::big_endian::Store16(buffer + 4, vnode);
  out->append(buffer, sizeof(buffer));
}

void AppendEpochSuffix(Epoch epoch, std::string* out) {
  char buffer[kEpochSuffixSize];
  absl::big_endian::Store64(buffer, ~epoch.value());
  out->append(buffer, sizeof(buffer));
}

void AppendFullKey(TableId table_id, VirtualNode vnode, absl::string_view pk,
                   Epoch epoch, std::string* out) {
  out->reserve(out->size() + kMinFullKeySize + pk.size());
  AppendTableKeyPrefix(table_id, vnode, out);
  out->append(pk.data(), pk.size());
  AppendEpochSuffix(epoch, out);
}

std::string EncodeFullKey(const FullKey& key) {
  std::string out;
  AppendFullKey(key.table_key.table_id, key.table_key.vnode, key.table_key.pk,
                key.epoch, &out);
  return out;
}

absl::StatusOr<FullKeyView> DecodeFullKey(absl::string_view encoded) {
  if (encoded.size() < kMinFullKeySize) {
    return absl::DataLossError(absl::StrCat(
        "state store key too short: ", encoded.size(), " bytes, need at least ",
        kMinFullKeySize, "; key ", absl::CHexEscape(std::string(encoded))));
  }
  FullKeyView view;
  view.table_id = absl::big_endian::Load32(encoded.data());
  view.vnode = absl::big_endian::Load16(encoded.data() + 4);
  if (view.vnode >= kMaxVnodeCount) {
    return absl::DataLossError(
        absl::StrCat("state store key has vnode ", view.vnode,
                     " >= ", kMaxVnodeCount, "; table ", view.table_id, " key ",
                     absl::CHexEscape(std::string(encoded))));
  }
  view.pk =
      encoded.substr(kTableKeyPrefixSize, encoded.size() - kMinFullKeySize);
  view.epoch =
      DecodeEpochSuffix(encoded.substr(encoded.size() - kEpochSuffixSize));
  return view;
}

}  // namespace backfill
