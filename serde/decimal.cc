#include "serde/decimal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace backfill {

namespace {

// 10^0 .. 10^38: codecs call PowerOfTen and DigitCount per datum, so they are
// table lookups rather than loops of 128-bit arithmetic.
struct PowersOfTen {
  absl::uint128 value[Decimal::kMaxDigits + 1];
};

const PowersOfTen& Powers() {
  static const PowersOfTen powers = [] {
    PowersOfTen p;
    p.value[0] = 1;
    for (int i = 1; i <= Decimal::kMaxDigits; ++i)
      p.value[i] = p.value[i - 1] * 10;
    return p;
  }();
  return powers;
}

}  // namespace

absl::uint128 Decimal::PowerOfTen(int exponent) {
  assert(exponent >= 0 && exponent <= kMaxDigits);
  return Powers().value[exponent];
}

int Decimal::DigitCount(absl::uint128 value) {
  if (absl::Uint128High64(value) == 0) {
    uint64_t low = absl::Uint128Low64(value);
    int digits = 1;
    while (low >= 10) {
      low /= 10;
      ++digits;
    }
    return digits;
  }
  // value >= 2^64 > 10^19: count against the table.
  const PowersOfTen& powers = Powers();
  int digits = 20;
  while (digits <= kMaxDigits && value >= powers.value[digits]) ++digits;
  return digits;
}

Decimal Decimal::NaN() {
  Decimal d;
  d.kind_ = Kind::kNaN;
  return d;
}

Decimal Decimal::PositiveInfinity() {
  Decimal d;
  d.kind_ = Kind::kPositiveInfinity;
  return d;
}

Decimal Decimal::NegativeInfinity() {
  Decimal d;
  d.kind_ = Kind::kNegativeInfinity;
  return d;
}

Decimal Decimal::FromInt64(int64_t value) {
  const bool negative = value < 0;
  const absl::uint128 magnitude =
      negative ? absl::uint128(~static_cast<uint64_t>(value)) + 1
               : absl::uint128(static_cast<uint64_t>(value));
  return FromParts(negative, magnitude, 0);
}

Decimal Decimal::FromParts(bool negative, absl::uint128 mantissa, int scale) {
  Decimal d;
  if (mantissa == 0) return d;  // canonical zero: positive, scale 0
  // Strip trailing zeros, in 64-bit arithmetic when the mantissa fits (the
  // usual case: 128-bit division is a slow library call).
  while (scale > kMinScale) {
    if (absl::Uint128High64(mantissa) == 0) {
      const uint64_t low = absl::Uint128Low64(mantissa);
      if (low % 10 != 0) break;
      mantissa = low / 10;
    } else {
      if (mantissa % 10 != 0) break;
      mantissa /= 10;
    }
    --scale;
  }
  d.negative_ = negative;
  d.set_mantissa(mantissa);
  d.scale_ = scale;
  return d;
}

absl::StatusOr<Decimal> Decimal::FromString(absl::string_view text) {
  const absl::string_view original = text;
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid decimal \"", absl::CHexEscape(original), "\": ", why));
  };
  text = absl::StripAsciiWhitespace(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const std::string lower = absl::AsciiStrToLower(std::string(text));
  if (lower == "nan") {
    if (original.find_first_of("+-") != absl::string_view::npos) {
      return error("NaN has no sign");
    }
    return NaN();
  }
  if (lower == "inf" || lower == "infinity") {
    return negative ? NegativeInfinity() : PositiveInfinity();
  }
  if (text.empty()) return error("no digits");
  // Zeros after the first significant digit are held back until a non-zero
  // digit follows, so that trailing zeros (as in ToString's "1200" for a
  // negative scale) need not fit in the 38 digits.
  absl::uint128 mantissa = 0;
  int64_t significant = 0;
  int64_t pending_zeros = 0;
  int64_t scale = 0;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : text) {
    if (c == '.') {
      if (seen_point) return error("two decimal points");
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') return error("unexpected character");
    seen_digit = true;
    if (seen_point) ++scale;
    if (c == '0') {
      if (significant > 0) ++pending_zeros;
      continue;
    }
    if (significant + pending_zeros + 1 > kMaxDigits) {
      return error("more than 38 significant digits");
    }
    // The held zeros and this digit join the significant digits (leading
    // zeros are never held, so the count starts at the first non-zero).
    significant += pending_zeros + 1;
    for (; pending_zeros > 0; --pending_zeros) mantissa *= 10;
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
  }
  if (!seen_digit) return error("no digits");
  scale -= pending_zeros;
  if (scale > kMaxScale) return error("scale too large");
  if (scale < kMinScale) {
    // Back into the mantissa as many held zeros as the scale cannot take.
    const int64_t absorbed = kMinScale - scale;
    if (mantissa != 0 && significant + absorbed > kMaxDigits) {
      return error("value too large");
    }
    for (int64_t i = 0; i < absorbed && mantissa != 0; ++i) mantissa *= 10;
    scale = kMinScale;
  }
  return FromParts(negative, mantissa, static_cast<int>(scale));
}

std::string Decimal::ToString() const {
  switch (kind_) {
    case Kind::kNaN:
      return "NaN";
    case Kind::kPositiveInfinity:
      return "Infinity";
    case Kind::kNegativeInfinity:
      return "-Infinity";
    case Kind::kFinite:
      break;
  }
  std::string digits;
  absl::uint128 m = mantissa();
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  std::reverse(digits.begin(), digits.end());
  std::string out = negative_ ? "-" : "";
  if (scale_ <= 0) {
    out += digits;
    if (!is_zero()) out.append(static_cast<size_t>(-scale_), '0');
    return out;
  }
  const int integer_digits = static_cast<int>(digits.size()) - scale_;
  if (integer_digits > 0) {
    out += digits.substr(0, integer_digits);
    out += '.';
    out += digits.substr(integer_digits);
  } else {
    out += "0.";
    out.append(static_cast<size_t>(-integer_digits), '0');
    out += digits;
  }
  return out;
}

double Decimal::ToDouble() const {
  switch (kind_) {
    case Kind::kNaN:
      return std::nan("");
    case Kind::kPositiveInfinity:
      return HUGE_VAL;
    case Kind::kNegativeInfinity:
      return -HUGE_VAL;
    case Kind::kFinite:
      break;
  }
  const double magnitude = static_cast<double>(mantissa()) *
                           std::pow(10.0, -static_cast<double>(scale_));
  return negative_ ? -magnitude : magnitude;
}

namespace {

// Rank of the kind in the total order; finite values are ranked by value.
int KindRank(Decimal::Kind kind) {
  switch (kind) {
    case Decimal::Kind::kNegativeInfinity:
      return 0;
    case Decimal::Kind::kFinite:
      return 1;
    case Decimal::Kind::kPositiveInfinity:
      return 2;
    case Decimal::Kind::kNaN:
      return 3;
  }
  return 3;
}

}  // namespace

int Decimal::Compare(const Decimal& other) const {
  const int rank = KindRank(kind_), other_rank = KindRank(other.kind_);
  if (rank != other_rank) return rank < other_rank ? -1 : 1;
  if (!is_finite()) return 0;
  // Signs: zero is non-negative.
  const int sign = is_zero() ? 0 : (negative_ ? -1 : 1);
  const int other_sign = other.is_zero() ? 0 : (other.negative_ ? -1 : 1);
  if (sign != other_sign) return sign < other_sign ? -1 : 1;
  if (sign == 0) return 0;
  // Compare magnitudes: adjusted exponent first, then the digits aligned to
  // 38 places (10^38 fits in an unsigned 128-bit integer).
  const int digits = DigitCount(mantissa());
  const int other_digits = DigitCount(other.mantissa());
  const int exponent = digits - 1 - scale_;
  const int other_exponent = other_digits - 1 - other.scale_;
  int magnitude = 0;
  if (exponent != other_exponent) {
    magnitude = exponent < other_exponent ? -1 : 1;
  } else {
    const absl::uint128 a = mantissa() * PowerOfTen(kMaxDigits - digits);
    const absl::uint128 b =
        other.mantissa() * PowerOfTen(kMaxDigits - other_digits);
    magnitude = a == b ? 0 : (a < b ? -1 : 1);
  }
  return sign > 0 ? magnitude : -magnitude;
}

}  // namespace backfill
