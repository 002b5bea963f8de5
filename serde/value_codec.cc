#include "serde/value_codec.h"

#include "absl/strings/str_cat.h"

namespace backfill {

absl::StatusOr<std::unique_ptr<ValueRowCodec>> MakeValueRowCodec(
    ValueRowEncoding encoding, Schema schema) {
  switch (encoding) {
    case ValueRowEncoding::kPositional: {
      auto codec = PositionalCodec::Create(std::move(schema));
      if (!codec.ok()) return codec.status();
      return std::unique_ptr<ValueRowCodec>(std::move(*codec));
    }
    case ValueRowEncoding::kColumnAware: {
      auto codec = ColumnAwareCodec::Create(std::move(schema));
      if (!codec.ok()) return codec.status();
      return std::unique_ptr<ValueRowCodec>(std::move(*codec));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown value row encoding ", static_cast<int>(encoding)));
}

}  // namespace backfill
