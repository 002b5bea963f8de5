#include "serde/column_aware_codec.h"

#include <cassert>
#include <cstring>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "serde/internal/nested_payload.h"
#include "serde/internal/value_payload.h"

namespace backfill {
namespace {

using serde_internal::DatumIndexOf;
using serde_internal::PayloadReader;
using serde_internal::PayloadSize;
using serde_internal::WritePayload;

// Header: the magic bit (distinguishes a column-aware row from a positional
// one, whose first byte is 0 or 1) and the offset width. Never change.
constexpr uint8_t kMagic = 0x80;
constexpr uint8_t kWidthMask = 0x03;
constexpr uint8_t kOffset8 = 1;
constexpr uint8_t kOffset16 = 2;
constexpr uint8_t kOffset32 = 3;

absl::Status Corrupt(absl::string_view what, size_t offset) {
  return absl::DataLossError(
      absl::StrCat("column-aware value row: ", what, " at offset ", offset));
}

template <typename T>
void AppendLittleEndian(T value, char* out) {
  std::memcpy(out, &value, sizeof(T));
}

uint32_t ReadOffset(const char* p, int width) {
  switch (width) {
    case 1:
      return static_cast<uint8_t>(*p);
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ColumnAwareCodec>> ColumnAwareCodec::Create(
    Schema schema, ColumnAwareOptions options) {
  if (absl::Status status = ValidateSchema(schema); !status.ok()) {
    return status;
  }
  if (!options.defaults.empty()) {
    if (options.defaults.size() != schema.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ColumnAwareCodec: ", options.defaults.size(),
                       " defaults for ", schema.size(), " columns"));
    }
    for (size_t i = 0; i < schema.size(); ++i) {
      if (!DatumMatchesColumnType(options.defaults[i], schema[i].type)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ColumnAwareCodec: default of column ", i, " \"", schema[i].name,
            "\" is not a ", schema[i].type.DebugString(), ": ",
            DatumDebugString(options.defaults[i])));
      }
    }
  }
  return std::unique_ptr<ColumnAwareCodec>(
      new ColumnAwareCodec(std::move(schema), std::move(options)));
}

ColumnAwareCodec::ColumnAwareCodec(Schema schema, ColumnAwareOptions options)
    : schema_(std::move(schema)),
      types_(ColumnTypes(schema_)),
      defaults_(std::move(options.defaults)) {
  encoded_ids_.resize(4 * schema_.size());
  for (size_t i = 0; i < schema_.size(); ++i) {
    AppendLittleEndian<int32_t>(schema_[i].column_id, &encoded_ids_[4 * i]);
    index_of_id_[schema_[i].column_id] = static_cast<int>(i);
    datum_index_.push_back(static_cast<uint8_t>(DatumIndexOf(schema_[i].type)));
    has_nested_ = has_nested_ || serde_internal::HasTypedPayload(schema_[i].type);
  }
}

void ColumnAwareCodec::EncodeNested(RowView row, std::string* out) const {
  const size_t n = types_.size();
  std::vector<std::string> payloads(n);
  size_t data_size = 0;
  for (size_t i = 0; i < n; ++i) {
    if (row[i].index() != datum_index_[i]) {
      assert(IsNull(row[i]) &&
             "ColumnAwareCodec: datum does not match its type");
      continue;
    }
    serde_internal::AppendTypedPayload(row[i], schema_[i].type,
                                       serde_internal::StructForm::kColumnAware,
                                       &payloads[i]);
    data_size += payloads[i].size();
  }
  const uint8_t width_code = data_size <= 0xFF     ? kOffset8
                             : data_size <= 0xFFFF ? kOffset16
                                                   : kOffset32;
  char header[5];
  header[0] = static_cast<char>(kMagic | width_code);
  AppendLittleEndian<uint32_t>(static_cast<uint32_t>(n), header + 1);
  out->append(header, 5);
  out->append(encoded_ids_);
  uint32_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    char bytes[4];
    switch (width_code) {
      case kOffset8:
        out->push_back(static_cast<char>(offset));
        break;
      case kOffset16:
        AppendLittleEndian<uint16_t>(static_cast<uint16_t>(offset), bytes);
        out->append(bytes, 2);
        break;
      default:
        AppendLittleEndian<uint32_t>(offset, bytes);
        out->append(bytes, 4);
        break;
    }
    offset += static_cast<uint32_t>(payloads[i].size());
  }
  for (const std::string& payload : payloads) out->append(payload);
}

void ColumnAwareCodec::Encode(RowView row, std::string* out) const {
  assert(row.size() == types_.size());
  if (has_nested_) return EncodeNested(row, out);
  const size_t n = types_.size();
  // Sizes first: the offset width depends on the data length.
  size_t data_size = 0;
  for (size_t i = 0; i < n; ++i) {
    if (row[i].index() != datum_index_[i]) {
      assert(IsNull(row[i]) &&
             "ColumnAwareCodec: datum does not match its type");
      continue;
    }
    data_size += PayloadSize(row[i], types_[i]);
  }
  const uint8_t width_code = data_size <= 0xFF     ? kOffset8
                             : data_size <= 0xFFFF ? kOffset16
                                                   : kOffset32;
  const int width = width_code == kOffset8    ? 1
                    : width_code == kOffset16 ? 2
                                              : 4;
  const size_t start = out->size();
  const size_t header_size = 1 + 4 + encoded_ids_.size() + width * n;
  // Room for WritePayload's 8-byte stores past the last datum, trimmed below.
  out->resize(start + header_size + data_size +
              serde_internal::kWritePayloadSlack);
  char* p = out->data() + start;
  *p++ = static_cast<char>(kMagic | width_code);
  AppendLittleEndian<uint32_t>(static_cast<uint32_t>(n), p);
  p += 4;
  std::memcpy(p, encoded_ids_.data(), encoded_ids_.size());
  char* offsets = p + encoded_ids_.size();
  char* const data = offsets + width * n;
  char* q = data;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t offset = static_cast<uint32_t>(q - data);
    switch (width) {
      case 1:
        offsets[i] = static_cast<char>(offset);
        break;
      case 2:
        AppendLittleEndian<uint16_t>(static_cast<uint16_t>(offset),
                                     offsets + 2 * i);
        break;
      default:
        AppendLittleEndian<uint32_t>(offset, offsets + 4 * i);
        break;
    }
    if (row[i].index() == datum_index_[i]) q = WritePayload(row[i], q);
  }
  assert(static_cast<size_t>(q - data) == data_size);
  out->resize(start + header_size + data_size);
}

absl::StatusOr<Row> ColumnAwareCodec::Decode(absl::string_view bytes) const {
  Row row;
  if (absl::Status status = DecodeInto(bytes, &row); !status.ok()) {
    return status;
  }
  return row;
}

template <typename SinkOf>
bool ColumnAwareCodec::DecodeExactSchema(absl::string_view bytes,
                                         SinkOf sink_of) const {
  if (bytes.empty()) return false;
  const uint8_t header = static_cast<uint8_t>(bytes[0]);
  if ((header & ~kWidthMask) != kMagic || (header & kWidthMask) == 0) {
    return false;
  }
  const int width = (header & kWidthMask) == kOffset8    ? 1
                    : (header & kWidthMask) == kOffset16 ? 2
                                                         : 4;
  const size_t n = types_.size();
  const size_t offsets_at = 5 + encoded_ids_.size();
  const size_t data_at = offsets_at + static_cast<size_t>(width) * n;
  if (bytes.size() < data_at) return false;
  uint32_t count;
  std::memcpy(&count, bytes.data() + 1, 4);
  if (count != n || std::memcmp(bytes.data() + 5, encoded_ids_.data(),
                                encoded_ids_.size()) != 0) {
    return false;
  }
  const char* const offsets = bytes.data() + offsets_at;
  const char* const data = bytes.data() + data_at;
  const size_t data_size = bytes.size() - data_at;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t begin = ReadOffset(offsets + width * i, width);
    const uint32_t end = i + 1 < n
                             ? ReadOffset(offsets + width * (i + 1), width)
                             : static_cast<uint32_t>(data_size);
    if (begin > end || end > data_size) return false;
    const auto sink = sink_of(i);
    if (begin == end) {
      sink.Set(std::monostate());
      continue;
    }
    // Bounded by the end of the data rather than of the span, so that the
    // varint reader can load 8 bytes at once; the datum must still end
    // exactly at its span's end.
    const char* p = data + begin;
    if (!serde_internal::ReadPayloadInto(types_[i], p, data + data_size,
                                         sink) ||
        p != data + end) {
      return false;
    }
  }
  return true;
}

absl::Status ColumnAwareCodec::DecodeAppend(
    absl::string_view bytes, absl::Span<std::vector<Datum>> columns) const {
  if (has_nested_ || columns.size() != types_.size()) {
    return ValueRowCodec::DecodeAppend(bytes, columns);
  }
  if (serde_internal::payload_fast::AppendRowOrUndo(columns, [&](auto sink_of) {
        return DecodeExactSchema(bytes, sink_of);
      })) {
    return absl::OkStatus();
  }
  // Another schema version, or a problem that the checked decoder names.
  return ValueRowCodec::DecodeAppend(bytes, columns);
}

absl::Status ColumnAwareCodec::DecodeInto(absl::string_view bytes,
                                          Row* out) const {
  out->resize(types_.size());
  if (!has_nested_ &&
      ABSL_PREDICT_TRUE(DecodeExactSchema(bytes, [out](size_t i) {
        return serde_internal::payload_fast::IntoDatum{&(*out)[i]};
      }))) {
    return absl::OkStatus();
  }
  if (bytes.empty()) return Corrupt("empty input, expected a header", 0);
  const uint8_t header = static_cast<uint8_t>(bytes[0]);
  if ((header & ~kWidthMask) != kMagic || (header & kWidthMask) == 0) {
    return Corrupt(absl::StrCat("header 0x", absl::Hex(header, absl::kZeroPad2),
                                " is not 0x81, 0x82 or 0x83"),
                   0);
  }
  const int width = (header & kWidthMask) == kOffset8    ? 1
                    : (header & kWidthMask) == kOffset16 ? 2
                                                         : 4;
  if (bytes.size() < 5)
    return Corrupt("truncated, expected a u32 datum count", 1);
  uint32_t count;
  std::memcpy(&count, bytes.data() + 1, 4);
  const uint64_t ids_at = 5;
  const uint64_t offsets_at = ids_at + uint64_t{4} * count;
  const uint64_t data_at =
      offsets_at + uint64_t{static_cast<unsigned>(width)} * count;
  if (data_at > bytes.size()) {
    return Corrupt(absl::StrCat("datum count ", count, " needs ", data_at,
                                " header bytes but the row has ", bytes.size()),
                   1);
  }
  const uint64_t data_size = bytes.size() - data_at;
  const char* ids = bytes.data() + ids_at;
  const char* offsets = bytes.data() + offsets_at;
  const char* data = bytes.data() + data_at;

  // The datum of encoded column i spans [offset(i), offset(i + 1)).
  auto span_of = [&](uint32_t i, uint32_t* begin,
                     uint32_t* end) -> absl::Status {
    *begin = ReadOffset(offsets + width * i, width);
    *end = i + 1 < count ? ReadOffset(offsets + width * (i + 1), width)
                         : static_cast<uint32_t>(data_size);
    if (*begin > data_size || *end > data_size || *begin > *end) {
      return Corrupt(absl::StrCat("datum ", i, " spans [", *begin, ", ", *end,
                                  ") outside data of ", data_size, " bytes"),
                     offsets_at + width * i);
    }
    return absl::OkStatus();
  };
  auto decode_datum = [&](uint32_t i, int column, uint32_t begin,
                          uint32_t end) -> absl::Status {
    Datum& target = (*out)[column];
    if (begin == end) {
      target.emplace<std::monostate>();
      return absl::OkStatus();
    }
    PayloadReader reader(absl::string_view(data + begin, end - begin),
                         data_at + begin);
    absl::Status status = serde_internal::ReadTypedPayload(
        reader, schema_[column].type, serde_internal::StructForm::kColumnAware,
        &target);
    if (status.ok() && !reader.AtEnd()) {
      status = reader.Error(
          absl::StrCat(reader.remaining(), " trailing payload bytes"));
    }
    if (!status.ok()) {
      return absl::DataLossError(
          absl::StrCat("column-aware value row: ", status.message(), " (datum ",
                       i, ", column ", column, " \"", schema_[column].name,
                       "\": ", schema_[column].type.DebugString(), ")"));
    }
    return absl::OkStatus();
  };

  const size_t n = types_.size();
  // Written with exactly this schema: nested columns, or a problem that
  // DecodeExactSchema found and this loop names.
  if (count == n &&
      std::memcmp(ids, encoded_ids_.data(), encoded_ids_.size()) == 0) {
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t begin, end;
      if (absl::Status s = span_of(i, &begin, &end); !s.ok()) return s;
      if (absl::Status s = decode_datum(i, static_cast<int>(i), begin, end);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  // Schema evolution: match by column id.
  std::vector<bool> present(n, false);
  for (uint32_t i = 0; i < count; ++i) {
    int32_t id;
    std::memcpy(&id, ids + 4 * i, 4);
    uint32_t begin, end;
    if (absl::Status s = span_of(i, &begin, &end); !s.ok()) return s;
    const auto it = index_of_id_.find(id);
    if (it == index_of_id_.end()) continue;  // dropped since: skip
    const int column = it->second;
    if (present[column]) {
      return Corrupt(absl::StrCat("column id ", id, " appears twice"),
                     ids_at + 4 * i);
    }
    present[column] = true;
    if (absl::Status s = decode_datum(i, column, begin, end); !s.ok()) return s;
  }
  for (size_t column = 0; column < n; ++column) {
    if (present[column]) continue;
    if (defaults_.empty()) {
      (*out)[column].emplace<std::monostate>();
    } else {
      (*out)[column] = defaults_[column];
    }
  }
  return absl::OkStatus();
}

}  // namespace backfill
