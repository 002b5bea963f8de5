#include "executor/backfill/output_mapping.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {

absl::StatusOr<OutputMapping> OutputMapping::Create(
    int num_input_columns, std::vector<int> output_indices) {
  if (num_input_columns < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative number of input columns: ", num_input_columns));
  }
  for (size_t j = 0; j < output_indices.size(); ++j) {
    if (output_indices[j] < 0 || output_indices[j] >= num_input_columns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output index out of range: output column ", j, " is input column ",
          output_indices[j], ", input has ", num_input_columns, " columns"));
    }
  }
  return OutputMapping(num_input_columns, std::move(output_indices));
}

OutputMapping::OutputMapping(int num_input_columns,
                             std::vector<int> output_indices)
    : num_input_columns_(num_input_columns),
      output_indices_(std::move(output_indices)) {
  is_identity_ =
      output_indices_.size() == static_cast<size_t>(num_input_columns_);
  for (size_t j = 0; is_identity_ && j < output_indices_.size(); ++j) {
    is_identity_ = output_indices_[j] == static_cast<int>(j);
  }
}

StreamChunk OutputMapping::MapChunk(StreamChunk chunk) const {
  assert(chunk.num_columns() == num_input_columns_);
  if (is_identity_) return chunk;
  return chunk.Project(output_indices_);
}

std::optional<Watermark> OutputMapping::MapWatermark(
    const Watermark& watermark) const {
  return watermark.Reindex(output_indices_);
}

std::optional<Message> OutputMapping::MapMessage(Message message) const {
  if (auto* chunk = std::get_if<StreamChunk>(&message)) {
    return Message(MapChunk(std::move(*chunk)));
  }
  if (const auto* watermark = std::get_if<Watermark>(&message)) {
    std::optional<Watermark> mapped = MapWatermark(*watermark);
    if (!mapped.has_value()) return std::nullopt;
    return Message(*std::move(mapped));
  }
  return message;
}

std::vector<DataType> OutputMapping::MapTypes(
    absl::Span<const DataType> input_types) const {
  assert(input_types.size() == static_cast<size_t>(num_input_columns_));
  std::vector<DataType> out;
  out.reserve(output_indices_.size());
  for (int index : output_indices_) out.push_back(input_types[index]);
  return out;
}

std::vector<int> OutputMapping::MapKey(absl::Span<const int> input_key) const {
  std::vector<int> out;
  for (int column : input_key) {
    for (size_t i = 0; i < output_indices_.size(); ++i) {
      if (output_indices_[i] == column) {
        out.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  return out;
}

}  // namespace backfill
