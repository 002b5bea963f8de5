// Message: what flows on a stream edge: a StreamChunk, a Barrier or a
// Watermark.
//
// clang-format off
//   Message message = Watermark{.column_index = 1, .type = DataType::kInt64,
//                               .value = int64_t{100}};
//   if (const Barrier* barrier = std::get_if<Barrier>(&message)) { ... }
//   LOG(INFO) << MessageDebugString(message);
// clang-format on
//
// Thread-safety: plain values.
#ifndef EXECUTOR_MESSAGE_H_
#define EXECUTOR_MESSAGE_H_

#include <optional>
#include <string>
#include <variant>

#include "absl/types/span.h"
#include "executor/barrier.h"
#include "executor/stream_chunk.h"
#include "serde/data_type.h"
#include "serde/datum.h"

namespace backfill {

// "No row with a value below `value` in column `column_index` will arrive
// any more" (for the column's order).
struct Watermark {
  // Index of the column in the stream's schema. >= 0.
  int column_index = 0;
  DataType type = DataType::kInt64;
  // Never NULL in a well-formed watermark.
  Datum value = Datum();

  // The same watermark in the schema produced by projecting with
  // `output_indices` (output column j is input column output_indices[j]):
  // column_index becomes the first j with output_indices[j] == column_index;
  // nullopt when the column is not in the output (the watermark is dropped).
  std::optional<Watermark> Reindex(absl::Span<const int> output_indices) const;

  // "Watermark{column 1, INT64, 100}".
  std::string DebugString() const;
};

using Message = std::variant<StreamChunk, Barrier, Watermark>;

// One line per kind: "Chunk(...)" (multi-line), "Barrier{...}",
// "Watermark{...}".
std::string MessageDebugString(const Message& message);

}  // namespace backfill

#endif  // EXECUTOR_MESSAGE_H_
