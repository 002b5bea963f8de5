// DataChunkBuilder: accumulates rows into DataChunks of a fixed capacity
// (Arrow-style Append/Finish), and BuilderCapacity, the snapshot chunk size
// under a rate limit.
//
//   DataChunkBuilder builder({DataType::kInt64}, BuilderCapacity(30, 256));
//   if (std::optional<DataChunk> full = builder.Append(row)) Emit(*full);
//   if (std::optional<DataChunk> rest = builder.Finish()) Emit(*rest);
//
// Thread-safety: not thread-safe (one owner).
#ifndef EXECUTOR_DATA_CHUNK_BUILDER_H_
#define EXECUTOR_DATA_CHUNK_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/data_chunk.h"
#include "serde/data_type.h"
#include "serde/row.h"

namespace backfill {

// The capacity of the per-vnode snapshot chunk builders (SPEC §4.2,
// reference §7.3): max(2, min(rate_limit, chunk_size)), so that a chunk never
// holds more than one second's worth of rows and an update pair (2 rows)
// always fits. `rate_limit_rows_per_second` uses the plan's encoding:
// nullopt = Disabled and 0 = Pause both give chunk_size (the rate limit does
// not apply / no snapshot rows are read at all).
size_t BuilderCapacity(std::optional<uint64_t> rate_limit_rows_per_second,
                       size_t chunk_size);

class DataChunkBuilder {
 public:
  // REQUIRES: capacity >= 1.
  DataChunkBuilder(std::vector<DataType> types, size_t capacity);

  // Appends a copy of `row`. When the builder reaches capacity() rows it
  // returns them as an all-visible chunk and starts empty again; otherwise
  // nullopt.
  // REQUIRES: row.size() == types().size(); each datum NULL or of its type.
  std::optional<DataChunk> Append(RowView row);

  // The buffered rows as a chunk (nullopt if there are none); the builder is
  // empty afterwards and keeps its capacity.
  std::optional<DataChunk> Finish();

  size_t capacity() const { return capacity_; }
  size_t num_rows() const { return num_rows_; }
  bool empty() const { return num_rows_ == 0; }
  const std::vector<DataType>& types() const { return types_; }

 private:
  void Reserve();

  std::vector<DataType> types_;
  size_t capacity_;
  size_t num_rows_ = 0;
  // One vector of values per column.
  std::vector<std::vector<Datum>> columns_;
};

}  // namespace backfill

#endif  // EXECUTOR_DATA_CHUNK_BUILDER_H_
