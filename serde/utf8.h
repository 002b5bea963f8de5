// UTF-8 validity: what protobuf requires of a proto3 `string` (names in
// catalog.proto and scenario.proto) and what the JSON writers pass through
// unescaped. Valid means well-formed: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequence.
//
//   if (!IsValidUtf8(name)) return absl::InvalidArgumentError("...");
//   size_t n = Utf8SequenceLength(text);  // 0: text[0] starts no valid char
#ifndef SERDE_UTF8_H_
#define SERDE_UTF8_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace backfill {

// Length (1 to 4) of the valid UTF-8 sequence at the start of `text`, or 0
// if there is none (or `text` is empty).
size_t Utf8SequenceLength(absl::string_view text);

// True iff all of `text` is valid UTF-8 (the empty string is).
bool IsValidUtf8(absl::string_view text);

}  // namespace backfill

#endif  // SERDE_UTF8_H_
