// Interval: an INTERVAL value, (months, days, microseconds) as PostgreSQL and
// RisingWave hold it, compared the way they compare it: by the span
// months x 30 days + days x 24 h + microseconds, so that '1 mon' equals
// '30 days' and '1 day' equals '24:00:00' although their fields differ.
//
//   Interval a{.months = 1}, b{.days = 30};
//   bool same = a == b;                              // true
//   std::string text = FormatInterval({14, -3, 3'600'000'000});
//                                    // "1 year 2 mons -3 days +01:00:00"
//   absl::StatusOr<Interval> back = ParseInterval(text);   // the same fields
#ifndef SERDE_INTERVAL_H_
#define SERDE_INTERVAL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

inline constexpr int64_t kIntervalMicrosPerDay = int64_t{86'400'000'000};
// A month counts as 30 days when intervals are compared (PostgreSQL's
// DAYS_PER_MONTH).
inline constexpr int64_t kIntervalMicrosPerMonth = 30 * kIntervalMicrosPerDay;

struct Interval {
  int32_t months = 0;
  int32_t days = 0;
  int64_t micros = 0;

  // Equality and order of the spans (IntervalSpan), not of the fields.
  friend bool operator==(const Interval& a, const Interval& b);
  friend bool operator<(const Interval& a, const Interval& b);
};

// months x kIntervalMicrosPerMonth + days x kIntervalMicrosPerDay + micros,
// exactly (it needs 74 bits).
absl::int128 IntervalSpan(const Interval& value);

// <0, 0, >0 as the spans compare.
int CompareIntervals(const Interval& a, const Interval& b);

// True iff the three fields are equal (a stricter test than ==).
bool IdenticalIntervals(const Interval& a, const Interval& b);

// The inclusive range of spans an Interval can hold.
absl::int128 MinIntervalSpan();
absl::int128 MaxIntervalSpan();

// The representative of all intervals of span `span`: months, then days,
// then microseconds, each taking as much of the span as fits with the sign
// of the span (truncating division), so '30 days' and '720:00:00' give
// '1 mon', '-1 days' stays '-1 days' and '25:00:00' gives '1 day 01:00:00'.
// Fields that would overflow are clamped and the rest carried by the next
// field. nullopt iff span is outside [MinIntervalSpan(), MaxIntervalSpan()].
std::optional<Interval> IntervalFromSpan(absl::int128 span);

// PostgreSQL's output (IntervalStyle 'postgres', which RisingWave also
// prints): "[N year[s]] [N mon[s]] [N day[s]] [[+-]HH:MM:SS[.ffffff]]",
// months split into years and months, parts with a zero value left out,
// plural "s" unless the value is 1, the time part signed "+" when it follows
// a negative part and is itself positive, and "00:00:00" for a zero interval.
// Examples: "1 mon", "-1 days", "1 year 2 mons 3 days 04:05:06.5",
// "-1 mons +1 day", "00:00:00".
std::string FormatInterval(const Interval& value);

// Reads FormatInterval's output back to the same fields, and the usual
// PostgreSQL input forms: parts "N unit" with units year(s), mon(s),
// month(s), week(s), day(s), hour(s), min(s), minute(s), sec(s), second(s),
// millisecond(s) / ms, microsecond(s) / us (each part's integer value may be
// signed; only seconds may have a fraction, up to 6 digits), and a time part
// [+-]H:MM[:SS[.ffffff]], separated by single or repeated spaces. Parts add
// up; an empty string or one with no parts is an error.
// Errors: InvalidArgument naming the text and the offending part, also for a
// result whose months, days or microseconds do not fit their fields.
absl::StatusOr<Interval> ParseInterval(absl::string_view text);

}  // namespace backfill

#endif  // SERDE_INTERVAL_H_
