// OutputMapping: the projection from the backfill's input schema (S2) to its
// output schema (S3 = `output_indices` into S2), for every message kind.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(OutputMapping mapping,
//                             OutputMapping::Create(/*num_input_columns=*/3, {2, 0}));
// clang-format on
//   std::optional<Message> out = mapping.MapMessage(std::move(message));
//
// Chunks are projected (ops and visibility kept); barriers pass unchanged;
// a watermark is re-indexed to its column's output position, or dropped when
// its column is not in the output.
//
// Thread-safety: immutable after Create; const methods may run concurrently.
#ifndef EXECUTOR_BACKFILL_OUTPUT_MAPPING_H_
#define EXECUTOR_BACKFILL_OUTPUT_MAPPING_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "executor/message.h"
#include "executor/stream_chunk.h"
#include "serde/data_type.h"

namespace backfill {

class OutputMapping {
 public:
  // Errors: InvalidArgument if num_input_columns < 0 or an output index is
  // outside [0, num_input_columns) (indices may repeat).
  static absl::StatusOr<OutputMapping> Create(int num_input_columns,
                                              std::vector<int> output_indices);

  // The projected chunk. REQUIRES: chunk.num_columns() == num_input_columns().
  StreamChunk MapChunk(StreamChunk chunk) const;
  // The re-indexed watermark, or nullopt when its column is not in the output.
  std::optional<Watermark> MapWatermark(const Watermark& watermark) const;
  // MapChunk / MapWatermark / the barrier unchanged; nullopt only for a
  // dropped watermark.
  std::optional<Message> MapMessage(Message message) const;
  // The output column types given the input's.
  // REQUIRES: input_types.size() == num_input_columns().
  std::vector<DataType> MapTypes(absl::Span<const DataType> input_types) const;
  // The output positions of the input columns `input_key` (e.g. the pk: an
  // executor's stream key), in key order: each column's first output
  // position; a column not in the output is left out.
  std::vector<int> MapKey(absl::Span<const int> input_key) const;

  int num_input_columns() const { return num_input_columns_; }
  const std::vector<int>& output_indices() const { return output_indices_; }
  // True iff the output is the input (0, 1, ..., n-1).
  bool is_identity() const { return is_identity_; }

 private:
  OutputMapping(int num_input_columns, std::vector<int> output_indices);

  int num_input_columns_;
  std::vector<int> output_indices_;
  bool is_identity_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_OUTPUT_MAPPING_H_
