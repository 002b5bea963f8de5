// Value payloads: the byte form of one non-NULL datum inside a value row
// (positional and column-aware codecs) and in the vnode hash of decimals.
// Layouts are specified in serde/FORMAT.md §2 (never change: persisted):
// integers, dates and times are zigzag LEB128 varints, string lengths LEB128
// varints, floats 4 / 8 bytes LE, decimals a compact header + mantissa form.
//
//   std::string out;
//   AppendPayload(int64_t{7}, DataType::kInt64, &out);   // "0e" (zigzag 14)
//   PayloadReader reader(out); Datum d; reader.Read(DataType::kInt64, &d);
#ifndef SERDE_INTERNAL_VALUE_PAYLOAD_H_
#define SERDE_INTERNAL_VALUE_PAYLOAD_H_

#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/decimal.h"

namespace backfill {
namespace serde_internal {

static_assert(std::endian::native == std::endian::little,
              "serde encodes little-endian payloads with memcpy");

// ---- Varints -----------------------------------------------------------
// LEB128: 7 bits per byte, least significant group first, bit 7 set on every
// byte but the last. Canonical: the shortest form (the last byte of a
// multi-byte varint is not 0), at most 10 bytes, at most 64 bits (a 10th byte
// is 0 or 1). Signed values are zigzag-mapped first (0, -1, 1, -2, ... ->
// 0, 1, 2, 3, ...), so small magnitudes of either sign are short.

inline constexpr int kMaxVarintBytes = 10;

inline constexpr uint64_t ZigZagEncode(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^
         static_cast<uint64_t>(value >> 63);
}
inline constexpr int64_t ZigZagDecode(uint64_t value) {
  return static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

// Bytes of the varint of `value`: 1..10.
inline constexpr size_t VarintSize(uint64_t value) {
  return (static_cast<size_t>(std::bit_width(value | 1)) + 6) / 7;
}

// Writes the varint of `value` at `p` (room for VarintSize(value) bytes) and
// returns the end.
inline char* WriteVarint(uint64_t value, char* p) {
  while (value >= 0x80) {
    *p++ = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<char>(value);
  return p;
}

// As WriteVarint, but `p` must have room for max(8, VarintSize(value))
// bytes: values below 2^56 (up to 8 varint bytes) are spread into 7-bit
// groups with shifts and masks and stored with one 8-byte write (bytes past
// the varint are scratch, overwritten by whatever the caller writes next).
inline char* WriteVarintWide(uint64_t value, char* p) {
  if (ABSL_PREDICT_FALSE(value >> 56 != 0)) return WriteVarint(value, p);
  const size_t size = VarintSize(value);
  uint64_t x = value;
  x = ((x & 0x00FFFFFFF0000000ULL) << 4) | (x & 0x000000000FFFFFFFULL);
  x = ((x & 0x0FFFC0000FFFC000ULL) << 2) | (x & 0x00003FFF00003FFFULL);
  x = ((x & 0x3F803F803F803F80ULL) << 1) | (x & 0x007F007F007F007FULL);
  x |= 0x0080808080808080ULL >> (8 * (8 - size));  // continuation bits
  std::memcpy(p, &x, 8);
  return p + size;
}

// Appends the payload of `datum`. REQUIRES: non-NULL and
// DatumMatchesType(datum, type).
void AppendPayload(const Datum& datum, DataType type, std::string* out);

// Appends the compact decimal form (header byte, scale byte, minimal LE
// mantissa); canonical: equal decimals give equal bytes. Also the vnode hash
// form of decimals: never change.
void AppendDecimalPayload(const Decimal& value, std::string* out);
size_t DecimalPayloadSize(const Decimal& value);

// The Datum alternative index that holds values of `type` (Datum's variant
// order: 1 bool .. 15 Int256; VARCHAR and BYTEA share 8).
int DatumIndexOf(DataType type);

// Bytes AppendPayload / WritePayload write for `datum`. REQUIRES: non-NULL,
// matches `type` (the size is chosen by the datum's alternative).
inline size_t PayloadSize(const Datum& datum, DataType type) {
  (void)type;
  switch (datum.index()) {
    case 1:
      return 1;
    case 2:
      return VarintSize(ZigZagEncode(*std::get_if<int16_t>(&datum)));
    case 3:
      return VarintSize(ZigZagEncode(*std::get_if<int32_t>(&datum)));
    case 4:
      return VarintSize(ZigZagEncode(*std::get_if<int64_t>(&datum)));
    case 5:
      return 4;
    case 6:
      return 8;
    case 7:
      return DecimalPayloadSize(*std::get_if<Decimal>(&datum));
    case 8: {
      const size_t size = std::get_if<std::string>(&datum)->size();
      return VarintSize(size) + size;
    }
    case 9:
      return VarintSize(ZigZagEncode(std::get_if<Date>(&datum)->days));
    case 10:
      return VarintSize(ZigZagEncode(std::get_if<TimeOfDay>(&datum)->micros));
    case 11:
      return VarintSize(ZigZagEncode(std::get_if<Timestamp>(&datum)->micros));
    case 12:
      return VarintSize(ZigZagEncode(std::get_if<Timestamptz>(&datum)->micros));
    case 13: {
      const Interval& v = *std::get_if<Interval>(&datum);
      return VarintSize(ZigZagEncode(v.months)) +
             VarintSize(ZigZagEncode(v.days)) +
             VarintSize(ZigZagEncode(v.micros));
    }
    case 14:
      return VarintSize(ZigZagEncode(std::get_if<Serial>(&datum)->value));
    case 15:
      return 32;
  }
  return 0;
}

// An upper bound of the payload size of non-NULL `datum` from its alternative
// alone, and the room WritePayload needs: the longest varint of the type
// (INT64, TIME, TIMESTAMP, TIMESTAMPTZ and SERIAL 10), but at least 8 for
// every varint type (INT16, INT32 and DATE too: WritePayload stores 8 bytes
// at once), 18 for decimals, 20 for intervals (three varints), 32 for
// INT256, exact for strings (varint length + bytes).
inline size_t PayloadSizeBound(const Datum& datum) {
  static constexpr uint8_t kBound[16] = {0, 1, 8,  8,  10, 4,  8,  18,
                                         0, 8, 10, 10, 10, 20, 10, 32};
  const size_t index = datum.index();
  if (index == 8) {
    const size_t size = std::get_if<std::string>(&datum)->size();
    return VarintSize(size) + size;
  }
  return kBound[index];
}

// The DECIMAL payload of `value` at `p`, which has room for 18 bytes (the
// bytes past the payload may be clobbered); returns its end.
char* WriteDecimalPayload(const Decimal& value, char* p);

// Writes the payload of non-NULL `datum` at `p`, which has room for
// PayloadSizeBound(datum) bytes, and returns the end of what it wrote (the
// bytes between the end and p + PayloadSizeBound(datum) may be clobbered).
// The payload is chosen by the datum's alternative (the caller has checked
// it against the column type).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline char* WritePayload(const Datum& datum,
                                                       char* p) {
  switch (datum.index()) {
    case 1:
      *p = *std::get_if<bool>(&datum) ? 1 : 0;
      return p + 1;
    case 2:
      return WriteVarintWide(ZigZagEncode(*std::get_if<int16_t>(&datum)), p);
    case 3:
      return WriteVarintWide(ZigZagEncode(*std::get_if<int32_t>(&datum)), p);
    case 4:
      return WriteVarintWide(ZigZagEncode(*std::get_if<int64_t>(&datum)), p);
    case 5:
      std::memcpy(p, std::get_if<float>(&datum), 4);
      return p + 4;
    case 6:
      std::memcpy(p, std::get_if<double>(&datum), 8);
      return p + 8;
    case 7:
      return WriteDecimalPayload(*std::get_if<Decimal>(&datum), p);
    case 8: {
      const std::string& s = *std::get_if<std::string>(&datum);
      p = WriteVarint(s.size(), p);
      std::memcpy(p, s.data(), s.size());
      return p + s.size();
    }
    case 9:
      return WriteVarintWide(ZigZagEncode(std::get_if<Date>(&datum)->days), p);
    case 10:
      return WriteVarintWide(
          ZigZagEncode(std::get_if<TimeOfDay>(&datum)->micros), p);
    case 11:
      return WriteVarintWide(
          ZigZagEncode(std::get_if<Timestamp>(&datum)->micros), p);
    case 12:
      return WriteVarintWide(
          ZigZagEncode(std::get_if<Timestamptz>(&datum)->micros), p);
    case 13: {
      const Interval& v = *std::get_if<Interval>(&datum);
      p = WriteVarint(ZigZagEncode(v.months), p);
      p = WriteVarint(ZigZagEncode(v.days), p);
      return WriteVarint(ZigZagEncode(v.micros), p);
    }
    case 14:
      return WriteVarintWide(ZigZagEncode(std::get_if<Serial>(&datum)->value),
                             p);
    case 15:
      std::get_if<Int256>(&datum)->ToLittleEndian(p);
      return p + 32;
  }
  assert(false && "WritePayload of NULL");
  return p;
}

// Writers that size their buffer exactly (with PayloadSize) keep this many
// spare bytes after it, for WritePayload's 8-byte stores.
inline constexpr size_t kWritePayloadSlack = 8;

// Sets *out to a string datum holding [data, data + size), reusing the
// existing string's capacity when *out already holds one.
inline void AssignString(Datum* out, const char* data, size_t size) {
  if (auto* s = std::get_if<std::string>(out)) {
    s->assign(data, size);
  } else {
    out->emplace<std::string>(data, size);
  }
}

namespace payload_fast {

template <typename T>
inline bool Take(const char*& p, const char* end, T* value) {
  if (static_cast<size_t>(end - p) < sizeof(T)) return false;
  std::memcpy(value, p, sizeof(T));
  p += sizeof(T);
  return true;
}

// Assigns a value of alternative T to *out, in place when it already holds T.
template <typename T>
inline void Assign(Datum* out, T value) {
  if (T* existing = std::get_if<T>(out)) {
    *existing = value;
  } else {
    out->emplace<T>(value);
  }
}

// A varint whose first byte (at *p) has bit 7 set: 2..10 bytes. False if it
// is truncated, not canonical, longer than 10 bytes or over 64 bits.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ReadVarintTail(const char*& p,
                                                        const char* end,
                                                        uint64_t* value) {
  if (ABSL_PREDICT_TRUE(end - p >= 8)) {
    // Up to 8 bytes at once: find the last byte (the first with bit 7 clear)
    // and gather the 7-bit groups with shifts and masks.
    uint64_t x;
    std::memcpy(&x, p, 8);
    const uint64_t stops = ~x & 0x8080808080808080ULL;
    if (ABSL_PREDICT_TRUE(stops != 0)) {
      const int bits = std::countr_zero(stops) + 1;  // 8 x length, 16..64
      x &= ~uint64_t{0} >> (64 - bits);
      if (ABSL_PREDICT_FALSE((x >> (bits - 8)) == 0)) return false;  // 0 last
      x &= 0x7F7F7F7F7F7F7F7FULL;
      x = ((x & 0x7F007F007F007F00ULL) >> 1) | (x & 0x007F007F007F007FULL);
      x = ((x & 0x3FFF00003FFF0000ULL) >> 2) | (x & 0x00003FFF00003FFFULL);
      x = ((x & 0x0FFFFFFF00000000ULL) >> 4) | (x & 0x000000000FFFFFFFULL);
      *value = x;
      p += bits / 8;
      return true;
    }
  }
  uint64_t result = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (p + i == end) return false;
    const uint64_t byte = static_cast<uint8_t>(p[i]);
    result |= (byte & 0x7F) << (7 * i);
    if (byte < 0x80) {
      if (byte == 0) return false;                             // overlong
      if (i == kMaxVarintBytes - 1 && byte > 1) return false;  // > 64 bits
      *value = result;
      p += i + 1;
      return true;
    }
  }
  return false;  // more than 10 bytes
}

// Reads one canonical varint from [*p, end) and advances *p; false on any
// problem. One byte (values < 128) is the inline fast path.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ReadVarint(const char*& p,
                                                    const char* end,
                                                    uint64_t* value) {
  if (ABSL_PREDICT_FALSE(p == end)) return false;
  const uint8_t first = static_cast<uint8_t>(*p);
  if (ABSL_PREDICT_TRUE(first < 0x80)) {
    *value = first;
    ++p;
    return true;
  }
  return ReadVarintTail(p, end, value);
}

// Where ReadPayloadInto puts the value it decodes. IntoDatum overwrites an
// existing Datum, in place when it already holds the type's alternative (a
// reused Row keeps its strings' capacity).
struct IntoDatum {
  Datum* out;
  template <typename T>
  void Set(T value) const {
    Assign(out, value);
  }
  void SetString(const char* data, size_t size) const {
    AssignString(out, data, size);
  }
  Datum* Slot() const { return out; }
};

// AppendTo constructs the value at the end of a column (a chunk being
// built): no NULL placeholder is made first and then destroyed through the
// variant.
struct AppendTo {
  std::vector<Datum>* column;
  template <typename T>
  void Set(T value) const {
    column->emplace_back(std::in_place_type<T>, value);
  }
  void SetString(const char* data, size_t size) const {
    column->emplace_back(std::in_place_type<std::string>, data, size);
  }
  // The out-of-line types: a NULL slot the slow path then assigns (it stays
  // appended when the payload is bad; RowAppender::Undo removes it).
  Datum* Slot() const { return &column->emplace_back(); }
};

// The AppendTo sinks of one row decoded onto `columns` (sink(i) for column
// i, called once per column in order), and the undo of a row that failed
// part-way: the columns before the last one reached got one value each, the
// last one reached at most one (its value, or AppendTo::Slot's NULL). Used
// through AppendRowOrUndo below.
class RowAppender {
 public:
  explicit RowAppender(absl::Span<std::vector<Datum>> columns)
      : columns_(columns),
        reached_size_(columns.empty() ? 0 : columns[0].size()) {}

  AppendTo sink(size_t i) {
    reached_ = i;
    reached_size_ = columns_[i].size();
    return AppendTo{&columns_[i]};
  }

  // Leaves every column as it was before the row.
  void Undo() {
    if (columns_.empty()) return;
    for (size_t c = 0; c < reached_; ++c) columns_[c].pop_back();
    columns_[reached_].resize(reached_size_);
  }

 private:
  absl::Span<std::vector<Datum>> columns_;
  size_t reached_ = 0;
  size_t reached_size_;
};

// One row onto `columns` by decode(sink_of), a codec's fast decoder taking
// a RowAppender's sinks: true if it succeeded; otherwise false with every
// column as it was before the row (the caller's checked path then decodes
// the row or names its problem).
template <typename Decode>
bool AppendRowOrUndo(absl::Span<std::vector<Datum>> columns, Decode decode) {
  RowAppender appender(columns);
  if (ABSL_PREDICT_TRUE(
          decode([&appender](size_t i) { return appender.sink(i); }))) {
    return true;
  }
  appender.Undo();
  return false;
}

}  // namespace payload_fast

// Decodes one payload of `type` from [*p, end) into `sink` (IntoDatum or
// AppendTo above) and advances *p; false on any problem (no error detail:
// callers fall back to PayloadReader to report it). Inline fast paths for
// floats and for the varint-led types (integers, dates, times, strings),
// sharing one inlined varint reader.
// The out-of-line part (DECIMAL, INTERVAL, INT256, accepting exactly what
// PayloadReader accepts): returns the end of the payload, or nullptr on any
// problem. (Takes `p` by value so that the inlined caller's cursor can stay in
// a register.)
const char* ReadPayloadSlowPath(DataType type, const char* p, const char* end,
                                Datum* out);
template <typename Sink>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ReadPayloadInto(DataType type,
                                                         const char*& p,
                                                         const char* end,
                                                         const Sink& sink) {
  using payload_fast::Take;
  switch (type) {
    case DataType::kFloat64: {
      double v;
      if (!Take(p, end, &v)) return false;
      sink.Set(v);
      return true;
    }
    case DataType::kFloat32: {
      float v;
      if (!Take(p, end, &v)) return false;
      sink.Set(v);
      return true;
    }
    case DataType::kBoolean: {
      if (p == end) return false;
      const uint8_t b = static_cast<uint8_t>(*p);
      if (b > 1) return false;
      sink.Set(b == 1);
      ++p;
      return true;
    }
    case DataType::kDecimal:
    case DataType::kInterval:
    case DataType::kInt256: {
      const char* const next = ReadPayloadSlowPath(type, p, end, sink.Slot());
      if (next == nullptr) return false;
      p = next;
      return true;
    }
    default:
      break;
  }
  uint64_t raw;
  if (!payload_fast::ReadVarint(p, end, &raw)) return false;
  const int64_t value = ZigZagDecode(raw);
  switch (type) {
    case DataType::kInt64:
      sink.Set(value);
      return true;
    case DataType::kTimestamp:
      sink.Set(Timestamp{value});
      return true;
    case DataType::kInt32:
      if (ABSL_PREDICT_FALSE(raw >> 32 != 0)) return false;
      sink.Set(static_cast<int32_t>(value));
      return true;
    case DataType::kVarchar:
    case DataType::kBytea:
      if (ABSL_PREDICT_FALSE(static_cast<uint64_t>(end - p) < raw)) {
        return false;
      }
      sink.SetString(p, static_cast<size_t>(raw));
      p += raw;
      return true;
    case DataType::kInt16:
      if (ABSL_PREDICT_FALSE(raw >> 16 != 0)) return false;
      sink.Set(static_cast<int16_t>(value));
      return true;
    case DataType::kDate:
      if (ABSL_PREDICT_FALSE(raw >> 32 != 0)) return false;
      sink.Set(Date{static_cast<int32_t>(value)});
      return true;
    case DataType::kTime:
      sink.Set(TimeOfDay{value});
      return true;
    case DataType::kTimestamptz:
      sink.Set(Timestamptz{value});
      return true;
    case DataType::kSerial:
      sink.Set(Serial{value});
      return true;
    default:
      return false;
  }
}

// ReadPayloadInto a Datum (overwritten in place).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ReadPayloadFast(DataType type,
                                                         const char*& p,
                                                         const char* end,
                                                         Datum* out) {
  return ReadPayloadInto(type, p, end, payload_fast::IntoDatum{out});
}

// Reads payloads front to back from a byte view; never reads out of bounds.
// Errors are DataLoss naming the offset (relative to the start of the view
// plus `base_offset`) and what was expected.
class PayloadReader {
 public:
  explicit PayloadReader(absl::string_view bytes, size_t base_offset = 0)
      : data_(bytes.data()), size_(bytes.size()), base_offset_(base_offset) {}

  size_t position() const { return pos_; }
  // The position plus the base offset: what errors name.
  size_t offset() const { return base_offset_ + pos_; }
  size_t remaining() const { return size_ - pos_; }
  bool AtEnd() const { return pos_ == size_; }

  // Decodes one payload of `type` into *out (not NULL).
  absl::Status Read(DataType type, Datum* out);

  // One canonical varint; `what` names it in errors ("INT64", "VARCHAR
  // length"). On error the position is left at the start of the varint.
  absl::Status ReadVarint(absl::string_view what, uint64_t* value);

  // Little-endian fixed-width reads; false if fewer bytes remain.
  template <typename T>
  bool ReadFixed(T* value) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Skip(size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }
  const char* current() const { return data_ + pos_; }

  // DataLoss "<what> at offset N".
  absl::Status Error(absl::string_view what) const;

 private:
  absl::Status ReadDecimal(Datum* out);
  absl::Status ReadInterval(Datum* out);
  // A zigzag varint of `type` within [min, max].
  absl::Status ReadZigZag(DataType type, int64_t min, int64_t max,
                          int64_t* value);

  const char* data_;
  size_t size_;
  size_t base_offset_;
  size_t pos_ = 0;
};

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_VALUE_PAYLOAD_H_
