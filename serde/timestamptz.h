// Timestamptz: a TIMESTAMPTZ value, an instant as microseconds since
// 1970-01-01 00:00:00 UTC, with PostgreSQL's text form in the UTC time zone
// (the zone of our COPY dumps).
//
//   Timestamptz t{1'700'000'000'000'000};
//   std::string text = FormatTimestamptz(t);   // "2023-11-14 22:13:20+00"
//   absl::StatusOr<Timestamptz> u =
//       ParseTimestamptz("2023-11-15 00:13:20+02");       // the same instant
#ifndef SERDE_TIMESTAMPTZ_H_
#define SERDE_TIMESTAMPTZ_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

struct Timestamptz {
  int64_t micros = 0;
  friend bool operator==(Timestamptz a, Timestamptz b) {
    return a.micros == b.micros;
  }
  friend bool operator<(Timestamptz a, Timestamptz b) {
    return a.micros < b.micros;
  }
};

// "YYYY-MM-DD HH:MM:SS[.ffffff]+00", the fraction without trailing zeros,
// the year at least 4 digits, proleptic Gregorian; years before 1 as
// PostgreSQL prints them, "... BC" after the zone (year 0 is "0001 BC").
std::string FormatTimestamptz(Timestamptz value);

// "YYYY-MM-DD[ T]HH:MM[:SS[.f{1,6}]][zone][ BC]", zone one of "Z", "UTC"
// (optionally after a space), "+HH", "+HH:MM", "+HHMM" (or "-"; |offset| <
// 16 h); no zone means UTC. The date may have 1 to 6 year digits.
// Errors: InvalidArgument naming the text and what is wrong, also for an
// invalid date or time and an instant outside the int64 microsecond range.
absl::StatusOr<Timestamptz> ParseTimestamptz(absl::string_view text);

}  // namespace backfill

#endif  // SERDE_TIMESTAMPTZ_H_
