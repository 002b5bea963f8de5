// PositionalCodec: RisingWave's BasicSerde value rows. Per datum, in schema
// order: one flag byte (0 = NULL, 1 = present), then for a present datum its
// payload (zigzag varint integers, dates and times; 4 / 8-byte LE floats;
// varint length + bytes for strings; a compact decimal form). Layout in
// serde/FORMAT.md (never change: persisted). Decoding needs exactly the
// writer's schema.
//
//   auto codec = PositionalCodec::Create({{"id", DataType::kInt64, 1}});
//   std::string bytes; (*codec)->Encode({int64_t{7}}, &bytes);  // "01 0e"
//   absl::StatusOr<Row> row = (*codec)->Decode(bytes);
#ifndef SERDE_POSITIONAL_CODEC_H_
#define SERDE_POSITIONAL_CODEC_H_

#include <memory>
#include <vector>

#include "serde/value_row_codec.h"

namespace backfill {

class PositionalCodec final : public ValueRowCodec {
 public:
  // Errors: InvalidArgument if ValidateSchema(schema) fails.
  static absl::StatusOr<std::unique_ptr<PositionalCodec>> Create(Schema schema);

  ValueRowEncoding encoding() const override {
    return ValueRowEncoding::kPositional;
  }
  const Schema& schema() const override { return schema_; }
  void Encode(RowView row, std::string* out) const override;
  absl::StatusOr<Row> Decode(absl::string_view bytes) const override;
  // Errors: DataLoss for a bad flag byte, a truncated or invalid payload, or
  // bytes left over after the last column.
  absl::Status DecodeInto(absl::string_view bytes, Row* out) const override;
  // Decodes each datum in its column's new last slot (the scan's path into
  // a chunk: no Row, no copy). Errors as DecodeInto's.
  absl::Status DecodeAppend(
      absl::string_view bytes,
      absl::Span<std::vector<Datum>> columns) const override;

 private:
  explicit PositionalCodec(Schema schema);
  // Encode when a column is a LIST or STRUCT (payloads built one by one).
  void EncodeNested(RowView row, std::string* out) const;
  // The common case without error reporting; false on any problem, after
  // which DecodeChecked produces the precise error.
  // Column i's datum goes to sink_of(i) (a serde_internal::payload_fast
  // IntoDatum or AppendTo), called once per column in order.
  template <typename SinkOf>
  bool DecodeFast(absl::string_view bytes, SinkOf sink_of) const;
  absl::Status DecodeChecked(absl::string_view bytes, Row* out) const;

  Schema schema_;
  std::vector<DataType> types_;
  // Datum alternative index of each column's type.
  std::vector<uint8_t> datum_index_;
  // Whether a column is a LIST or STRUCT: such rows take the checked paths.
  bool has_nested_ = false;
};

}  // namespace backfill

#endif  // SERDE_POSITIONAL_CODEC_H_
