// Decimal: an exact decimal number of up to 38 significant digits, or NaN, or
// +-Infinity (PostgreSQL's NUMERIC allows all three).
//
//   Decimal a = *Decimal::FromString("1.50");
//   Decimal b = Decimal::FromParts(/*negative=*/false, 15, /*scale=*/1);
//   assert(a == b && a.ToString() == "1.5");
//
// Values are kept normalised (no trailing zeros in the mantissa), so equal
// numbers have equal representations: 1.5 == 1.50, 0 == -0. Ordering:
// -Infinity < finite values < +Infinity < NaN; all NaNs are equal.
#ifndef SERDE_DECIMAL_H_
#define SERDE_DECIMAL_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

class Decimal {
 public:
  enum class Kind : uint8_t {
    kFinite,
    kNaN,
    kPositiveInfinity,
    kNegativeInfinity
  };

  // The largest number of significant digits: 10^38 - 1 fits in 127 bits.
  static constexpr int kMaxDigits = 38;
  // Scales (digits after the point) allowed in FromParts/FromString.
  static constexpr int kMinScale = -kMaxDigits;
  static constexpr int kMaxScale = 2 * kMaxDigits;

  // Zero.
  Decimal() = default;

  static Decimal NaN();
  static Decimal PositiveInfinity();
  static Decimal NegativeInfinity();
  static Decimal FromInt64(int64_t value);

  // (-1)^negative * mantissa * 10^-scale.
  // REQUIRES: mantissa < 10^38 and kMinScale <= scale <= kMaxScale (callers
  // with untrusted input use FromString or validate first).
  static Decimal FromParts(bool negative, absl::uint128 mantissa, int scale);

  // Parses "[-+]digits[.digits]", "NaN", "Infinity", "-Infinity" (case-
  // insensitive, also "inf"); reads ToString's output back. More than 38
  // significant digits (trailing zeros of the integer part do not count),
  // a scale outside [kMinScale, kMaxScale], an empty string or stray
  // characters: InvalidArgument naming the input.
  static absl::StatusOr<Decimal> FromString(absl::string_view text);

  Kind kind() const { return kind_; }
  bool is_finite() const { return kind_ == Kind::kFinite; }
  bool is_nan() const { return kind_ == Kind::kNaN; }
  // Finite values only: sign, normalised mantissa and scale.
  bool negative() const { return negative_; }
  absl::uint128 mantissa() const {
    return absl::MakeUint128(mantissa_high_, mantissa_low_);
  }
  int scale() const { return scale_; }
  bool is_zero() const {
    return is_finite() && mantissa_high_ == 0 && mantissa_low_ == 0;
  }

  // Shortest exact text: "1.5", "-0.001", "1200", "NaN", "Infinity",
  // "-Infinity". Never has trailing zeros after the point.
  std::string ToString() const;
  double ToDouble() const;

  // -1, 0 or 1, in the order documented above.
  int Compare(const Decimal& other) const;
  friend bool operator==(const Decimal& a, const Decimal& b) {
    return a.Compare(b) == 0;
  }
  friend bool operator!=(const Decimal& a, const Decimal& b) {
    return a.Compare(b) != 0;
  }
  friend bool operator<(const Decimal& a, const Decimal& b) {
    return a.Compare(b) < 0;
  }
  friend std::ostream& operator<<(std::ostream& os, const Decimal& d) {
    return os << d.ToString();
  }
  template <typename H>
  friend H AbslHashValue(H h, const Decimal& d) {
    return H::combine(std::move(h), d.kind_, d.negative_, d.mantissa_high_,
                      d.mantissa_low_, d.scale_);
  }

  // Number of decimal digits of `value` (1 for 0).
  static int DigitCount(absl::uint128 value);
  // 10^exponent for 0 <= exponent <= 38.
  static absl::uint128 PowerOfTen(int exponent);

 private:
  void set_mantissa(absl::uint128 mantissa) {
    mantissa_high_ = absl::Uint128High64(mantissa);
    mantissa_low_ = absl::Uint128Low64(mantissa);
  }

  // The mantissa as two 64-bit halves rather than an absl::uint128: that
  // type is 16-byte aligned, which made a Decimal 48 bytes and every Datum
  // (a variant that can hold one) 64; this way they are 24 and 40.
  uint64_t mantissa_high_ = 0;
  uint64_t mantissa_low_ = 0;
  int32_t scale_ = 0;
  Kind kind_ = Kind::kFinite;
  bool negative_ = false;
};

static_assert(sizeof(Decimal) == 24 && alignof(Decimal) == 8);

}  // namespace backfill

#endif  // SERDE_DECIMAL_H_
