// The memcomparable form of a DECIMAL (serde/FORMAT.md section 1.2, never
// change: persisted): a kind byte, then for finite non-zero values the
// adjusted exponent and the digits in base-100 bytes.
#ifndef SERDE_INTERNAL_DECIMAL_KEY_H_
#define SERDE_INTERNAL_DECIMAL_KEY_H_

#include <string>

#include "absl/status/status.h"
#include "serde/datum.h"
#include "serde/decimal.h"
#include "serde/internal/key_reader.h"

namespace backfill {
namespace serde_internal {

// Appends the ascending value bytes of `value` (after the null tag).
void AppendDecimalKey(const Decimal& value, std::string* out);

// Reads what AppendDecimalKey wrote into *out. Errors: DataLoss (via
// `reader`) for a bad kind byte, truncation, or a non-canonical value.
absl::Status ReadDecimalKey(KeyReader& reader, Datum* out);

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_DECIMAL_KEY_H_
