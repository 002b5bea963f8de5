// Memcomparable keys: a row of key columns encoded so that comparing the bytes
// with memcmp (shorter-is-smaller on a common prefix) gives exactly the order
// of CompareRows under the columns' OrderTypes. The byte layout of every type
// is in serde/FORMAT.md (never change: persisted, it is the storage key
// format).
//
//   absl::StatusOr<KeySerde> serde = KeySerde::Create(
//       {DataType::kInt64, DataType::kVarchar},
//       {OrderType::Ascending(), OrderType::Descending()});
//   std::string key = serde->Serialize({int64_t{1}, std::string("a")});
//   absl::StatusOr<Row> row = serde->Deserialize(key);     // {1, 'a'}
//
// Properties (for rows of the same types and orders):
//   sign(memcmp(Encode(a), Encode(b))) == sign(CompareRows(a, b, orders));
//   Decode(Encode(a)) is RowsEqual to a (floats: -0.0 decodes as 0.0 and
//   every NaN as the canonical quiet NaN, since they compare equal);
//   the encoding of a full key is prefix-free (no key is a proper prefix of
//   another), and every datum's encoding is self-delimiting;
//   the encoding is canonical: a byte string that decodes OK re-encodes to
//   itself.
// Thread-safety: all functions are pure; KeySerde is immutable and may be
// shared between threads.
#ifndef SERDE_MEMCMP_CODEC_H_
#define SERDE_MEMCMP_CODEC_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"
#include "serde/row.h"

namespace backfill {

// Appends the memcomparable encoding of `row` to *out (never clears it).
// REQUIRES: row.size() == types.size() == orders.size(), and every datum is
// NULL or DatumMatchesType(row[i], types[i]) (checked by assert only; use
// ValidateRow on untrusted rows first; a release build encodes a mismatching
// datum as NULL).
void EncodeKey(RowView row, absl::Span<const DataType> types,
               absl::Span<const OrderType> orders, std::string* out);

// Appends the encoding of one datum: EncodeKey of a one-column row.
// REQUIRES: datum is NULL or matches `type`, which is not LIST or STRUCT.
void EncodeKeyDatum(const Datum& datum, DataType type, OrderType order,
                    std::string* out);

// Columns of any key type, LIST and STRUCT included (FORMAT.md section 1.3):
// appends the encoding of one datum of `type`, which may be nested.
// REQUIRES: DatumMatchesColumnType(datum, type) (assert; a release build
// encodes a mismatching datum as NULL) and ValidateKeyColumnType(type).ok()
// (JSONB and MAP are not key types; assert).
void EncodeKeyDatum(const Datum& datum, const ColumnType& type, OrderType order,
                    std::string* out);

// Decodes one datum of `type` (any key type) from the front of `bytes` into
// *out and returns the bytes consumed (the rest may be more columns).
// Errors: InvalidArgument if `type` cannot be a key (ValidateKeyColumnType:
// JSONB, MAP, or a LIST / STRUCT holding one); DataLoss as DecodeKey.
absl::StatusOr<size_t> DecodeKeyDatum(absl::string_view bytes,
                                      const ColumnType& type, OrderType order,
                                      Datum* out);

// Decodes a key of exactly types.size() columns that fills all of `bytes`.
// REQUIRES: types.size() == orders.size().
// Errors: DataLoss naming the byte offset and what was expected, for
// truncated input, invalid tags, non-canonical values or trailing bytes;
// InvalidArgument as DecodeKeyPrefix for a JSONB or MAP column.
absl::StatusOr<Row> DecodeKey(absl::string_view bytes,
                              absl::Span<const DataType> types,
                              absl::Span<const OrderType> orders);

// Decodes the first types.size() columns from the front of `bytes` (which may
// continue with more columns or other data), replacing *out's contents, and
// returns the number of bytes consumed. Reuses *out's storage.
// REQUIRES: types.size() == orders.size().
// Errors: DataLoss as DecodeKey (trailing bytes are allowed);
// InvalidArgument on a non-NULL value of a JSONB or MAP column (not key
// types; KeySerde::Create rejects them up front).
absl::StatusOr<size_t> DecodeKeyPrefix(absl::string_view bytes,
                                       absl::Span<const DataType> types,
                                       absl::Span<const OrderType> orders,
                                       Row* out);

// The smallest byte string greater than every string that has `bytes` as a
// prefix: drops trailing 0xFF bytes and increments the last remaining byte.
// Use it as the exclusive end of a prefix scan, or as the inclusive start of
// a scan that must begin strictly after every key with that prefix.
// Returns nullopt when no such string exists (`bytes` is empty or all 0xFF):
// the range is unbounded above.
std::optional<std::string> NextKey(absl::string_view bytes);

// A key layout (column types + orders) bundled with its codec functions.
// Columns of any key type, LIST and STRUCT included when the layout is made
// from ColumnTypes (CreateFromColumnTypes); a layout of scalar columns only
// encodes through EncodeKey / DecodeKeyPrefix, a nested one column by column
// through EncodeKeyDatum / DecodeKeyDatum's forms (same bytes as FORMAT.md
// section 1.3 describes).
class KeySerde {
 public:
  // Errors: InvalidArgument when types.size() != orders.size(), for a
  // LIST or STRUCT column (those need a ColumnType: CreateFromColumnTypes),
  // or a JSONB or MAP column (not key types: ValidateKeyColumnType).
  static absl::StatusOr<KeySerde> Create(std::vector<DataType> types,
                                         std::vector<OrderType> orders);
  // Any key type, nested ones included (a distinct name, not an overload of
  // Create, so that braced lists of DataTypes stay unambiguous).
  // Errors: InvalidArgument when types.size() != orders.size(), or for a
  // column that cannot be a key (ValidateKeyColumnType: JSONB, MAP, or a
  // LIST / STRUCT holding one, at any depth) or whose type is invalid
  // (ValidateColumnType), naming the column.
  static absl::StatusOr<KeySerde> CreateFromColumnTypes(
      std::vector<ColumnType> types, std::vector<OrderType> orders);

  size_t num_columns() const { return types_.size(); }
  // The columns' DataTypes (a nested column's id only).
  absl::Span<const DataType> types() const { return types_; }
  // The columns' whole types.
  absl::Span<const ColumnType> column_types() const { return column_types_; }
  absl::Span<const OrderType> orders() const { return orders_; }
  // Whether any column is a LIST or STRUCT.
  bool has_nested_columns() const { return has_nested_; }

  // The serde of the first `num_columns` columns (a pk prefix).
  // REQUIRES: num_columns <= this->num_columns().
  KeySerde Prefix(size_t num_columns) const;

  // EncodeKey with this layout (nested columns as EncodeKeyDatum with their
  // ColumnType). REQUIRES: as EncodeKey, with DatumMatchesColumnType for a
  // nested column.
  void Serialize(RowView row, std::string* out) const {
    // Inline: a scalar layout (the per-row hot path) calls EncodeKey directly.
    if (has_nested_) return SerializeNested(row, out);
    EncodeKey(row, types_, orders_, out);
  }
  std::string Serialize(RowView row) const {
    std::string out;
    Serialize(row, &out);
    return out;
  }

  // DecodeKey with this layout. Errors: DataLoss as DecodeKey.
  absl::StatusOr<Row> Deserialize(absl::string_view bytes) const;

  // Decodes the first `num_columns` columns of a key in this layout from the
  // front of `bytes` into *out; returns the bytes consumed.
  // REQUIRES: num_columns <= this->num_columns(). Errors: DataLoss.
  absl::StatusOr<size_t> DecodePrefix(absl::string_view bytes,
                                      size_t num_columns, Row* out) const;

  // "(INT64 ASC NULLS LAST, LIST<VARCHAR> DESC NULLS FIRST)".
  std::string DebugString() const;

 private:
  KeySerde(std::vector<ColumnType> column_types, std::vector<OrderType> orders);
  // Serialize of a layout with a LIST or STRUCT column.
  void SerializeNested(RowView row, std::string* out) const;

  std::vector<ColumnType> column_types_;
  std::vector<DataType> types_;  // column_types_' ids
  std::vector<OrderType> orders_;
  bool has_nested_ = false;
};

}  // namespace backfill

#endif  // SERDE_MEMCMP_CODEC_H_
