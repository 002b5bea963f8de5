#include "serde/memcmp_codec.h"

#include <array>
#include <cassert>
#include <cmath>
#include <cstring>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "serde/decimal.h"
#include "serde/internal/decimal_key.h"
#include "serde/internal/key_reader.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

using serde_internal::KeyReader;

constexpr uint64_t kCanonicalNaN64 = 0x7FF8000000000000ULL;
constexpr uint32_t kCanonicalNaN32 = 0x7FC00000U;

// The tag of NULL in the ascending form, before a DESC complement. NULL must
// come out last for ASC NULLS LAST; a DESC column complements the tag, so its
// NULLS FIRST needs the ascending NULL tag to be the larger one too.
inline uint8_t NullTag(OrderType order) {
  return order.nulls_first() == order.is_descending() ? 1 : 0;
}

template <int kBytes>
inline void AppendBigEndian(uint64_t value, char* out) {
  for (int i = kBytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(static_cast<uint8_t>(value));
    value >>= 8;
  }
}

// Sign-flipped big-endian two's complement: order of unsigned bytes equals
// the order of the signed values.
template <int kBytes>
inline void AppendSigned(int64_t value, char tag, std::string* out) {
  char buffer[1 + kBytes];
  buffer[0] = tag;
  const uint64_t flipped =
      static_cast<uint64_t>(value) ^ (uint64_t{1} << (8 * kBytes - 1));
  AppendBigEndian<kBytes>(flipped, buffer + 1);
  out->append(buffer, sizeof(buffer));
}

inline uint64_t OrderedDoubleBits(double value) {
  uint64_t bits;
  if (std::isnan(value)) {
    bits = kCanonicalNaN64;
  } else if (value == 0) {
    bits = 0;  // -0.0 encodes as 0.0
  } else {
    std::memcpy(&bits, &value, sizeof(bits));
  }
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

inline uint32_t OrderedFloatBits(float value) {
  uint32_t bits;
  if (std::isnan(value)) {
    bits = kCanonicalNaN32;
  } else if (value == 0) {
    bits = 0;
  } else {
    std::memcpy(&bits, &value, sizeof(bits));
  }
  return (bits >> 31) != 0 ? ~bits : bits | (uint32_t{1} << 31);
}

// Strings: 0x00 if empty; else 0x01 then 8-byte groups, zero-padded, each
// followed by a marker: 9 = more groups follow, 1..8 = last group with that
// many significant bytes (RisingWave's memcomparable format).
void AppendStringBody(absl::string_view s, std::string* out) {
  if (s.empty()) {
    out->push_back(0);
    return;
  }
  const size_t groups = (s.size() + 7) / 8;
  const size_t start = out->size();
  out->resize(start + 1 + groups * 9);
  char* p = out->data() + start;
  *p++ = 1;
  size_t remaining = s.size();
  const char* src = s.data();
  while (remaining > 8) {
    std::memcpy(p, src, 8);
    p[8] = 9;
    p += 9;
    src += 8;
    remaining -= 8;
  }
  std::memcpy(p, src, remaining);
  std::memset(p + remaining, 0, 8 - remaining);
  p[8] = static_cast<char>(remaining);
}

// INTERVAL: its span (months x 30 days + days + microseconds, an int128) as
// 16 bytes sign-flipped BE, so equal intervals ('1 mon', '30 days') encode
// equally and decode to IntervalFromSpan's representative.
void AppendInterval(const Interval& value, char tag, std::string* out) {
  const absl::int128 span = IntervalSpan(value);
  char buffer[17];
  buffer[0] = tag;
  AppendBigEndian<8>(
      static_cast<uint64_t>(absl::Int128High64(span)) ^ (uint64_t{1} << 63),
      buffer + 1);
  AppendBigEndian<8>(absl::Int128Low64(span), buffer + 9);
  out->append(buffer, sizeof(buffer));
}

// INT256: 32 bytes sign-flipped BE.
void AppendInt256(const Int256& value, char tag, std::string* out) {
  char buffer[33];
  buffer[0] = tag;
  for (int word = 0; word < 4; ++word) {
    uint64_t bits = value.words()[3 - word];
    if (word == 0) bits ^= uint64_t{1} << 63;
    AppendBigEndian<8>(bits, buffer + 1 + 8 * word);
  }
  out->append(buffer, sizeof(buffer));
}

void AppendAscending(const Datum& datum, DataType type, uint8_t non_null_tag,
                     std::string* out) {
  const char tag = static_cast<char>(non_null_tag);
  switch (type) {
    case DataType::kBoolean: {
      const char buffer[2] = {tag,
                              static_cast<char>(std::get<bool>(datum) ? 1 : 0)};
      out->append(buffer, 2);
      return;
    }
    case DataType::kInt16:
      return AppendSigned<2>(std::get<int16_t>(datum), tag, out);
    case DataType::kInt32:
      return AppendSigned<4>(std::get<int32_t>(datum), tag, out);
    case DataType::kInt64:
      return AppendSigned<8>(std::get<int64_t>(datum), tag, out);
    case DataType::kDate:
      return AppendSigned<4>(std::get<Date>(datum).days, tag, out);
    case DataType::kTime:
      return AppendSigned<8>(std::get<TimeOfDay>(datum).micros, tag, out);
    case DataType::kTimestamp:
      return AppendSigned<8>(std::get<Timestamp>(datum).micros, tag, out);
    case DataType::kFloat32: {
      char buffer[5];
      buffer[0] = tag;
      AppendBigEndian<4>(OrderedFloatBits(std::get<float>(datum)), buffer + 1);
      out->append(buffer, 5);
      return;
    }
    case DataType::kFloat64: {
      char buffer[9];
      buffer[0] = tag;
      AppendBigEndian<8>(OrderedDoubleBits(std::get<double>(datum)),
                         buffer + 1);
      out->append(buffer, 9);
      return;
    }
    case DataType::kDecimal:
      out->push_back(tag);
      return serde_internal::AppendDecimalKey(std::get<Decimal>(datum), out);
    case DataType::kVarchar:
    case DataType::kBytea:
      out->push_back(tag);
      return AppendStringBody(std::get<std::string>(datum), out);
    case DataType::kTimestamptz:
      return AppendSigned<8>(std::get<Timestamptz>(datum).micros, tag, out);
    case DataType::kSerial:
      return AppendSigned<8>(std::get<Serial>(datum).value, tag, out);
    case DataType::kInterval:
      return AppendInterval(std::get<Interval>(datum), tag, out);
    case DataType::kInt256:
      return AppendInt256(std::get<Int256>(datum), tag, out);
    case DataType::kList:
    case DataType::kStruct:
      // EncodeKeyDatum(DataType) never passes them; AppendTyped handles them.
      assert(false && "nested type without its ColumnType");
      return;
    case DataType::kJsonb:
    case DataType::kMap:
      assert(false && "JSONB and MAP are not key types");
      return;
  }
}

template <int kBytes>
absl::Status ReadSigned(KeyReader& reader, int64_t* value) {
  uint64_t raw;
  if (!reader.ReadBigEndian<kBytes>(&raw)) {
    return reader.Truncated(absl::StrCat(kBytes, " value bytes"));
  }
  raw ^= uint64_t{1} << (8 * kBytes - 1);
  if constexpr (kBytes == 8) {
    *value = static_cast<int64_t>(raw);
  } else {
    // Sign-extend.
    const int shift = 64 - 8 * kBytes;
    *value = static_cast<int64_t>(raw << shift) >> shift;
  }
  return absl::OkStatus();
}

absl::Status ReadString(KeyReader& reader, Datum* out) {
  const size_t start = reader.position();
  uint8_t flag;
  if (!reader.ReadByte(&flag)) return reader.Truncated("string flag");
  if (flag == 0) {
    if (auto* s = std::get_if<std::string>(out)) {
      s->clear();
    } else {
      out->emplace<std::string>();
    }
    return absl::OkStatus();
  }
  if (flag != 1) {
    return reader.Error(absl::StrCat("string flag ", flag, " is not 0 or 1"),
                        start);
  }
  std::string* s = std::get_if<std::string>(out);
  if (s == nullptr) s = &out->emplace<std::string>();
  s->clear();
  const uint8_t mask = reader.mask();
  while (true) {
    if (reader.remaining() < 9)
      return reader.Truncated("a 9-byte string group");
    const uint8_t* group = reader.current();
    const size_t group_offset = reader.position();
    const uint8_t marker = group[8] ^ mask;
    if (marker == 0 || marker > 9) {
      return reader.Error(
          absl::StrCat("string group marker ", marker, " is not in 1..9"),
          group_offset + 8);
    }
    const size_t length = marker == 9 ? 8 : marker;
    const size_t old_size = s->size();
    s->resize(old_size + length);
    char* dst = s->data() + old_size;
    for (size_t i = 0; i < length; ++i)
      dst[i] = static_cast<char>(group[i] ^ mask);
    for (size_t i = length; i < 8; ++i) {
      if ((group[i] ^ mask) != 0) {
        return reader.Error("non-zero string group padding", group_offset + i);
      }
    }
    reader.Advance(9);
    if (marker != 9) return absl::OkStatus();
  }
}

absl::Status ReadFloat64(KeyReader& reader, Datum* out) {
  const size_t start = reader.position();
  uint64_t u;
  if (!reader.ReadBigEndian<8>(&u)) return reader.Truncated("8 FLOAT64 bytes");
  const uint64_t bits = (u >> 63) != 0 ? u & ~(uint64_t{1} << 63) : ~u;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  if (bits == (uint64_t{1} << 63) ||
      (std::isnan(value) && bits != kCanonicalNaN64)) {
    return reader.Error("non-canonical FLOAT64 (-0.0 or a non-canonical NaN)",
                        start);
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadFloat32(KeyReader& reader, Datum* out) {
  const size_t start = reader.position();
  uint64_t u64;
  if (!reader.ReadBigEndian<4>(&u64))
    return reader.Truncated("4 FLOAT32 bytes");
  const uint32_t u = static_cast<uint32_t>(u64);
  const uint32_t bits = (u >> 31) != 0 ? u & ~(uint32_t{1} << 31) : ~u;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  if (bits == (uint32_t{1} << 31) ||
      (std::isnan(value) && bits != kCanonicalNaN32)) {
    return reader.Error("non-canonical FLOAT32 (-0.0 or a non-canonical NaN)",
                        start);
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadInterval(KeyReader& reader, Datum* out) {
  const size_t start = reader.position();
  uint64_t high, low;
  if (!reader.ReadBigEndian<8>(&high) || !reader.ReadBigEndian<8>(&low)) {
    return reader.Truncated("16 INTERVAL bytes");
  }
  const absl::int128 span =
      absl::MakeInt128(static_cast<int64_t>(high ^ (uint64_t{1} << 63)), low);
  const std::optional<Interval> value = IntervalFromSpan(span);
  if (!value.has_value()) {
    return reader.Error("INTERVAL span outside the representable range", start);
  }
  *out = *value;
  return absl::OkStatus();
}

absl::Status ReadInt256(KeyReader& reader, Datum* out) {
  std::array<uint64_t, 4> words;
  for (int word = 0; word < 4; ++word) {
    if (!reader.ReadBigEndian<8>(&words[3 - word])) {
      return reader.Truncated("32 INT256 bytes");
    }
  }
  words[3] ^= uint64_t{1} << 63;
  *out = Int256::FromWords(words);
  return absl::OkStatus();
}

// The value bytes of a scalar `type` (after its non-NULL tag).
absl::Status ReadScalarValue(KeyReader& reader, DataType type, Datum* out) {
  const size_t start = reader.position();
  int64_t value = 0;
  switch (type) {
    case DataType::kBoolean: {
      uint8_t b;
      if (!reader.ReadByte(&b)) return reader.Truncated("a BOOLEAN byte");
      if (b > 1) {
        return reader.Error(absl::StrCat("BOOLEAN byte ", b, " is not 0 or 1"),
                            reader.position() - 1);
      }
      *out = b == 1;
      return absl::OkStatus();
    }
    case DataType::kInt16:
      if (auto s = ReadSigned<2>(reader, &value); !s.ok()) return s;
      *out = static_cast<int16_t>(value);
      return absl::OkStatus();
    case DataType::kInt32:
      if (auto s = ReadSigned<4>(reader, &value); !s.ok()) return s;
      *out = static_cast<int32_t>(value);
      return absl::OkStatus();
    case DataType::kInt64:
      if (auto s = ReadSigned<8>(reader, &value); !s.ok()) return s;
      *out = value;
      return absl::OkStatus();
    case DataType::kDate:
      if (auto s = ReadSigned<4>(reader, &value); !s.ok()) return s;
      *out = Date{static_cast<int32_t>(value)};
      return absl::OkStatus();
    case DataType::kTime:
      if (auto s = ReadSigned<8>(reader, &value); !s.ok()) return s;
      *out = TimeOfDay{value};
      return absl::OkStatus();
    case DataType::kTimestamp:
      if (auto s = ReadSigned<8>(reader, &value); !s.ok()) return s;
      *out = Timestamp{value};
      return absl::OkStatus();
    case DataType::kFloat32:
      return ReadFloat32(reader, out);
    case DataType::kFloat64:
      return ReadFloat64(reader, out);
    case DataType::kDecimal:
      return serde_internal::ReadDecimalKey(reader, out);
    case DataType::kVarchar:
    case DataType::kBytea:
      return ReadString(reader, out);
    case DataType::kTimestamptz:
      if (auto s = ReadSigned<8>(reader, &value); !s.ok()) return s;
      *out = Timestamptz{value};
      return absl::OkStatus();
    case DataType::kSerial:
      if (auto s = ReadSigned<8>(reader, &value); !s.ok()) return s;
      *out = Serial{value};
      return absl::OkStatus();
    case DataType::kInterval:
      return ReadInterval(reader, out);
    case DataType::kInt256:
      return ReadInt256(reader, out);
    case DataType::kJsonb:
    case DataType::kMap:
      return absl::InvalidArgumentError(absl::StrCat(
          "memcmp key: column of type ", DataTypeName(type),
          ": JSONB and MAP are not key types (ValidateKeyColumnType)"));
    case DataType::kList:
    case DataType::kStruct:
      break;
  }
  return reader.Error(
      "a LIST or STRUCT key column needs its ColumnType (DecodeKeyDatum)",
      start);
}

// A datum's tag under `order` (NULL, or the non-NULL tag then the value).
template <typename ReadValue>
absl::Status ReadTagged(KeyReader& reader, uint8_t null_tag, Datum* out,
                        ReadValue read_value) {
  const size_t start = reader.position();
  uint8_t tag;
  if (!reader.ReadByte(&tag)) return reader.Truncated("a null tag");
  if (tag == null_tag) {
    out->emplace<std::monostate>();
    return absl::OkStatus();
  }
  if (tag != 1 - null_tag) {
    return reader.Error(absl::StrCat("null tag ", tag, " is not 0 or 1"),
                        start);
  }
  return read_value();
}

absl::Status ReadDatum(KeyReader& reader, DataType type, OrderType order,
                       Datum* out) {
  return ReadTagged(reader, NullTag(order), out,
                    [&] { return ReadScalarValue(reader, type, out); });
}

// ---- Nested types ---------------------------------------------------------
// Inside a LIST or STRUCT every element and field is encoded in the ascending
// form of ASC NULLS LAST (NULL tag 0x01, non-NULL 0x00 then the value), so
// that nested NULLs sort above every value, as PostgreSQL orders arrays and
// records; a DESC column complements the whole encoding, nested parts
// included. A LIST is a 0x01 marker before each element and a 0x00 after the
// last (so a proper prefix sorts first and the empty list lowest); a STRUCT is
// its fields in order.

constexpr uint8_t kInnerNullTag = 0x01;
constexpr uint8_t kInnerValueTag = 0x00;
constexpr uint8_t kListElementMarker = 0x01;
constexpr uint8_t kListEndMarker = 0x00;

void AppendTyped(const Datum& datum, const ColumnType& type,
                 uint8_t non_null_tag, std::string* out);

void AppendInner(const Datum& datum, const ColumnType& type, std::string* out) {
  if (IsNull(datum)) {
    out->push_back(static_cast<char>(kInnerNullTag));
  } else {
    AppendTyped(datum, type, kInnerValueTag, out);
  }
}

// The ascending form of non-NULL `datum` of any type.
void AppendTyped(const Datum& datum, const ColumnType& type,
                 uint8_t non_null_tag, std::string* out) {
  switch (type.id()) {
    case DataType::kList:
      out->push_back(static_cast<char>(non_null_tag));
      for (const Datum& element : std::get<ListValue>(datum).elements) {
        out->push_back(static_cast<char>(kListElementMarker));
        AppendInner(element, type.element(), out);
      }
      out->push_back(static_cast<char>(kListEndMarker));
      return;
    case DataType::kStruct: {
      out->push_back(static_cast<char>(non_null_tag));
      const std::vector<Datum>& fields = std::get<StructValue>(datum).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        AppendInner(fields[i], type.fields()[i].type, out);
      }
      return;
    }
    default:
      AppendAscending(datum, type.id(), non_null_tag, out);
  }
}

absl::Status ReadTypedValue(KeyReader& reader, const ColumnType& type,
                            Datum* out);

absl::Status ReadInner(KeyReader& reader, const ColumnType& type, Datum* out) {
  return ReadTagged(reader, kInnerNullTag, out,
                    [&] { return ReadTypedValue(reader, type, out); });
}

// The value bytes of `type` (after its non-NULL tag).
absl::Status ReadTypedValue(KeyReader& reader, const ColumnType& type,
                            Datum* out) {
  switch (type.id()) {
    case DataType::kList: {
      ListValue list;
      while (true) {
        const size_t marker_offset = reader.position();
        uint8_t marker;
        if (!reader.ReadByte(&marker)) {
          return reader.Truncated("a LIST element marker");
        }
        if (marker == kListEndMarker) break;
        if (marker != kListElementMarker) {
          return reader.Error(
              absl::StrCat("LIST element marker ", marker, " is not 0 or 1"),
              marker_offset);
        }
        list.elements.emplace_back();
        BACKFILL_RETURN_IF_ERROR(
            ReadInner(reader, type.element(), &list.elements.back()));
      }
      *out = std::move(list);
      return absl::OkStatus();
    }
    case DataType::kStruct: {
      StructValue value;
      value.fields.resize(type.fields().size());
      for (size_t i = 0; i < value.fields.size(); ++i) {
        BACKFILL_RETURN_IF_ERROR(
            ReadInner(reader, type.fields()[i].type, &value.fields[i]));
      }
      *out = std::move(value);
      return absl::OkStatus();
    }
    default:
      return ReadScalarValue(reader, type.id(), out);
  }
}

// One key column of any key type: its tag under `order`, then its value.
absl::Status ReadKeyColumn(KeyReader& reader, const ColumnType& type,
                           OrderType order, Datum* out) {
  return ReadTagged(reader, NullTag(order), out,
                    [&] { return ReadTypedValue(reader, type, out); });
}

void ComplementFrom(size_t start, std::string* out) {
  char* p = out->data();
  for (size_t i = start; i < out->size(); ++i) p[i] = static_cast<char>(~p[i]);
}

// A whole key of `num_columns` columns must end where its last column does.
absl::Status CheckNoTrailingBytes(absl::string_view bytes, size_t consumed,
                                  size_t num_columns) {
  if (consumed == bytes.size()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "memcomparable key: ", bytes.size() - consumed, " trailing bytes after ",
      num_columns, " columns at offset ", consumed));
}

}  // namespace

void EncodeKeyDatum(const Datum& datum, DataType type, OrderType order,
                    std::string* out) {
  const size_t start = out->size();
  const uint8_t null_tag = NullTag(order);
  if (IsNull(datum)) {
    out->push_back(static_cast<char>(null_tag));
  } else if (DatumMatchesType(datum, type) && type != DataType::kList &&
             type != DataType::kStruct && type != DataType::kJsonb &&
             type != DataType::kMap) {
    AppendAscending(datum, type, 1 - null_tag, out);
  } else {
    assert(false &&
           "EncodeKeyDatum: datum does not match its column type, or a nested "
           "type without its ColumnType");
    out->push_back(static_cast<char>(null_tag));
  }
  if (order.is_descending()) ComplementFrom(start, out);
}

void EncodeKeyDatum(const Datum& datum, const ColumnType& type, OrderType order,
                    std::string* out) {
  const size_t start = out->size();
  const uint8_t null_tag = NullTag(order);
  if (IsNull(datum)) {
    out->push_back(static_cast<char>(null_tag));
  } else if (DatumMatchesColumnType(datum, type)) {
    AppendTyped(datum, type, 1 - null_tag, out);
  } else {
    assert(false && "EncodeKeyDatum: datum does not match its column type");
    out->push_back(static_cast<char>(null_tag));
  }
  if (order.is_descending()) ComplementFrom(start, out);
}

absl::StatusOr<size_t> DecodeKeyDatum(absl::string_view bytes,
                                      const ColumnType& type, OrderType order,
                                      Datum* out) {
  if (absl::Status status = ValidateKeyColumnType(type); !status.ok()) {
    return status;
  }
  KeyReader reader(bytes);
  reader.set_column(0, type.id(), order, &type);
  BACKFILL_RETURN_IF_ERROR(ReadKeyColumn(reader, type, order, out));
  return reader.position();
}

void EncodeKey(RowView row, absl::Span<const DataType> types,
               absl::Span<const OrderType> orders, std::string* out) {
  assert(row.size() == types.size() && types.size() == orders.size());
  for (size_t i = 0; i < row.size(); ++i) {
    EncodeKeyDatum(row[i], types[i], orders[i], out);
  }
}

absl::StatusOr<size_t> DecodeKeyPrefix(absl::string_view bytes,
                                       absl::Span<const DataType> types,
                                       absl::Span<const OrderType> orders,
                                       Row* out) {
  assert(types.size() == orders.size());
  KeyReader reader(bytes);
  out->resize(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    reader.set_column(i, types[i], orders[i]);
    if (absl::Status s = ReadDatum(reader, types[i], orders[i], &(*out)[i]);
        !s.ok()) {
      return s;
    }
  }
  return reader.position();
}

absl::StatusOr<Row> DecodeKey(absl::string_view bytes,
                              absl::Span<const DataType> types,
                              absl::Span<const OrderType> orders) {
  Row row;
  BACKFILL_ASSIGN_OR_RETURN(const size_t consumed,
                            DecodeKeyPrefix(bytes, types, orders, &row));
  BACKFILL_RETURN_IF_ERROR(CheckNoTrailingBytes(bytes, consumed, types.size()));
  return row;
}

std::optional<std::string> NextKey(absl::string_view bytes) {
  size_t end = bytes.size();
  while (end > 0 && static_cast<uint8_t>(bytes[end - 1]) == 0xFF) --end;
  if (end == 0) return std::nullopt;
  std::string next(bytes.substr(0, end));
  next.back() = static_cast<char>(static_cast<uint8_t>(next.back()) + 1);
  return next;
}

namespace {

// DecodeKeyPrefix over whole column types (nested ones included).
absl::StatusOr<size_t> DecodeColumnsPrefix(
    absl::string_view bytes, absl::Span<const ColumnType> types,
    absl::Span<const OrderType> orders, Row* out) {
  assert(types.size() == orders.size());
  KeyReader reader(bytes);
  out->resize(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    reader.set_column(i, types[i].id(), orders[i], &types[i]);
    BACKFILL_RETURN_IF_ERROR(
        ReadKeyColumn(reader, types[i], orders[i], &(*out)[i]));
  }
  return reader.position();
}

}  // namespace

absl::StatusOr<KeySerde> KeySerde::Create(std::vector<DataType> types,
                                          std::vector<OrderType> orders) {
  if (types.size() != orders.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KeySerde: ", types.size(), " types but ", orders.size(), " orders"));
  }
  std::vector<ColumnType> column_types;
  column_types.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == DataType::kJsonb || types[i] == DataType::kMap) {
      return absl::InvalidArgumentError(absl::StrCat(
          "KeySerde: column ", i, " is a ", DataTypeName(types[i]),
          ", which cannot be in a key (it has no SQL order; "
          "ValidateKeyColumnType)"));
    }
    if (types[i] == DataType::kList || types[i] == DataType::kStruct) {
      return absl::InvalidArgumentError(absl::StrCat(
          "KeySerde: column ", i, " is a ", DataTypeName(types[i]),
          ", which needs its ColumnType (KeySerde::CreateFromColumnTypes)"));
    }
    column_types.emplace_back(types[i]);
  }
  return KeySerde(std::move(column_types), std::move(orders));
}

absl::StatusOr<KeySerde> KeySerde::CreateFromColumnTypes(
    std::vector<ColumnType> types, std::vector<OrderType> orders) {
  if (types.size() != orders.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KeySerde: ", types.size(), " types but ", orders.size(), " orders"));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    absl::Status status = ValidateColumnType(types[i]);
    if (status.ok()) status = ValidateKeyColumnType(types[i]);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("KeySerde: column ", i, " (",
                       types[i].DebugString(), "): ", status.message()));
    }
  }
  return KeySerde(std::move(types), std::move(orders));
}

KeySerde::KeySerde(std::vector<ColumnType> column_types,
                   std::vector<OrderType> orders)
    : column_types_(std::move(column_types)), orders_(std::move(orders)) {
  types_.reserve(column_types_.size());
  for (const ColumnType& type : column_types_) {
    types_.push_back(type.id());
    if (type.is_nested()) has_nested_ = true;
  }
}

KeySerde KeySerde::Prefix(size_t num_columns) const {
  assert(num_columns <= types_.size());
  return KeySerde(std::vector<ColumnType>(column_types_.begin(),
                                          column_types_.begin() + num_columns),
                  std::vector<OrderType>(orders_.begin(),
                                         orders_.begin() + num_columns));
}

void KeySerde::SerializeNested(RowView row, std::string* out) const {
  assert(row.size() == column_types_.size());
  for (size_t i = 0; i < row.size(); ++i) {
    EncodeKeyDatum(row[i], column_types_[i], orders_[i], out);
  }
}

absl::StatusOr<Row> KeySerde::Deserialize(absl::string_view bytes) const {
  Row row;
  BACKFILL_ASSIGN_OR_RETURN(const size_t consumed,
                            DecodePrefix(bytes, num_columns(), &row));
  BACKFILL_RETURN_IF_ERROR(
      CheckNoTrailingBytes(bytes, consumed, num_columns()));
  return row;
}

absl::StatusOr<size_t> KeySerde::DecodePrefix(absl::string_view bytes,
                                              size_t num_columns,
                                              Row* out) const {
  assert(num_columns <= types_.size());
  if (!has_nested_) {
    return DecodeKeyPrefix(bytes, types().first(num_columns),
                           orders().first(num_columns), out);
  }
  return DecodeColumnsPrefix(bytes, column_types().first(num_columns),
                             orders().first(num_columns), out);
}

std::string KeySerde::DebugString() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < column_types_.size(); ++i) {
    parts.push_back(absl::StrCat(column_types_[i].DebugString(), " ",
                                 orders_[i].DebugString()));
  }
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

}  // namespace backfill
