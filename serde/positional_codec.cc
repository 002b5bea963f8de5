#include "serde/positional_codec.h"

#include <cassert>
#include <cstring>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "serde/internal/nested_payload.h"
#include "serde/internal/value_payload.h"

namespace backfill {

using serde_internal::AssignString;
using serde_internal::DatumIndexOf;
using serde_internal::PayloadReader;
using serde_internal::PayloadSizeBound;
using serde_internal::WritePayload;

absl::StatusOr<std::unique_ptr<PositionalCodec>> PositionalCodec::Create(
    Schema schema) {
  if (absl::Status status = ValidateSchema(schema); !status.ok()) {
    return status;
  }
  return std::unique_ptr<PositionalCodec>(
      new PositionalCodec(std::move(schema)));
}

PositionalCodec::PositionalCodec(Schema schema)
    : schema_(std::move(schema)), types_(ColumnTypes(schema_)) {
  for (DataType type : types_) {
    datum_index_.push_back(static_cast<uint8_t>(DatumIndexOf(type)));
  }
  for (const ColumnDesc& column : schema_) {
    has_nested_ = has_nested_ || serde_internal::HasTypedPayload(column.type);
  }
}

void PositionalCodec::EncodeNested(RowView row, std::string* out) const {
  for (size_t i = 0; i < types_.size(); ++i) {
    if (row[i].index() != datum_index_[i]) {
      assert(IsNull(row[i]) &&
             "PositionalCodec: datum does not match its type");
      out->push_back(0);
      continue;
    }
    out->push_back(1);
    serde_internal::AppendTypedPayload(
        row[i], schema_[i].type, serde_internal::StructForm::kPositional, out);
  }
}

void PositionalCodec::Encode(RowView row, std::string* out) const {
  assert(row.size() == types_.size());
  if (has_nested_) return EncodeNested(row, out);
  const size_t n = types_.size();
  // One resize to an upper bound, raw writes, one shrink: no per-byte
  // capacity checks.
  size_t bound = n;
  for (size_t i = 0; i < n; ++i) {
    if (row[i].index() == datum_index_[i]) bound += PayloadSizeBound(row[i]);
  }
  const size_t start = out->size();
  out->resize(start + bound);
  char* const begin = out->data();
  char* p = begin + start;
  for (size_t i = 0; i < n; ++i) {
    const Datum& datum = row[i];
    if (datum.index() != datum_index_[i]) {
      assert(IsNull(datum) && "PositionalCodec: datum does not match its type");
      *p++ = 0;
      continue;
    }
    *p++ = 1;
    p = WritePayload(datum, p);
  }
  out->resize(static_cast<size_t>(p - begin));
}

absl::StatusOr<Row> PositionalCodec::Decode(absl::string_view bytes) const {
  Row row;
  if (absl::Status status = DecodeInto(bytes, &row); !status.ok()) {
    return status;
  }
  return row;
}

template <typename SinkOf>
bool PositionalCodec::DecodeFast(absl::string_view bytes,
                                 SinkOf sink_of) const {
  const size_t n = types_.size();
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  for (size_t i = 0; i < n; ++i) {
    if (p == end) return false;
    const char flag = *p++;
    const auto sink = sink_of(i);
    if (flag == 0) {
      sink.Set(std::monostate());
      continue;
    }
    if (flag != 1) return false;
    if (!serde_internal::ReadPayloadInto(types_[i], p, end, sink)) {
      return false;
    }
  }
  return p == end;
}

absl::Status PositionalCodec::DecodeInto(absl::string_view bytes,
                                         Row* out) const {
  if (has_nested_) return DecodeChecked(bytes, out);
  out->resize(types_.size());
  if (ABSL_PREDICT_TRUE(DecodeFast(bytes, [out](size_t i) {
        return serde_internal::payload_fast::IntoDatum{&(*out)[i]};
      }))) {
    return absl::OkStatus();
  }
  absl::Status status = DecodeChecked(bytes, out);
  assert(!status.ok() && "DecodeFast and DecodeChecked disagree");
  if (status.ok()) {
    status = absl::InternalError("positional value row: decoders disagree");
  }
  return status;
}

absl::Status PositionalCodec::DecodeAppend(
    absl::string_view bytes, absl::Span<std::vector<Datum>> columns) const {
  assert(columns.size() == types_.size());
  if (has_nested_ || columns.size() != types_.size()) {
    return ValueRowCodec::DecodeAppend(bytes, columns);
  }
  if (serde_internal::payload_fast::AppendRowOrUndo(
          columns, [&](auto sink_of) { return DecodeFast(bytes, sink_of); })) {
    return absl::OkStatus();
  }
  // The checked decoder names the problem.
  Row row;
  absl::Status status = DecodeChecked(bytes, &row);
  assert(!status.ok() && "DecodeFast and DecodeChecked disagree");
  if (status.ok()) {
    status = absl::InternalError("positional value row: decoders disagree");
  }
  return status;
}

absl::Status PositionalCodec::DecodeChecked(absl::string_view bytes,
                                            Row* out) const {
  out->resize(types_.size());
  PayloadReader reader(bytes);
  for (size_t i = 0; i < types_.size(); ++i) {
    auto column_error = [&](const absl::Status& status) {
      return absl::DataLossError(absl::StrCat(
          "positional value row: ", status.message(), " (column ", i, " \"",
          schema_[i].name, "\": ", schema_[i].type.DebugString(), ")"));
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
    if (absl::Status status = serde_internal::ReadTypedPayload(
            reader, schema_[i].type, serde_internal::StructForm::kPositional,
            &(*out)[i]);
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
