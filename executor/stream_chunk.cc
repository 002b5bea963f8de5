#include "executor/stream_chunk.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {

absl::string_view OpName(Op op) {
  switch (op) {
    case Op::kInsert:
      return "+";
    case Op::kDelete:
      return "-";
    case Op::kUpdateDelete:
      return "U-";
    case Op::kUpdateInsert:
      return "U+";
  }
  return "?";
}

StreamChunk::StreamChunk(std::vector<Op> ops, DataChunk data)
    : ops_(std::move(ops)), data_(std::move(data)) {
  assert(ops_.size() == data_.capacity());
}

StreamChunk StreamChunk::FromRows(absl::Span<const DataType> types,
                                  std::vector<Op> ops,
                                  absl::Span<const Row> rows) {
  return StreamChunk(std::move(ops), DataChunk::FromRows(types, rows));
}

void StreamChunk::SetOps(std::vector<Op> ops) {
  assert(ops.size() == capacity());
  ops_ = std::move(ops);
}

absl::Status StreamChunk::Validate() const {
  // Index of a visible U- still waiting for its U+, or -1.
  long pending_update_delete = -1;
  for (size_t row = 0; row < capacity(); ++row) {
    if (!is_visible(row)) continue;
    const Op op = ops_[row];
    if (pending_update_delete >= 0) {
      if (op != Op::kUpdateInsert) {
        return absl::InvalidArgumentError(
            absl::StrCat("U- not followed by U+: visible row ", row, " has op ",
                         OpName(op), ", U- at row ", pending_update_delete));
      }
      pending_update_delete = -1;
      continue;
    }
    if (op == Op::kUpdateInsert) {
      return absl::InvalidArgumentError(
          absl::StrCat("U+ without a preceding U-: row ", row));
    }
    if (op == Op::kUpdateDelete) pending_update_delete = static_cast<long>(row);
  }
  if (pending_update_delete >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "U- not followed by U+ (end of chunk): row ", pending_update_delete));
  }
  return absl::OkStatus();
}

void StreamChunk::Compact() {
  if (cardinality() == capacity()) return;
  size_t out = 0;
  for (size_t row = 0; row < ops_.size(); ++row) {
    if (is_visible(row)) ops_[out++] = ops_[row];
  }
  ops_.resize(out);
  data_.Compact();
}

StreamChunk StreamChunk::Project(absl::Span<const int> indices) const {
  return StreamChunk(ops_, data_.Project(indices));
}

std::string StreamChunk::DebugString() const {
  std::string out =
      absl::StrCat("StreamChunk(", num_columns(), " columns, ", cardinality(),
                   "/", capacity(), " rows visible) [",
                   absl::StrJoin(data_types(), ", ",
                                 [](std::string* s, DataType type) {
                                   absl::StrAppend(s, DataTypeName(type));
                                 }),
                   "]\n");
  for (size_t row = 0; row < capacity(); ++row) {
    absl::StrAppend(&out, "  ", OpName(ops_[row]), " ",
                    RowDebugString(RowAt(row)),
                    is_visible(row) ? "" : " (invisible)", "\n");
  }
  return out;
}

size_t StreamChunk::EstimatedBytes() const {
  size_t bytes = capacity() * (1 + num_columns() * sizeof(Datum));
  for (int c = 0; c < num_columns(); ++c) {
    for (const Datum& datum : column(c).values()) {
      if (const std::string* s = std::get_if<std::string>(&datum)) {
        bytes += s->size();
      }
    }
  }
  return bytes;
}

}  // namespace backfill
