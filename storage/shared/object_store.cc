#include "storage/shared/object_store.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace backfill {
namespace {

bool IsKeyCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '~' || c == '-';
}

absl::Status BadKey(absl::string_view key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid object key (", why, "): \"", absl::CEscape(key), "\""));
}

}  // namespace

absl::Status ValidateObjectKey(absl::string_view key) {
  if (key.empty()) return BadKey(key, "empty");
  if (key.size() > kMaxObjectKeyLength) {
    return BadKey(key.substr(0, 64),
                  absl::StrCat("longer than ", kMaxObjectKeyLength,
                               " bytes: ", key.size()));
  }
  for (absl::string_view segment : absl::StrSplit(key, '/')) {
    if (segment.empty()) {
      return BadKey(key, "empty segment: leading, trailing or double '/'");
    }
    if (segment == "." || segment == "..") {
      return BadKey(key, "'.' or '..' segment");
    }
    for (char c : segment) {
      if (!IsKeyCharacter(c)) {
        return BadKey(key, "characters are [A-Za-z0-9._~-] and '/'");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateObjectKeyPrefix(absl::string_view prefix) {
  if (prefix.size() > kMaxObjectKeyLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid object key prefix (longer than ",
                     kMaxObjectKeyLength, " bytes): ", prefix.size()));
  }
  if (!prefix.empty() && prefix[0] == '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid object key prefix (starts with '/'): \"", prefix, "\""));
  }
  for (char c : prefix) {
    if (c != '/' && !IsKeyCharacter(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid object key prefix (characters are "
                       "[A-Za-z0-9._~-] and '/'): \"",
                       absl::CEscape(prefix), "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace backfill
