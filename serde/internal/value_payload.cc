#include "serde/internal/value_payload.h"

#include <bit>
#include <cassert>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"

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

template <typename T>
void AppendFixed(T value, std::string* out) {
  char buffer[sizeof(T)];
  std::memcpy(buffer, &value, sizeof(T));
  out->append(buffer, sizeof(T));
}

}  // namespace

int FixedPayloadSize(DataType type) {
  switch (type) {
    case DataType::kBoolean:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat64:
      return 8;
    case DataType::kDate:
      return 4;
    case DataType::kTime:
      return 8;
    case DataType::kTimestamp:
      return 8;
    case DataType::kDecimal:
    case DataType::kVarchar:
    case DataType::kBytea:
      return 0;
  }
  return 0;
}

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
  }
  return -1;
}

namespace {

template <typename T>
inline char* Put(T value, char* p) {
  std::memcpy(p, &value, sizeof(T));
  return p + sizeof(T);
}

}  // namespace

char* WritePayload(const Datum& datum, char* p) {
  switch (datum.index()) {
    case 1:
      *p = *std::get_if<bool>(&datum) ? 1 : 0;
      return p + 1;
    case 2:
      return Put(*std::get_if<int16_t>(&datum), p);
    case 3:
      return Put(*std::get_if<int32_t>(&datum), p);
    case 4:
      return Put(*std::get_if<int64_t>(&datum), p);
    case 5:
      return Put(*std::get_if<float>(&datum), p);
    case 6:
      return Put(*std::get_if<double>(&datum), p);
    case 7: {
      const Decimal& value = *std::get_if<Decimal>(&datum);
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
      absl::uint128 mantissa = value.mantissa();
      const int bytes = MantissaBytes(mantissa);
      p[0] = static_cast<char>((kDecimalFinite << 6) |
                               (value.negative() ? 0x20 : 0) | bytes);
      p[1] = static_cast<char>(static_cast<int8_t>(value.scale()));
      p += 2;
      if (absl::Uint128High64(mantissa) == 0) {
        uint64_t low = absl::Uint128Low64(mantissa);
        for (int i = 0; i < bytes; ++i, low >>= 8)
          p[i] = static_cast<char>(low);
      } else {
        for (int i = 0; i < bytes; ++i, mantissa >>= 8) {
          p[i] = static_cast<char>(static_cast<uint8_t>(mantissa));
        }
      }
      return p + bytes;
    }
    case 8: {
      const std::string& s = *std::get_if<std::string>(&datum);
      p = Put(static_cast<uint32_t>(s.size()), p);
      std::memcpy(p, s.data(), s.size());
      return p + s.size();
    }
    case 9:
      return Put(std::get_if<Date>(&datum)->days, p);
    case 10:
      return Put(std::get_if<TimeOfDay>(&datum)->micros, p);
    case 11:
      return Put(std::get_if<Timestamp>(&datum)->micros, p);
  }
  assert(false && "WritePayload of NULL");
  return p;
}

size_t PayloadSize(const Datum& datum, DataType type) {
  if (const int fixed = FixedPayloadSize(type); fixed != 0) return fixed;
  if (type == DataType::kDecimal) {
    return DecimalPayloadSize(std::get<Decimal>(datum));
  }
  return 4 + std::get<std::string>(datum).size();
}

void AppendPayload(const Datum& datum, DataType type, std::string* out) {
  assert(!IsNull(datum) && DatumMatchesType(datum, type));
  switch (type) {
    case DataType::kBoolean:
      out->push_back(std::get<bool>(datum) ? 1 : 0);
      return;
    case DataType::kInt16:
      return AppendFixed(std::get<int16_t>(datum), out);
    case DataType::kInt32:
      return AppendFixed(std::get<int32_t>(datum), out);
    case DataType::kInt64:
      return AppendFixed(std::get<int64_t>(datum), out);
    case DataType::kFloat32:
      return AppendFixed(std::get<float>(datum), out);
    case DataType::kFloat64:
      return AppendFixed(std::get<double>(datum), out);
    case DataType::kDecimal:
      return AppendDecimalPayload(std::get<Decimal>(datum), out);
    case DataType::kVarchar:
    case DataType::kBytea: {
      const std::string& s = std::get<std::string>(datum);
      AppendFixed(static_cast<uint32_t>(s.size()), out);
      out->append(s);
      return;
    }
    case DataType::kDate:
      return AppendFixed(std::get<Date>(datum).days, out);
    case DataType::kTime:
      return AppendFixed(std::get<TimeOfDay>(datum).micros, out);
    case DataType::kTimestamp:
      return AppendFixed(std::get<Timestamp>(datum).micros, out);
  }
}

bool ReadPayloadSlowPath(DataType type, const char*& p, const char* end,
                         Datum* out) {
  PayloadReader reader(absl::string_view(p, static_cast<size_t>(end - p)));
  if (!reader.Read(type, out).ok()) return false;
  p += reader.position();
  return true;
}

absl::Status PayloadReader::Error(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(what, " at offset ", base_offset_ + pos_));
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
#define BACKFILL_READ_FIXED_(TYPE_ENUM, CPP_TYPE, WRAP)                   \
  case DataType::TYPE_ENUM: {                                             \
    CPP_TYPE v;                                                           \
    if (!ReadFixed(&v)) return Error("truncated " #TYPE_ENUM " payload"); \
    *out = WRAP;                                                          \
    return absl::OkStatus();                                              \
  }
      BACKFILL_READ_FIXED_(kInt16, int16_t, v)
      BACKFILL_READ_FIXED_(kInt32, int32_t, v)
      BACKFILL_READ_FIXED_(kInt64, int64_t, v)
      BACKFILL_READ_FIXED_(kFloat32, float, v)
      BACKFILL_READ_FIXED_(kFloat64, double, v)
      BACKFILL_READ_FIXED_(kDate, int32_t, Date{v})
      BACKFILL_READ_FIXED_(kTime, int64_t, TimeOfDay{v})
      BACKFILL_READ_FIXED_(kTimestamp, int64_t, Timestamp{v})
#undef BACKFILL_READ_FIXED_
    case DataType::kDecimal:
      return ReadDecimal(out);
    case DataType::kVarchar:
    case DataType::kBytea: {
      uint32_t length;
      if (!ReadFixed(&length)) return Error("truncated string length");
      if (const size_t left = remaining(); left < length) {
        pos_ -= 4;
        return Error(absl::StrCat("string of length ", length, " but only ",
                                  left, " bytes left"));
      }
      AssignString(out, data_ + pos_, length);
      pos_ += length;
      return absl::OkStatus();
    }
  }
  return Error("unknown data type");
}

}  // namespace serde_internal
}  // namespace backfill
