#include "serde/timestamptz.h"

#include "serde/internal/civil_time.h"

namespace backfill {

std::string FormatTimestamptz(Timestamptz value) {
  std::string out;
  serde_internal::AppendTimestampText(value.micros, "+00", &out);
  return out;
}

absl::StatusOr<Timestamptz> ParseTimestamptz(absl::string_view text) {
  absl::StatusOr<int64_t> micros =
      serde_internal::ParseTimestampMicros(text, /*apply_zone=*/true);
  if (!micros.ok()) return micros.status();
  return Timestamptz{*micros};
}

}  // namespace backfill
