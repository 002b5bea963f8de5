// Unsigned arithmetic that stops at a limit instead of wrapping (counters
// fed by untrusted or unbounded inputs: persisted row counts, rates times
// durations, per-file tallies).
//
//   total = SaturatingAdd(total, count);                 // <= UINT64_MAX
//   rows = SaturatingAdd(rows, delta, INT64_MAX);        // fits an INT64
//   capacity = SaturatingMultiply(capacity, distinct);
#ifndef THIRD_PARTY_ABSL_EXTRAS_SATURATING_H_
#define THIRD_PARTY_ABSL_EXTRAS_SATURATING_H_

#include <cstdint>
#include <limits>

namespace backfill {

// min(a + b, limit), computed without overflow.
inline constexpr uint64_t SaturatingAdd(
    uint64_t a, uint64_t b,
    uint64_t limit = std::numeric_limits<uint64_t>::max()) {
  return a >= limit || b >= limit - a ? limit : a + b;
}

// min(a * b, UINT64_MAX), computed without overflow.
inline constexpr uint64_t SaturatingMultiply(uint64_t a, uint64_t b) {
  return a != 0 && b > std::numeric_limits<uint64_t>::max() / a
             ? std::numeric_limits<uint64_t>::max()
             : a * b;
}

}  // namespace backfill

#endif  // THIRD_PARTY_ABSL_EXTRAS_SATURATING_H_
