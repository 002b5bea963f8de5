// ValueRowCodec: the interface of a value-row encoding (the bytes stored as
// the value of a state-table row), so a state table can take either
// implementation. Most users include serde/value_codec.h, which also has the
// factory.
//
//   std::unique_ptr<ValueRowCodec> codec = ...;   // MakeValueRowCodec
//   std::string bytes; codec->Encode(row, &bytes);
//   absl::StatusOr<Row> back = codec->Decode(bytes);
#ifndef SERDE_VALUE_ROW_CODEC_H_
#define SERDE_VALUE_ROW_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "serde/row.h"
#include "serde/schema.h"

namespace backfill {

// The value encodings. The numeric values may be persisted in catalogs:
// never change them.
enum class ValueRowEncoding : uint8_t {
  // RisingWave's BasicSerde: flag byte + payload per datum, in schema order.
  kPositional = 1,
  // RisingWave's ColumnAwareSerde: column ids + offsets; tolerates added and
  // dropped columns.
  kColumnAware = 2,
};

// "POSITIONAL" / "COLUMN_AWARE".
absl::string_view ValueRowEncodingName(ValueRowEncoding encoding);

// Encodes and decodes whole rows of one schema (the codec's schema).
// Implementations are immutable after creation and thread-safe.
class ValueRowCodec {
 public:
  virtual ~ValueRowCodec() = default;

  virtual ValueRowEncoding encoding() const = 0;
  // The schema rows are encoded with and decoded into.
  virtual const Schema& schema() const = 0;

  // Appends the encoding of `row` to *out (never clears it).
  // REQUIRES: row.size() == schema().size() and each datum is NULL or of its
  // column's type (ValidateRow; checked by assert only, and a release build
  // encodes a mismatching datum as NULL).
  virtual void Encode(RowView row, std::string* out) const = 0;

  // Decodes a whole value into a row of schema().size() datums.
  // Errors: DataLoss naming the byte offset, the column and what was
  // expected; never reads outside `bytes`.
  virtual absl::StatusOr<Row> Decode(absl::string_view bytes) const = 0;

  // As Decode, into *out (resized), reusing its storage: the fast path for
  // scans. On error *out holds unspecified datums.
  virtual absl::Status DecodeInto(absl::string_view bytes, Row* out) const = 0;

  // As Decode, appending datum c of the row to (*columns)[c]: decodes
  // straight into column-major storage (a chunk being built) with no Row in
  // between. On error the columns are as they were. The default decodes a
  // Row and moves its datums; implementations may write in place.
  // REQUIRES: columns.size() == schema().size().
  virtual absl::Status DecodeAppend(
      absl::string_view bytes, absl::Span<std::vector<Datum>> columns) const;
};

}  // namespace backfill

#endif  // SERDE_VALUE_ROW_CODEC_H_
