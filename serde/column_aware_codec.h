// ColumnAwareCodec: RisingWave's ColumnAwareSerde value rows, for tables whose
// schema evolves. A row records the column id of every datum, so a reader
// with the *current* schema decodes rows written under older or newer
// schemas: columns added since the row was written decode as NULL (or the
// column's default, see ColumnAwareOptions), columns dropped since are
// skipped. Layout (serde/FORMAT.md, never change: persisted):
//   header u8 (0x80 | offset width: 1 = u8, 2 = u16, 3 = u32), u32 LE datum
//   count n, n x i32 LE column id, n x offset (start of each datum in the
//   data), data (the value payloads; NULL is zero-length).
//
//   auto codec = ColumnAwareCodec::Create(schema_v2, {});
//   std::string bytes; (*codec)->Encode(row_v2, &bytes);
//   absl::StatusOr<Row> row = (*codec)->Decode(bytes_written_by_v1);
#ifndef SERDE_COLUMN_AWARE_CODEC_H_
#define SERDE_COLUMN_AWARE_CODEC_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "serde/value_row_codec.h"

namespace backfill {

struct ColumnAwareOptions {
  // The value given to a column of the current schema that a decoded row
  // does not have (added after the row was written). Empty (the default):
  // NULL for every such column. Otherwise one datum per schema column, NULL
  // or of the column's type.
  std::vector<Datum> defaults;
};

class ColumnAwareCodec final : public ValueRowCodec {
 public:
  // Errors: InvalidArgument if ValidateSchema(schema) fails, or the defaults
  // are neither empty nor one per column of the column's type.
  static absl::StatusOr<std::unique_ptr<ColumnAwareCodec>> Create(
      Schema schema, ColumnAwareOptions options = {});

  ValueRowEncoding encoding() const override {
    return ValueRowEncoding::kColumnAware;
  }
  const Schema& schema() const override { return schema_; }
  void Encode(RowView row, std::string* out) const override;
  absl::StatusOr<Row> Decode(absl::string_view bytes) const override;
  // Errors: DataLoss for a bad header, counts or offsets that do not fit the
  // bytes, decreasing offsets, a column id appearing twice, or a datum whose
  // payload is invalid for its (current) column type or has trailing bytes.
  absl::Status DecodeInto(absl::string_view bytes, Row* out) const override;
  // Rows written with exactly this schema decode straight into the columns;
  // others (another schema version, nested columns) through a Row. Errors as
  // DecodeInto's.
  absl::Status DecodeAppend(
      absl::string_view bytes,
      absl::Span<std::vector<Datum>> columns) const override;

 private:
  ColumnAwareCodec(Schema schema, ColumnAwareOptions options);
  // Encode when a column is a LIST or STRUCT (payloads built one by one).
  void EncodeNested(RowView row, std::string* out) const;
  // A row written with exactly this schema and no nested columns, without
  // error reporting: false on any problem or any other row (the checked
  // decoder then decodes it or names the problem). Column i's datum goes to
  // sink_of(i) (a serde_internal::payload_fast IntoDatum or AppendTo),
  // called once per column in order.
  template <typename SinkOf>
  bool DecodeExactSchema(absl::string_view bytes, SinkOf sink_of) const;

  Schema schema_;
  std::vector<DataType> types_;
  // Datum alternative index of each column's type.
  std::vector<uint8_t> datum_index_;
  std::vector<Datum> defaults_;  // empty or one per column
  // Whether a column is a LIST or STRUCT.
  bool has_nested_ = false;
  // The n x i32 LE column ids of the schema, as encoded.
  std::string encoded_ids_;
  absl::flat_hash_map<int32_t, int> index_of_id_;
};

}  // namespace backfill

#endif  // SERDE_COLUMN_AWARE_CODEC_H_
