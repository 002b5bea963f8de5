// RateLimit: the snapshot-read rate policy of a backfill actor (CONTRACT §7).
//
//   RateLimit limit = RateLimit::FromOptionalU32(options.backfill_rate_limit);
//   if (limit.is_paused()) { /* read no snapshot rows */ }
//   gauge.Set(limit.ToMetricValue());   // rows/s, +Inf when disabled
//
// A value type with three states: Disabled (no limit), Fixed(n rows/s, n > 0)
// and Pause (no snapshot rows at all until the limit changes). It is cheap to
// copy, comparable, and carries no state of the limiter that enforces it
// (see ratelimit/rate_limiter.h).
#ifndef RATELIMIT_RATE_LIMIT_H_
#define RATELIMIT_RATE_LIMIT_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace backfill {

class RateLimit {
 public:
  enum class Kind : uint8_t { kDisabled, kFixed, kPause };

  // Default: Disabled.
  constexpr RateLimit() = default;

  static constexpr RateLimit Disabled() { return RateLimit(); }
  static constexpr RateLimit Pause() { return RateLimit(Kind::kPause, 0); }
  // `rows_per_second` rows per second. Fixed(0) is Pause (a limit of zero
  // rows per second reads nothing), so every Fixed value has a rate >= 1.
  static constexpr RateLimit Fixed(uint32_t rows_per_second) {
    return rows_per_second == 0 ? Pause()
                                : RateLimit(Kind::kFixed, rows_per_second);
  }

  // The SQL / proto encoding (CONTRACT §7): absent -> Disabled, 0 -> Pause,
  // n -> Fixed(n).
  static constexpr RateLimit FromOptionalU32(std::optional<uint32_t> value) {
    if (!value.has_value()) return Disabled();
    return Fixed(*value);  // Fixed(0) is Pause.
  }
  // Inverse of FromOptionalU32.
  constexpr std::optional<uint32_t> ToOptionalU32() const {
    switch (kind_) {
      case Kind::kDisabled:
        return std::nullopt;
      case Kind::kPause:
        return 0;
      case Kind::kFixed:
        break;
    }
    return rows_per_second_;
  }

  constexpr Kind kind() const { return kind_; }
  constexpr bool is_disabled() const { return kind_ == Kind::kDisabled; }
  constexpr bool is_fixed() const { return kind_ == Kind::kFixed; }
  constexpr bool is_paused() const { return kind_ == Kind::kPause; }

  // The rate of a Fixed limit; 0 for Disabled and Pause.
  constexpr uint32_t rows_per_second() const { return rows_per_second_; }

  // For logs: "disabled", "pause" or "fixed(30 rows/s)".
  std::string ToString() const;

  // The limit as a gauge value in rows per second: Fixed(n) -> n,
  // Pause -> 0, Disabled -> +infinity (exported as "+Inf" in the Prometheus
  // text format; RisingWave exports u64::MAX instead).
  double ToMetricValue() const;

  friend constexpr bool operator==(const RateLimit&,
                                   const RateLimit&) = default;

  friend std::ostream& operator<<(std::ostream& os, const RateLimit& limit) {
    return os << limit.ToString();
  }

 private:
  constexpr RateLimit(Kind kind, uint32_t rows_per_second)
      : kind_(kind), rows_per_second_(rows_per_second) {}

  Kind kind_ = Kind::kDisabled;
  uint32_t rows_per_second_ = 0;  // > 0 iff kind_ == kFixed.
};

// The number of rows a snapshot chunk builder should hold under `limit`
// (CONTRACT §7.3): Disabled / Pause -> chunk_size; Fixed(n) -> min(n, chunk_size);
// the result is then raised to at least 2 so that an update pair (two rows)
// always fits in one chunk. Example: chunk_size 256 with Fixed(30) gives 30,
// with Fixed(1) gives 2.
constexpr uint32_t SnapshotChunkSize(RateLimit limit, uint32_t chunk_size) {
  uint32_t size = chunk_size;
  if (limit.is_fixed() && limit.rows_per_second() < size) {
    size = limit.rows_per_second();
  }
  return size < 2 ? 2 : size;
}

}  // namespace backfill

#endif  // RATELIMIT_RATE_LIMIT_H_
