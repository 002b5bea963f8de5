#include "executor/message.h"

#include "absl/strings/str_cat.h"

namespace backfill {

std::optional<Watermark> Watermark::Reindex(
    absl::Span<const int> output_indices) const {
  for (size_t j = 0; j < output_indices.size(); ++j) {
    if (output_indices[j] == column_index) {
      Watermark out = *this;
      out.column_index = static_cast<int>(j);
      return out;
    }
  }
  return std::nullopt;
}

std::string Watermark::DebugString() const {
  return absl::StrCat("Watermark{column ", column_index, ", ",
                      DataTypeName(type), ", ", DatumDebugString(value), "}");
}

std::string MessageDebugString(const Message& message) {
  if (const auto* chunk = std::get_if<StreamChunk>(&message)) {
    return chunk->DebugString();
  }
  if (const auto* barrier = std::get_if<Barrier>(&message)) {
    return barrier->DebugString();
  }
  return std::get<Watermark>(message).DebugString();
}

}  // namespace backfill
