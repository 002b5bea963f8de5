// Proleptic Gregorian calendar arithmetic and the date-time text shared by
// TIMESTAMPTZ (serde/timestamptz.h) and the TIMESTAMP / DATE / TIME text of
// serde/text_format.h. Year 0 is 1 BC; days and microseconds count from
// 1970-01-01 00:00:00. Pure functions, thread-safe.
#ifndef SERDE_INTERNAL_CIVIL_TIME_H_
#define SERDE_INTERNAL_CIVIL_TIME_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {
namespace serde_internal {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// a / b rounded towards negative infinity. REQUIRES: b != 0.
int64_t FloorDiv(int64_t a, int64_t b);

struct CivilDate {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
};

// The date `days` after 1970-01-01 (Howard Hinnant's civil_from_days).
CivilDate CivilFromDays(int64_t days);
// Days from 1970-01-01 to the date. REQUIRES: a valid month and day.
int64_t DaysFromCivil(int64_t year, int month, int day);
bool IsLeapYear(int64_t year);
// REQUIRES: 1 <= month <= 12.
int DaysInMonth(int64_t year, int month);

// Appends "HH:MM:SS[.ffffff]", the fraction without trailing zeros.
// REQUIRES: 0 <= micros < kMicrosPerDay.
void AppendTimeOfDay(int64_t micros, std::string* out);

// Appends "YYYY-MM-DD HH:MM:SS[.ffffff]<zone>[ BC]" for `micros` since the
// epoch: the year at least 4 digits, years before 1 as PostgreSQL prints
// them (year 0 is "0001 BC"). `zone` is "+00" for TIMESTAMPTZ, empty for
// TIMESTAMP.
void AppendTimestampText(int64_t micros, absl::string_view zone,
                         std::string* out);

// Reads "YYYY-MM-DD[ T]HH:MM[:SS[.f{1,6}]][zone][ BC]" (the input of
// ParseTimestamptz, serde/timestamptz.h) into microseconds since the epoch.
// With apply_zone (TIMESTAMPTZ) the zone offset is subtracted; without it
// (TIMESTAMP) the zone is checked but ignored, as PostgreSQL does for
// timestamp without time zone.
// Errors: InvalidArgument "invalid TIMESTAMPTZ (or TIMESTAMP) \"text\": why".
absl::StatusOr<int64_t> ParseTimestampMicros(absl::string_view text,
                                             bool apply_zone);

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_CIVIL_TIME_H_
