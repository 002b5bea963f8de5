#include "serde/positional_codec.h"

#include <cassert>

#include "absl/strings/str_cat.h"
#include "serde/internal/value_payload.h"

namespace backfill {

using serde_internal::AppendPayload;
using serde_internal::PayloadReader;

absl::StatusOr<std::unique_ptr<PositionalCodec>> PositionalCodec::Create(
    Schema schema) {
  if (absl::Status status = ValidateSchema(schema); !status.ok()) {
    return status;
  }
  return std::unique_ptr<PositionalCodec>(
      new PositionalCodec(std::move(schema)));
}

PositionalCodec::PositionalCodec(Schema schema)
    : schema_(std::move(schema)), types_(ColumnTypes(schema_)) {}

void PositionalCodec::Encode(RowView row, std::string* out) const {
  assert(row.size() == types_.size());
  for (size_t i = 0; i < types_.size(); ++i) {
    const Datum& datum = row[i];
    if (IsNull(datum) || !DatumMatchesType(datum, types_[i])) {
      assert(IsNull(datum) && "PositionalCodec: datum does not match its type");
      out->push_back(0);
      continue;
    }
    out->push_back(1);
    AppendPayload(datum, types_[i], out);
  }
}

absl::StatusOr<Row> PositionalCodec::Decode(absl::string_view bytes) const {
  Row row;
  if (absl::Status status = DecodeInto(bytes, &row); !status.ok()) {
    return status;
  }
  return row;
}

absl::Status PositionalCodec::DecodeInto(absl::string_view bytes,
                                         Row* out) const {
  out->resize(types_.size());
  PayloadReader reader(bytes);
  for (size_t i = 0; i < types_.size(); ++i) {
    auto column_error = [&](const absl::Status& status) {
      return absl::DataLossError(absl::StrCat(
          "positional value row: ", status.message(), " (column ", i, " \"",
          schema_[i].name, "\": ", DataTypeName(types_[i]), ")"));
    };
    uint8_t flag;
    if (!reader.ReadFixed(&flag)) {
      return column_error(reader.Error("truncated, expected a null flag"));
    }
    if (flag == 0) {
      (*out)[i].emplace<std::monostate>();
      continue;
    }
    if (flag != 1) {
      return column_error(absl::DataLossError(
          absl::StrCat("null flag ", flag, " is not 0 or 1 at offset ",
                       reader.position() - 1)));
    }
    if (absl::Status status = reader.Read(types_[i], &(*out)[i]);
        !status.ok()) {
      return column_error(status);
    }
  }
  if (!reader.AtEnd()) {
    return absl::DataLossError(absl::StrCat(
        "positional value row: ", reader.remaining(), " trailing bytes after ",
        types_.size(), " columns at offset ", reader.position()));
  }
  return absl::OkStatus();
}

}  // namespace backfill
