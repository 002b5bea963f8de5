#include "executor/data_chunk.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {

Column::Column(DataType type, std::vector<Datum> values)
    : type_(type), values_(std::move(values)) {
#ifndef NDEBUG
  for (const Datum& value : values_) assert(DatumMatchesType(value, type_));
#endif
}

DataChunk::DataChunk(std::vector<Column> columns, size_t num_rows)
    : columns_(std::move(columns)),
      visibility_(num_rows, true),
      cardinality_(num_rows) {
#ifndef NDEBUG
  for (const Column& column : columns_) assert(column.size() == num_rows);
#endif
}

DataChunk::DataChunk(std::vector<Column> columns, std::vector<bool> visibility)
    : columns_(std::move(columns)) {
#ifndef NDEBUG
  for (const Column& column : columns_) {
    assert(column.size() == visibility.size());
  }
#endif
  visibility_ = std::move(visibility);
  cardinality_ = static_cast<size_t>(
      std::count(visibility_.begin(), visibility_.end(), true));
}

DataChunk DataChunk::FromRows(absl::Span<const DataType> types,
                              absl::Span<const Row> rows) {
  std::vector<std::vector<Datum>> values(types.size());
  for (auto& column : values) column.reserve(rows.size());
  for (const Row& row : rows) {
    assert(row.size() == types.size());
    for (size_t i = 0; i < types.size(); ++i) values[i].push_back(row[i]);
  }
  std::vector<Column> columns;
  columns.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    columns.emplace_back(types[i], std::move(values[i]));
  }
  return DataChunk(std::move(columns), rows.size());
}

std::vector<DataType> DataChunk::data_types() const {
  std::vector<DataType> types;
  types.reserve(columns_.size());
  for (const Column& column : columns_) types.push_back(column.type());
  return types;
}

void DataChunk::SetVisibility(std::vector<bool> visibility) {
  assert(visibility.size() == visibility_.size());
  visibility_ = std::move(visibility);
  cardinality_ = static_cast<size_t>(
      std::count(visibility_.begin(), visibility_.end(), true));
}

void DataChunk::Compact() {
  if (cardinality_ == capacity()) return;
  for (Column& column : columns_) {
    size_t out = 0;
    for (size_t row = 0; row < visibility_.size(); ++row) {
      if (visibility_[row]) {
        if (out != row) column.values_[out] = std::move(column.values_[row]);
        ++out;
      }
    }
    column.values_.resize(out);
  }
  visibility_.assign(cardinality_, true);
}

DataChunk DataChunk::Project(absl::Span<const int> indices) const {
  std::vector<Column> columns;
  columns.reserve(indices.size());
  for (int index : indices) {
    assert(index >= 0 && index < num_columns());
    columns.push_back(columns_[index]);
  }
  DataChunk out;
  out.columns_ = std::move(columns);
  out.visibility_ = visibility_;
  out.cardinality_ = cardinality_;
  return out;
}

Row DataChunk::RowAt(size_t row) const {
  assert(row < capacity());
  Row out;
  out.reserve(columns_.size());
  for (const Column& column : columns_) out.push_back(column.value(row));
  return out;
}

std::vector<Row> DataChunk::VisibleRows() const {
  std::vector<Row> rows;
  rows.reserve(cardinality_);
  for (size_t row = 0; row < capacity(); ++row) {
    if (visibility_[row]) rows.push_back(RowAt(row));
  }
  return rows;
}

std::string DataChunk::DebugString() const {
  std::string out = absl::StrCat(
      "DataChunk(", num_columns(), " columns, ", cardinality_, "/", capacity(),
      " rows visible) [",
      absl::StrJoin(columns_, ", ",
                    [](std::string* s, const Column& column) {
                      absl::StrAppend(s, DataTypeName(column.type()));
                    }),
      "]\n");
  for (size_t row = 0; row < capacity(); ++row) {
    absl::StrAppend(&out, "  ", RowDebugString(RowAt(row)),
                    visibility_[row] ? "" : " (invisible)", "\n");
  }
  return out;
}

}  // namespace backfill
