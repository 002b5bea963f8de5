// DataChunkBuilder: accumulates rows into DataChunks of a fixed capacity
// (Arrow-style Append/Finish).
//
// clang-format off
//   DataChunkBuilder builder({DataType::kInt64}, /*capacity=*/256);
//   if (std::optional<DataChunk> full = builder.Append(row)) Emit(*full);
//   if (std::optional<DataChunk> rest = builder.Finish()) Emit(*rest);
//
//   // Or decode straight into the columns, a batch at a time:
//   builder.AppendColumns(max_rows, [&](size_t n, auto columns) {
//     return it->ReadColumns(n, columns);
//   });
//   if (builder.full()) Emit(*builder.Finish());
// clang-format on
//
// Thread-safety: not thread-safe (one owner).
#ifndef EXECUTOR_DATA_CHUNK_BUILDER_H_
#define EXECUTOR_DATA_CHUNK_BUILDER_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "executor/data_chunk.h"
#include "serde/data_type.h"
#include "serde/row.h"
#include "third_party/absl_extras/cache_line_allocator.h"

namespace backfill {

class DataChunkBuilder {
 public:
  // REQUIRES: capacity >= 1.
  DataChunkBuilder(std::vector<DataType> types, size_t capacity);

  // Appends a copy of `row`. When the builder reaches capacity() rows it
  // returns them as an all-visible chunk and starts empty again; otherwise
  // nullopt.
  // REQUIRES: row.size() == types().size(); each datum NULL or of its type.
  std::optional<DataChunk> Append(RowView row);

  // Up to min(max_rows, room()) rows that `fill` writes straight into the
  // columns: fill(n, columns) appends the same number k <= n of values to
  // every column (one vector per column, each value NULL or of its column's
  // type) and returns k. Returns k. Unlike Append it never finishes a chunk:
  // call Finish() when full().
  size_t AppendColumns(
      size_t max_rows,
      absl::FunctionRef<size_t(size_t, absl::Span<std::vector<Datum>>)> fill);

  // The buffered rows as a chunk (nullopt if there are none); the builder is
  // empty afterwards and keeps its capacity.
  std::optional<DataChunk> Finish();

  size_t capacity() const { return capacity_; }
  size_t num_rows() const { return num_rows_; }
  bool empty() const { return num_rows_ == 0; }
  bool full() const { return num_rows_ == capacity_; }
  // The rows it takes before it is full.
  size_t room() const { return capacity_ - num_rows_; }
  const std::vector<DataType>& types() const { return types_; }

 private:
  void Reserve();

  std::vector<DataType> types_;
  size_t capacity_;
  size_t num_rows_ = 0;
  // One vector of values per column. Their headers change with every value
  // appended, so they get cache lines of their own: allocated by the thread
  // that builds the job, they would otherwise share a line with another
  // actor's (see CacheLineAllocator).
  std::vector<std::vector<Datum>, CacheLineAllocator<std::vector<Datum>>>
      columns_;
};

}  // namespace backfill

#endif  // EXECUTOR_DATA_CHUNK_BUILDER_H_
