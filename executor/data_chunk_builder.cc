#include "executor/data_chunk_builder.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace backfill {

DataChunkBuilder::DataChunkBuilder(std::vector<DataType> types, size_t capacity)
    : types_(std::move(types)), capacity_(capacity), columns_(types_.size()) {
  assert(capacity_ >= 1);
  Reserve();
}

void DataChunkBuilder::Reserve() {
  for (auto& column : columns_) column.reserve(capacity_);
}

std::optional<DataChunk> DataChunkBuilder::Append(RowView row) {
  assert(row.size() == types_.size());
  for (size_t i = 0; i < columns_.size(); ++i) columns_[i].push_back(row[i]);
  ++num_rows_;
  if (num_rows_ < capacity_) return std::nullopt;
  return Finish();
}

size_t DataChunkBuilder::AppendColumns(
    size_t max_rows,
    absl::FunctionRef<size_t(size_t, absl::Span<std::vector<Datum>>)> fill) {
  const size_t n = std::min(max_rows, room());
  if (n == 0) return 0;
  const size_t appended = fill(n, absl::MakeSpan(columns_));
  assert(appended <= n);
  for (const auto& column : columns_) {
    assert(column.size() == num_rows_ + appended);
    (void)column;
  }
  num_rows_ += appended;
  return appended;
}

std::optional<DataChunk> DataChunkBuilder::Finish() {
  if (num_rows_ == 0) return std::nullopt;
  std::vector<Column> columns;
  columns.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    columns.emplace_back(types_[i], std::move(columns_[i]));
    columns_[i] = std::vector<Datum>();
  }
  DataChunk chunk(std::move(columns), num_rows_);
  num_rows_ = 0;
  Reserve();
  return chunk;
}

}  // namespace backfill
