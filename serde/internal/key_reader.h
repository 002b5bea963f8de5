// KeyReader: reads a memcomparable key front to back for the key decoders
// (memcmp_codec, decimal_key), un-complementing a DESC column's bytes, never
// reading past the end, and naming the offset and column in its errors.
#ifndef SERDE_INTERNAL_KEY_READER_H_
#define SERDE_INTERNAL_KEY_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"

namespace backfill {
namespace serde_internal {

// Reads a key front to back, un-complementing DESC columns through `mask`.
// Never reads past the end.
class KeyReader {
 public:
  explicit KeyReader(absl::string_view bytes)
      : data_(reinterpret_cast<const uint8_t*>(bytes.data())),
        size_(bytes.size()) {}

  size_t position() const { return pos_; }
  // The column being read, named in errors: by `type`, or by
  // *column_type when given (a nested type; must outlive the reads).
  void set_column(size_t column, DataType type, OrderType order,
                  const ColumnType* column_type = nullptr) {
    column_ = column;
    type_ = type;
    column_type_ = column_type;
    order_ = order;
    mask_ = order.is_descending() ? 0xFF : 0x00;
  }

  bool ReadByte(uint8_t* byte) {
    if (pos_ >= size_) return false;
    *byte = data_[pos_++] ^ mask_;
    return true;
  }
  template <int kBytes>
  bool ReadBigEndian(uint64_t* value) {
    if (size_ - pos_ < kBytes) return false;
    uint64_t v = 0;
    for (int i = 0; i < kBytes; ++i) v = (v << 8) | (data_[pos_ + i] ^ mask_);
    pos_ += kBytes;
    *value = v;
    return true;
  }
  const uint8_t* current() const { return data_ + pos_; }
  size_t remaining() const { return size_ - pos_; }
  void Advance(size_t n) { pos_ += n; }
  uint8_t mask() const { return mask_; }

  // DataLoss "memcomparable key: <what> at offset N (column i: TYPE ORDER)",
  // the offset being that of the offending byte.
  absl::Status Error(absl::string_view what, size_t offset) const {
    return absl::DataLossError(
        absl::StrCat("memcomparable key: ", what, " at offset ", offset,
                     " (column ", column_, ": ",
                     column_type_ != nullptr ? column_type_->DebugString()
                                             : std::string(DataTypeName(type_)),
                     " ", order_.DebugString(), ")"));
  }
  absl::Status Truncated(absl::string_view expected) const {
    return Error(absl::StrCat("truncated, expected ", expected), size_);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t column_ = 0;
  DataType type_ = DataType::kInt64;
  const ColumnType* column_type_ = nullptr;
  OrderType order_;
  uint8_t mask_ = 0;
};

}  // namespace serde_internal
}  // namespace backfill

#endif  // SERDE_INTERNAL_KEY_READER_H_
