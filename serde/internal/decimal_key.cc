#include "serde/internal/decimal_key.h"

#include <cassert>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace serde_internal {
namespace {

// Decimal kind tags (ascending form). Never change: persisted.
constexpr uint8_t kDecimalNegativeInfinityTag = 0x01;
constexpr uint8_t kDecimalNegativeTag = 0x02;
constexpr uint8_t kDecimalZeroTag = 0x03;
constexpr uint8_t kDecimalPositiveTag = 0x04;
constexpr uint8_t kDecimalPositiveInfinityTag = 0x05;
constexpr uint8_t kDecimalNaNTag = 0x06;

}  // namespace

// Decimal (ascending): a kind tag; finite non-zero values then carry the
// adjusted exponent (e + 128, one byte) and the significant digits packed two
// per byte as 2 * pair + 1, the last byte 2 * pair (SQLite4 style); negative
// values complement the exponent and digit bytes.
void AppendDecimalKey(const Decimal& value, std::string* out) {
  switch (value.kind()) {
    case Decimal::Kind::kNaN:
      out->push_back(kDecimalNaNTag);
      return;
    case Decimal::Kind::kPositiveInfinity:
      out->push_back(kDecimalPositiveInfinityTag);
      return;
    case Decimal::Kind::kNegativeInfinity:
      out->push_back(kDecimalNegativeInfinityTag);
      return;
    case Decimal::Kind::kFinite:
      break;
  }
  if (value.is_zero()) {
    out->push_back(kDecimalZeroTag);
    return;
  }
  absl::uint128 mantissa = value.mantissa();
  const int exponent = Decimal::DigitCount(mantissa) - 1 - value.scale();
  assert(exponent >= -128 && exponent <= 127);
  // Trailing zeros only remain at kMinScale; the 64-bit test is the cheap
  // common case.
  while (absl::Uint128High64(mantissa) != 0
             ? mantissa % 10 == 0
             : absl::Uint128Low64(mantissa) % 10 == 0) {
    mantissa /= 10;
  }
  int digits = Decimal::DigitCount(mantissa);
  if (digits % 2 != 0) {
    mantissa *= 10;
    ++digits;
  }
  const int pairs = digits / 2;
  char buffer[2 + 20];
  const bool negative = value.negative();
  const uint8_t flip = negative ? 0xFF : 0x00;
  buffer[0] =
      static_cast<char>(negative ? kDecimalNegativeTag : kDecimalPositiveTag);
  buffer[1] = static_cast<char>(static_cast<uint8_t>(exponent + 128) ^ flip);
  for (int i = pairs - 1; i >= 0; --i) {
    unsigned pair;
    if (absl::Uint128High64(mantissa) == 0) {
      const uint64_t low = absl::Uint128Low64(mantissa);
      pair = static_cast<unsigned>(low % 100);
      mantissa = low / 100;
    } else {
      pair = static_cast<unsigned>(mantissa % 100);
      mantissa /= 100;
    }
    const uint8_t byte =
        static_cast<uint8_t>(2 * pair + (i == pairs - 1 ? 0 : 1));
    buffer[2 + i] = static_cast<char>(byte ^ flip);
  }
  out->append(buffer, 2 + pairs);
}

absl::Status ReadDecimalKey(KeyReader& reader, Datum* out) {
  const size_t start = reader.position();
  uint8_t tag;
  if (!reader.ReadByte(&tag)) return reader.Truncated("decimal tag");
  switch (tag) {
    case kDecimalNegativeInfinityTag:
      *out = Decimal::NegativeInfinity();
      return absl::OkStatus();
    case kDecimalZeroTag:
      *out = Decimal();
      return absl::OkStatus();
    case kDecimalPositiveInfinityTag:
      *out = Decimal::PositiveInfinity();
      return absl::OkStatus();
    case kDecimalNaNTag:
      *out = Decimal::NaN();
      return absl::OkStatus();
    case kDecimalNegativeTag:
    case kDecimalPositiveTag:
      break;
    default:
      return reader.Error(absl::StrCat("decimal tag ", tag, " is not in 1..6"),
                          start);
  }
  const bool negative = tag == kDecimalNegativeTag;
  const uint8_t flip = negative ? 0xFF : 0x00;
  uint8_t exponent_byte;
  if (!reader.ReadByte(&exponent_byte))
    return reader.Truncated("decimal exponent");
  const int exponent = static_cast<int>(exponent_byte ^ flip) - 128;
  absl::uint128 mantissa = 0;
  int pairs = 0;
  unsigned pair = 0;
  const size_t digits_start = reader.position();
  while (true) {
    uint8_t byte;
    if (!reader.ReadByte(&byte)) return reader.Truncated("decimal digits");
    byte ^= flip;
    pair = byte >> 1;
    if (pair > 99) {
      return reader.Error(absl::StrCat("decimal digit pair ", pair, " > 99"),
                          reader.position() - 1);
    }
    if (pairs == 0 && pair < 10) {
      return reader.Error("decimal with a leading zero digit", digits_start);
    }
    if (++pairs > (Decimal::kMaxDigits + 1) / 2) {
      return reader.Error("decimal with more than 38 digits", digits_start);
    }
    mantissa = mantissa * 100 + pair;
    if ((byte & 1) == 0) break;
  }
  if (pair == 0) {
    return reader.Error("decimal digits end in a zero pair",
                        reader.position() - 1);
  }
  int digits = 2 * pairs;
  if (pair % 10 == 0) {
    mantissa /= 10;
    --digits;
  }
  int scale = digits - 1 - exponent;
  if (scale > Decimal::kMaxScale) {
    return reader.Error(
        absl::StrCat("decimal exponent ", exponent, " too small"),
        digits_start - 1);
  }
  if (scale < Decimal::kMinScale) {
    const int pad = Decimal::kMinScale - scale;
    if (digits + pad > Decimal::kMaxDigits) {
      return reader.Error(
          absl::StrCat("decimal exponent ", exponent, " too large"),
          digits_start - 1);
    }
    mantissa *= Decimal::PowerOfTen(pad);
    scale = Decimal::kMinScale;
  }
  *out = Decimal::FromParts(negative, mantissa, scale);
  return absl::OkStatus();
}

}  // namespace serde_internal
}  // namespace backfill
