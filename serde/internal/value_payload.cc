#include "serde/internal/value_payload.h"

#include <bit>
#include <cassert>
#include <limits>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace serde_internal {
namespace {

// Decimal header byte: bits 0-4 mantissa byte count (0..16), bit 5 negative,
// bits 6-7 kind. Never change: persisted.
constexpr uint8_t kDecimalFinite = 0;
constexpr uint8_t kDecimalNaN = 1;
constexpr uint8_t kDecimalPositiveInfinity = 2;
constexpr uint8_t kDecimalNegativeInfinity = 3;

int MantissaBytes(absl::uint128 mantissa) {
  const uint64_t high = absl::Uint128High64(mantissa);
  if (high != 0) return 8 + (64 - std::countl_zero(high) + 7) / 8;
  return (64 - std::countl_zero(absl::Uint128Low64(mantissa)) + 7) / 8;
}

}  // namespace

size_t DecimalPayloadSize(const Decimal& value) {
  if (!value.is_finite()) return 1;
  return 2 + static_cast<size_t>(MantissaBytes(value.mantissa()));
}

void AppendDecimalPayload(const Decimal& value, std::string* out) {
  switch (value.kind()) {
    case Decimal::Kind::kNaN:
      out->push_back(static_cast<char>(kDecimalNaN << 6));
      return;
    case Decimal::Kind::kPositiveInfinity:
      out->push_back(static_cast<char>(kDecimalPositiveInfinity << 6));
      return;
    case Decimal::Kind::kNegativeInfinity:
      out->push_back(static_cast<char>(kDecimalNegativeInfinity << 6));
      return;
    case Decimal::Kind::kFinite:
      break;
  }
  absl::uint128 mantissa = value.mantissa();
  const int bytes = MantissaBytes(mantissa);
  assert(value.scale() >= -128 && value.scale() <= 127);
  char buffer[18];
  buffer[0] = static_cast<char>((kDecimalFinite << 6) |
                                (value.negative() ? 0x20 : 0) | bytes);
  buffer[1] = static_cast<char>(static_cast<int8_t>(value.scale()));
  for (int i = 0; i < bytes; ++i) {
    buffer[2 + i] = static_cast<char>(static_cast<uint8_t>(mantissa));
    mantissa >>= 8;
  }
  out->append(buffer, 2 + bytes);
}

int DatumIndexOf(DataType type) {
  switch (type) {
    case DataType::kBoolean:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kInt32:
      return 3;
    case DataType::kInt64:
      return 4;
    case DataType::kFloat32:
      return 5;
    case DataType::kFloat64:
      return 6;
    case DataType::kDecimal:
      return 7;
    case DataType::kVarchar:
    case DataType::kBytea:
      return 8;
    case DataType::kDate:
      return 9;
    case DataType::kTime:
      return 10;
    case DataType::kTimestamp:
      return 11;
    case DataType::kTimestamptz:
      return 12;
    case DataType::kInterval:
      return 13;
    case DataType::kSerial:
      return 14;
    case DataType::kInt256:
      return 15;
    case DataType::kList:
      return 16;
    case DataType::kStruct:
      return 17;
    case DataType::kJsonb:
      return 18;
    case DataType::kMap:
      return 19;
  }
  return -1;
}

char* WriteDecimalPayload(const Decimal& value, char* p) {
  switch (value.kind()) {
    case Decimal::Kind::kNaN:
      *p = static_cast<char>(kDecimalNaN << 6);
      return p + 1;
    case Decimal::Kind::kPositiveInfinity:
      *p = static_cast<char>(kDecimalPositiveInfinity << 6);
      return p + 1;
    case Decimal::Kind::kNegativeInfinity:
      *p = static_cast<char>(kDecimalNegativeInfinity << 6);
      return p + 1;
    case Decimal::Kind::kFinite:
      break;
  }
  const absl::uint128 mantissa = value.mantissa();
  const int bytes = MantissaBytes(mantissa);
  p[0] = static_cast<char>((kDecimalFinite << 6) |
                           (value.negative() ? 0x20 : 0) | bytes);
  p[1] = static_cast<char>(static_cast<int8_t>(value.scale()));
  // Whole 8-byte words (LE); the room is 18 bytes, the bytes past the
  // mantissa are scratch.
  const uint64_t low = absl::Uint128Low64(mantissa);
  std::memcpy(p + 2, &low, 8);
  if (bytes > 8) {
    const uint64_t high = absl::Uint128High64(mantissa);
    std::memcpy(p + 10, &high, 8);
  }
  return p + 2 + bytes;
}

void AppendPayload(const Datum& datum, DataType type, std::string* out) {
  assert(!IsNull(datum) && DatumMatchesType(datum, type));
  (void)type;
  const size_t start = out->size();
  out->resize(start + PayloadSizeBound(datum));
  char* const end = WritePayload(datum, out->data() + start);
  out->resize(static_cast<size_t>(end - out->data()));
}

namespace {

// The little-endian integer in the n bytes at p (1 <= n <= 8; p + n <=
// end). One 8-byte load, masked, where 8 bytes remain before `end`: a
// memcpy of a variable n into a uint64_t becomes narrow stores that the
// next load of the whole word must wait for (a store-forwarding stall).
inline uint64_t LoadLittleEndianPrefix(const char* p, int n, const char* end) {
  uint64_t word = 0;
  if (end - p >= 8) {
    std::memcpy(&word, p, 8);
    return n == 8 ? word : word & ((uint64_t{1} << (8 * n)) - 1);
  }
  for (int i = n - 1; i >= 0; --i) {
    word = word << 8 | static_cast<uint8_t>(p[i]);
  }
  return word;
}

// DECIMAL without error detail: the checks of PayloadReader::ReadDecimal.
const char* ReadDecimalFast(const char* p, const char* end, Datum* out) {
  if (p == end) return nullptr;
  const uint8_t header = static_cast<uint8_t>(*p);
  const int kind = header >> 6;
  if (kind != kDecimalFinite) {
    if ((header & 0x3F) != 0) return nullptr;
    payload_fast::Assign(out, kind == kDecimalNaN ? Decimal::NaN()
                              : kind == kDecimalPositiveInfinity
                                  ? Decimal::PositiveInfinity()
                                  : Decimal::NegativeInfinity());
    return p + 1;
  }
  const bool negative = (header & 0x20) != 0;
  const int bytes = header & 0x1F;
  if (bytes > 16 || end - p < 2 + bytes) return nullptr;
  const int scale = static_cast<int8_t>(p[1]);
  if (scale < Decimal::kMinScale || scale > Decimal::kMaxScale) return nullptr;
  const char* const digits = p + 2;
  if (bytes == 0) {
    if (negative || scale != 0) return nullptr;  // zero is "00 00"
    payload_fast::Assign(out, Decimal());
    return digits;
  }
  if (digits[bytes - 1] == 0) return nullptr;  // zero top byte
  absl::uint128 mantissa;
  bool trailing_zero;
  if (bytes <= 8) {
    const uint64_t low = LoadLittleEndianPrefix(digits, bytes, end);
    mantissa = low;
    trailing_zero = low % 10 == 0;
  } else {
    uint64_t low;
    std::memcpy(&low, digits, 8);
    const uint64_t high = LoadLittleEndianPrefix(digits + 8, bytes - 8, end);
    mantissa = absl::MakeUint128(high, low);
    if (mantissa >= Decimal::PowerOfTen(Decimal::kMaxDigits)) return nullptr;
    trailing_zero = mantissa % 10 == 0;
  }
  if (trailing_zero && scale != Decimal::kMinScale) return nullptr;
  payload_fast::Assign(out, Decimal::FromParts(negative, mantissa, scale));
  return digits + bytes;
}

}  // namespace

const char* ReadPayloadSlowPath(DataType type, const char* p, const char* end,
                                Datum* out) {
  if (type == DataType::kDecimal) return ReadDecimalFast(p, end, out);
  PayloadReader reader(absl::string_view(p, static_cast<size_t>(end - p)));
  if (!reader.Read(type, out).ok()) return nullptr;
  return p + reader.position();
}

absl::Status PayloadReader::Error(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(what, " at offset ", base_offset_ + pos_));
}

absl::Status PayloadReader::ReadVarint(absl::string_view what,
                                       uint64_t* value) {
  const size_t start = pos_;
  uint64_t result = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (start + i == size_) {
      return Error(
          i == 0 ? absl::StrCat("truncated ", what, " varint: expected a byte")
                 : absl::StrCat("truncated ", what,
                                " varint: expected a byte after ", i,
                                " continuation byte(s)"));
    }
    const uint8_t byte = static_cast<uint8_t>(data_[start + i]);
    result |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if (byte >= 0x80) continue;
    if (i > 0 && byte == 0) {
      return Error(absl::StrCat("non-canonical ", what, " varint: ", i + 1,
                                " bytes ending in a zero byte (overlong)"));
    }
    if (i == kMaxVarintBytes - 1 && byte > 1) {
      return Error(absl::StrCat(what, " varint over 64 bits: 10th byte 0x",
                                absl::Hex(byte, absl::kZeroPad2),
                                ", expected 0x01"));
    }
    pos_ = start + i + 1;
    *value = result;
    return absl::OkStatus();
  }
  return Error(
      absl::StrCat(what, " varint longer than ", kMaxVarintBytes, " bytes"));
}

absl::Status PayloadReader::ReadZigZag(DataType type, int64_t min, int64_t max,
                                       int64_t* value) {
  const size_t start = pos_;
  uint64_t raw;
  BACKFILL_RETURN_IF_ERROR(ReadVarint(DataTypeName(type), &raw));
  const int64_t decoded = ZigZagDecode(raw);
  if (decoded < min || decoded > max) {
    pos_ = start;
    return Error(absl::StrCat(DataTypeName(type), " value ", decoded,
                              " out of range [", min, ", ", max, "]"));
  }
  *value = decoded;
  return absl::OkStatus();
}

absl::Status PayloadReader::ReadDecimal(Datum* out) {
  const size_t start = pos_;
  uint8_t header;
  if (!ReadFixed(&header)) return Error("truncated decimal: expected header");
  const int kind = header >> 6;
  const bool negative = (header & 0x20) != 0;
  const int bytes = header & 0x1F;
  if (kind != kDecimalFinite) {
    if ((header & 0x3F) != 0) {
      pos_ = start;
      return Error(
          absl::StrCat("non-canonical decimal header 0x", absl::Hex(header)));
    }
    *out = kind == kDecimalNaN                ? Decimal::NaN()
           : kind == kDecimalPositiveInfinity ? Decimal::PositiveInfinity()
                                              : Decimal::NegativeInfinity();
    return absl::OkStatus();
  }
  int8_t scale;
  if (!ReadFixed(&scale)) return Error("truncated decimal: expected scale");
  if (bytes > 16) {
    pos_ = start;
    return Error(absl::StrCat("decimal mantissa of ", bytes, " bytes > 16"));
  }
  if (remaining() < static_cast<size_t>(bytes)) {
    return Error(
        absl::StrCat("truncated decimal: expected ", bytes, " mantissa bytes"));
  }
  absl::uint128 mantissa = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    mantissa = (mantissa << 8) | static_cast<uint8_t>(data_[pos_ + i]);
  }
  const bool top_zero =
      bytes > 0 && static_cast<uint8_t>(data_[pos_ + bytes - 1]) == 0;
  const size_t mantissa_pos = pos_;
  pos_ = start;
  if (top_zero)
    return Error("non-canonical decimal: mantissa has a zero top byte");
  if (mantissa >= Decimal::PowerOfTen(Decimal::kMaxDigits)) {
    return Error("decimal mantissa has more than 38 digits");
  }
  if (scale < Decimal::kMinScale || scale > Decimal::kMaxScale) {
    return Error(absl::StrCat("decimal scale ", scale, " out of range"));
  }
  if (mantissa == 0 && (negative || scale != 0)) {
    return Error("non-canonical decimal zero");
  }
  const bool trailing_zero = absl::Uint128High64(mantissa) == 0
                                 ? absl::Uint128Low64(mantissa) % 10 == 0
                                 : mantissa % 10 == 0;
  if (mantissa != 0 && trailing_zero && scale != Decimal::kMinScale) {
    return Error("non-normalised decimal mantissa (trailing zero)");
  }
  pos_ = mantissa_pos + bytes;
  *out = Decimal::FromParts(negative, mantissa, scale);
  return absl::OkStatus();
}

absl::Status PayloadReader::ReadInterval(Datum* out) {
  using Int32Limits = std::numeric_limits<int32_t>;
  using Int64Limits = std::numeric_limits<int64_t>;
  const size_t start = pos_;
  int64_t months, days, micros;
  absl::Status status = ReadZigZag(DataType::kInterval, Int32Limits::min(),
                                   Int32Limits::max(), &months);
  if (status.ok()) {
    status = ReadZigZag(DataType::kInterval, Int32Limits::min(),
                        Int32Limits::max(), &days);
  }
  if (status.ok()) {
    status = ReadZigZag(DataType::kInterval, Int64Limits::min(),
                        Int64Limits::max(), &micros);
  }
  if (!status.ok()) {
    // Keep the offset of the failing varint in the message; restart the
    // datum.
    pos_ = start;
    return status;
  }
  *out = Interval{static_cast<int32_t>(months), static_cast<int32_t>(days),
                  micros};
  return absl::OkStatus();
}

absl::Status PayloadReader::Read(DataType type, Datum* out) {
  switch (type) {
    case DataType::kBoolean: {
      uint8_t b;
      if (!ReadFixed(&b)) return Error("truncated BOOLEAN");
      if (b > 1) {
        --pos_;
        return Error(absl::StrCat("BOOLEAN byte ", b, " is not 0 or 1"));
      }
      *out = b == 1;
      return absl::OkStatus();
    }
    case DataType::kFloat32: {
      float v;
      if (!ReadFixed(&v)) return Error("truncated FLOAT32: expected 4 bytes");
      *out = v;
      return absl::OkStatus();
    }
    case DataType::kFloat64: {
      double v;
      if (!ReadFixed(&v)) return Error("truncated FLOAT64: expected 8 bytes");
      *out = v;
      return absl::OkStatus();
    }
// VALUE: the datum built from `v`, already range-checked for CPP_TYPE.
#define BACKFILL_READ_ZIGZAG_(TYPE_ENUM, CPP_TYPE, VALUE)      \
  case DataType::TYPE_ENUM: {                                  \
    int64_t v;                                                 \
    BACKFILL_RETURN_IF_ERROR(                                  \
        ReadZigZag(type, std::numeric_limits<CPP_TYPE>::min(), \
                   std::numeric_limits<CPP_TYPE>::max(), &v)); \
    *out = VALUE;                                              \
    return absl::OkStatus();                                   \
  }
      BACKFILL_READ_ZIGZAG_(kInt16, int16_t, static_cast<int16_t>(v))
      BACKFILL_READ_ZIGZAG_(kInt32, int32_t, static_cast<int32_t>(v))
      BACKFILL_READ_ZIGZAG_(kInt64, int64_t, v)
      BACKFILL_READ_ZIGZAG_(kDate, int32_t, Date{static_cast<int32_t>(v)})
      BACKFILL_READ_ZIGZAG_(kTime, int64_t, TimeOfDay{v})
      BACKFILL_READ_ZIGZAG_(kTimestamp, int64_t, Timestamp{v})
      BACKFILL_READ_ZIGZAG_(kTimestamptz, int64_t, Timestamptz{v})
      BACKFILL_READ_ZIGZAG_(kSerial, int64_t, Serial{v})
#undef BACKFILL_READ_ZIGZAG_
    case DataType::kDecimal:
      return ReadDecimal(out);
    case DataType::kInterval:
      return ReadInterval(out);
    case DataType::kInt256: {
      if (remaining() < 32) return Error("truncated INT256: expected 32 bytes");
      *out = Int256::FromLittleEndian(data_ + pos_);
      pos_ += 32;
      return absl::OkStatus();
    }
    case DataType::kList:
    case DataType::kStruct:
    case DataType::kJsonb:
    case DataType::kMap:
      break;  // internal/nested_payload reads these
    case DataType::kVarchar:
    case DataType::kBytea: {
      const size_t start = pos_;
      uint64_t length;
      BACKFILL_RETURN_IF_ERROR(ReadVarint(
          type == DataType::kVarchar ? "VARCHAR length" : "BYTEA length",
          &length));
      if (const size_t left = remaining(); left < length) {
        pos_ = start;
        return Error(absl::StrCat("string of length ", length, " but only ",
                                  left, " bytes left"));
      }
      AssignString(out, data_ + pos_, static_cast<size_t>(length));
      pos_ += static_cast<size_t>(length);
      return absl::OkStatus();
    }
  }
  return Error("unknown data type");
}

}  // namespace serde_internal
}  // namespace backfill
