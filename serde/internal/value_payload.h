// Value payloads: the byte form of one non-NULL datum inside a value row
// (positional and column-aware codecs) and in the vnode hash of decimals.
// Layouts are specified in serde/FORMAT.md (never change: persisted).
//
//   std::string out;
//   AppendPayload(int64_t{7}, DataType::kInt64, &out);   // 8 bytes LE
//   PayloadReader reader(out); Datum d; reader.Read(DataType::kInt64, &d);
#ifndef SERDE_INTERNAL_VALUE_PAYLOAD_H_
#define SERDE_INTERNAL_VALUE_PAYLOAD_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/decimal.h"

namespace backfill {
namespace serde_internal {

static_assert(std::endian::native == std::endian::little,
              "serde encodes little-endian payloads with memcpy");

// Fixed payload width of `type`, or 0 for variable-width types (strings,
// decimals).
int FixedPayloadSize(DataType type);

// Bytes AppendPayload writes for `datum`. REQUIRES: non-NULL, matches `type`.
size_t PayloadSize(const Datum& datum, DataType type);

// Appends the payload of `datum`. REQUIRES: non-NULL and
// DatumMatchesType(datum, type).
void AppendPayload(const Datum& datum, DataType type, std::string* out);

// Appends the compact decimal form (header byte, scale byte, minimal LE
// mantissa); canonical: equal decimals give equal bytes.
void AppendDecimalPayload(const Decimal& value, std::string* out);
size_t DecimalPayloadSize(const Decimal& value);

// The Datum alternative index that holds values of `type` (Datum's variant
// order: 1 bool .. 11 Timestamp; VARCHAR and BYTEA share 8).
int DatumIndexOf(DataType type);

// An upper bound of the payload size of non-NULL `datum` (exact except for
// decimals, bounded by 18), from its alternative alone.
inline size_t PayloadSizeBound(const Datum& datum) {
  static constexpr uint8_t kFixed[12] = {0, 1, 2, 4, 8, 4, 8, 18, 4, 4, 8, 8};
  const size_t index = datum.index();
  if (index == 8) return 4 + std::get_if<std::string>(&datum)->size();
  return kFixed[index];
}

// Writes the payload of non-NULL `datum` at `p`, which has room for
// PayloadSizeBound(datum) bytes, and returns the end of what it wrote.
// The payload is chosen by the datum's alternative (the caller has checked
// it against the column type).
char* WritePayload(const Datum& datum, char* p);

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

}  // namespace payload_fast

// Decodes one payload of `type` from [*p, end) into *out and advances *p;
// false on any problem (no error detail: callers fall back to PayloadReader
// to report it). Inline fast paths for the common fixed-width types and
// strings.
bool ReadPayloadSlowPath(DataType type, const char*& p, const char* end,
                         Datum* out);
inline bool ReadPayloadFast(DataType type, const char*& p, const char* end,
                            Datum* out) {
  using payload_fast::Assign;
  using payload_fast::Take;
  switch (type) {
    case DataType::kInt64: {
      int64_t v;
      if (!Take(p, end, &v)) return false;
      Assign(out, v);
      return true;
    }
    case DataType::kInt32: {
      int32_t v;
      if (!Take(p, end, &v)) return false;
      Assign(out, v);
      return true;
    }
    case DataType::kFloat64: {
      double v;
      if (!Take(p, end, &v)) return false;
      Assign(out, v);
      return true;
    }
    case DataType::kTimestamp: {
      int64_t v;
      if (!Take(p, end, &v)) return false;
      Assign(out, Timestamp{v});
      return true;
    }
    case DataType::kVarchar:
    case DataType::kBytea: {
      uint32_t length;
      if (!Take(p, end, &length)) return false;
      if (static_cast<size_t>(end - p) < length) return false;
      AssignString(out, p, length);
      p += length;
      return true;
    }
    default:
      return ReadPayloadSlowPath(type, p, end, out);
  }
}

// Reads payloads front to back from a byte view; never reads out of bounds.
// Errors are DataLoss naming the offset (relative to the start of the view
// plus `base_offset`) and what was expected.
class PayloadReader {
 public:
  explicit PayloadReader(absl::string_view bytes, size_t base_offset = 0)
      : data_(bytes.data()), size_(bytes.size()), base_offset_(base_offset) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  bool AtEnd() const { return pos_ == size_; }

  // Decodes one payload of `type` into *out (not NULL).
  absl::Status Read(DataType type, Datum* out);

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

  const char* data_;
  size_t size_;
  size_t base_offset_;
  size_t pos_ = 0;
};

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_VALUE_PAYLOAD_H_
