// StreamChunk: a DataChunk plus one change operation per row; the unit of
// data on every stream edge.
//
// clang-format off
//   StreamChunk chunk({Op::kInsert, Op::kUpdateDelete, Op::kUpdateInsert},
//                     DataChunk::FromRows({DataType::kInt64}, {{1}, {2}, {3}}));
//   BACKFILL_RETURN_IF_ERROR(chunk.Validate());
// clang-format on
//
// Ops: Insert (+), Delete (-), UpdateDelete (U-) and UpdateInsert (U+). An
// update is a U-/U+ pair: the U- immediately followed, among the *visible*
// rows, by its U+ (invisible rows may sit between them); a half pair is never
// valid. Invisible rows are logically absent.
//
// Thread-safety: a value type; const methods may run concurrently.
#ifndef EXECUTOR_STREAM_CHUNK_H_
#define EXECUTOR_STREAM_CHUNK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "executor/data_chunk.h"
#include "serde/row.h"

namespace backfill {

enum class Op : uint8_t {
  kInsert = 0,
  kDelete = 1,
  kUpdateDelete = 2,  // U-: the old row of an update.
  kUpdateInsert = 3,  // U+: the new row of an update.
};

// "+", "-", "U-", "U+".
absl::string_view OpName(Op op);

class StreamChunk {
 public:
  // The empty chunk (no columns, no rows).
  StreamChunk() = default;
  // REQUIRES: ops.size() == data.capacity().
  StreamChunk(std::vector<Op> ops, DataChunk data);

  // All-visible chunk of `rows` with `ops`.
  // REQUIRES: ops.size() == rows.size(); rows as for DataChunk::FromRows.
  static StreamChunk FromRows(absl::Span<const DataType> types,
                              std::vector<Op> ops, absl::Span<const Row> rows);

  const DataChunk& data() const { return data_; }
  const std::vector<Op>& ops() const { return ops_; }
  // REQUIRES: row < capacity().
  Op op(size_t row) const { return ops_[row]; }

  int num_columns() const { return data_.num_columns(); }
  size_t capacity() const { return data_.capacity(); }
  size_t cardinality() const { return data_.cardinality(); }
  bool empty() const { return data_.empty(); }
  const Column& column(int index) const { return data_.column(index); }
  std::vector<DataType> data_types() const { return data_.data_types(); }
  const std::vector<bool>& visibility() const { return data_.visibility(); }
  bool is_visible(size_t row) const { return data_.is_visible(row); }
  // A copy of physical row `row`'s values. REQUIRES: row < capacity().
  Row RowAt(size_t row) const { return data_.RowAt(row); }
  // A rough size in memory (ops, datums, string bytes), for buffer gauges and
  // benchmarks.
  size_t EstimatedBytes() const;

  // REQUIRES: visibility.size() == capacity().
  void SetVisibility(std::vector<bool> visibility) {
    data_.SetVisibility(std::move(visibility));
  }
  // Replaces the ops. REQUIRES: ops.size() == capacity().
  void SetOps(std::vector<Op> ops);

  // OK iff every visible U- is immediately followed, among the visible rows,
  // by a U+, and every visible U+ immediately follows such a U-. Otherwise
  // InvalidArgument naming the offending physical row index.
  absl::Status Validate() const;

  // Physically drops the invisible rows (with their ops).
  void Compact();

  // The columns at `indices` with the same ops and visibility.
  // REQUIRES: every index in [0, num_columns()).
  StreamChunk Project(absl::Span<const int> indices) const;

  // Multi-line text: one line per physical row, "<op> (values)", invisible
  // rows marked "(invisible)".
  std::string DebugString() const;

 private:
  std::vector<Op> ops_;
  DataChunk data_;
};

}  // namespace backfill

#endif  // EXECUTOR_STREAM_CHUNK_H_
