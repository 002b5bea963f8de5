// DataChunk: a batch of rows stored column by column, with a visibility bitmap.
//
// clang-format off
//   DataChunk chunk = DataChunk::FromRows({DataType::kInt64, DataType::kVarchar},
//                                         {{int64_t{1}, std::string("a")}});
//   chunk.SetVisibility({false});  // cardinality() == 0, capacity() == 1
// clang-format on
//
// A chunk has `capacity()` physical rows; `cardinality()` of them are visible.
// Invisible rows are logically absent (filtered out) but still stored until
// `Compact()`. Each column is a `Column`: a DataType plus one Datum per row.
// The representation (a std::vector<Datum> per column) is deliberately hidden
// behind the columnar accessors so it can become a typed array later.
//
// Thread-safety: a DataChunk is a value; const methods may be called
// concurrently, mutation needs exclusive access.
#ifndef EXECUTOR_DATA_CHUNK_H_
#define EXECUTOR_DATA_CHUNK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/row.h"

namespace backfill {

// One typed column: a DataType and one Datum (possibly NULL) per row.
class Column {
 public:
  // REQUIRES: every value is NULL or of `type` (DatumMatchesType).
  Column(DataType type, std::vector<Datum> values);

  DataType type() const { return type_; }
  size_t size() const { return values_.size(); }
  // REQUIRES: row < size(). Valid while the column is alive and unmodified.
  const Datum& value(size_t row) const { return values_[row]; }
  // All values, visible or not. Valid while the column is alive and unmodified.
  absl::Span<const Datum> values() const { return values_; }

 private:
  friend class DataChunk;
  DataType type_;
  std::vector<Datum> values_;
};

class DataChunk {
 public:
  // The empty chunk: no columns, no rows.
  DataChunk() = default;

  // A chunk of `num_rows` rows, all visible.
  // REQUIRES: every column has `num_rows` values. `num_rows` is explicit so
  // that a chunk with zero columns still has a row count.
  DataChunk(std::vector<Column> columns, size_t num_rows);

  // A chunk with the given visibility.
  // REQUIRES: every column has visibility.size() values.
  DataChunk(std::vector<Column> columns, std::vector<bool> visibility);

  // A chunk holding `rows`, all visible.
  // REQUIRES: every row has types.size() datums, each NULL or of its type.
  static DataChunk FromRows(absl::Span<const DataType> types,
                            absl::Span<const Row> rows);

  int num_columns() const { return static_cast<int>(columns_.size()); }
  // Number of physical rows, visible or not.
  size_t capacity() const { return visibility_.size(); }
  // Number of visible rows.
  size_t cardinality() const { return cardinality_; }
  bool empty() const { return cardinality_ == 0; }

  // REQUIRES: 0 <= index < num_columns().
  const Column& column(int index) const { return columns_[index]; }
  std::vector<DataType> data_types() const;

  // One flag per physical row: true = visible.
  const std::vector<bool>& visibility() const { return visibility_; }
  // REQUIRES: row < capacity().
  bool is_visible(size_t row) const { return visibility_[row]; }

  // Replaces the visibility bitmap. REQUIRES: visibility.size() == capacity().
  void SetVisibility(std::vector<bool> visibility);

  // Physically removes the invisible rows; afterwards capacity() ==
  // cardinality() and every row is visible. Row order is kept.
  void Compact();

  // The columns at `indices`, in that order (an index may repeat), with the
  // same rows and visibility. REQUIRES: every index in [0, num_columns()).
  DataChunk Project(absl::Span<const int> indices) const;

  // A copy of physical row `row` (visible or not). REQUIRES: row < capacity().
  Row RowAt(size_t row) const;
  // Copies of the visible rows, in order.
  std::vector<Row> VisibleRows() const;

  // Multi-line text: a header with the column types, then one line per
  // physical row; invisible rows are marked "(invisible)".
  std::string DebugString() const;

 private:
  std::vector<Column> columns_;
  std::vector<bool> visibility_;
  size_t cardinality_ = 0;
};

}  // namespace backfill

#endif  // EXECUTOR_DATA_CHUNK_H_
