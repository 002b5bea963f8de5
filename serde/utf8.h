// UTF-8 validity: what protobuf requires of a proto3 `string` (names in
// catalog.proto and scenario.proto) and what the JSON writers pass through
// unescaped. Valid means well-formed: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequence.
//
//   if (!IsValidUtf8(name)) return absl::InvalidArgumentError("...");
//   size_t n = Utf8SequenceLength(text);  // 0: text[0] starts no valid char
//   AppendUtf8(0x20AC, &out);              // "\xE2\x82\xAC"
#ifndef SERDE_UTF8_H_
#define SERDE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace backfill {

// Length (1 to 4) of the valid UTF-8 sequence at the start of `text`, or 0
// if there is none (or `text` is empty).
size_t Utf8SequenceLength(absl::string_view text);

// True iff all of `text` is valid UTF-8 (the empty string is).
bool IsValidUtf8(absl::string_view text);

// Appends the UTF-8 encoding (1 to 4 bytes) of `code_point`.
// REQUIRES: code_point <= 0x10FFFF. A surrogate (U+D800..U+DFFF) is written
// in its 3-byte form, which IsValidUtf8 rejects; callers that need valid
// text exclude surrogates first.
void AppendUtf8(uint32_t code_point, std::string* out);

}  // namespace backfill

#endif  // SERDE_UTF8_H_
