#include "serde/internal/nested_payload.h"

#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "serde/jsonb.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace serde_internal {
namespace {

void AppendVarint(uint64_t value, std::string* out) {
  char buffer[kMaxVarintBytes];
  out->append(buffer, WriteVarint(value, buffer) - buffer);
}

// Flag byte, then the payload of a non-NULL datum.
void AppendFlagged(const Datum& datum, const ColumnType& type, StructForm form,
                   std::string* out) {
  if (IsNull(datum)) {
    out->push_back(0);
    return;
  }
  out->push_back(1);
  AppendTypedPayload(datum, type, form, out);
}

absl::Status ReadFlagged(PayloadReader& reader, const ColumnType& type,
                         StructForm form, Datum* out) {
  uint8_t flag;
  if (!reader.ReadFixed(&flag)) {
    return reader.Error(
        absl::StrCat("truncated ", type.DebugString(), ": expected a flag"));
  }
  if (flag == 0) {
    out->emplace<std::monostate>();
    return absl::OkStatus();
  }
  if (flag != 1) {
    return absl::DataLossError(absl::StrCat(
        "null flag ", flag, " is not 0 or 1 at offset ", reader.offset() - 1));
  }
  return ReadTypedPayload(reader, type, form, out);
}

// A varint count of things that take at least one byte each.
absl::Status ReadCount(PayloadReader& reader, absl::string_view what,
                       uint64_t* count) {
  const size_t start = reader.offset();
  BACKFILL_RETURN_IF_ERROR(reader.ReadVarint(what, count));
  if (*count > reader.remaining()) {
    return absl::DataLossError(absl::StrCat(what, " ", *count, " but only ",
                                            reader.remaining(),
                                            " bytes left at offset ", start));
  }
  return absl::OkStatus();
}

absl::Status ReadColumnAwareStruct(PayloadReader& reader,
                                   const ColumnType& type, Datum* out) {
  const absl::Span<const StructField> fields = type.fields();
  uint64_t count;
  BACKFILL_RETURN_IF_ERROR(ReadCount(reader, "STRUCT field count", &count));
  StructValue value;
  value.fields.resize(fields.size());
  std::vector<bool> present(fields.size(), false);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t id_offset = reader.offset();
    uint64_t id, length;
    BACKFILL_RETURN_IF_ERROR(reader.ReadVarint("STRUCT field id", &id));
    if (id > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return absl::DataLossError(absl::StrCat(
          "STRUCT field id ", id, " out of range at offset ", id_offset));
    }
    BACKFILL_RETURN_IF_ERROR(reader.ReadVarint("STRUCT field length", &length));
    if (length > reader.remaining()) {
      return absl::DataLossError(absl::StrCat(
          "STRUCT field of length ", length, " but only ", reader.remaining(),
          " bytes left at offset ", reader.offset()));
    }
    const absl::string_view span(reader.current(), static_cast<size_t>(length));
    const size_t span_offset = reader.offset();
    reader.Skip(static_cast<size_t>(length));
    size_t index = 0;
    while (index < fields.size() &&
           fields[index].id != static_cast<int32_t>(id)) {
      ++index;
    }
    if (index == fields.size()) continue;  // dropped since: skip
    if (present[index]) {
      return absl::DataLossError(absl::StrCat(
          "STRUCT field id ", id, " appears twice at offset ", id_offset));
    }
    present[index] = true;
    if (length == 0) continue;  // NULL
    PayloadReader field_reader(span, span_offset);
    BACKFILL_RETURN_IF_ERROR(ReadTypedPayload(field_reader, fields[index].type,
                                              StructForm::kColumnAware,
                                              &value.fields[index]));
    if (!field_reader.AtEnd()) {
      return field_reader.Error(absl::StrCat(
          field_reader.remaining(), " trailing bytes in STRUCT field ", id));
    }
  }
  *out = std::move(value);  // fields absent from the payload stay NULL
  return absl::OkStatus();
}

absl::Status ReadJsonbPayload(PayloadReader& reader, Datum* out) {
  const size_t start = reader.offset();
  uint64_t length;
  BACKFILL_RETURN_IF_ERROR(ReadCount(reader, "JSONB length", &length));
  const absl::string_view text(reader.current(), static_cast<size_t>(length));
  reader.Skip(static_cast<size_t>(length));
  absl::StatusOr<Jsonb> value = ParseJsonb(text);
  if (!value.ok()) {
    return absl::DataLossError(absl::StrCat("JSONB payload at offset ", start,
                                            ": ", value.status().message()));
  }
  if (value->ToString() != text) {
    return absl::DataLossError(
        absl::StrCat("JSONB payload at offset ", start, " is not canonical"));
  }
  *out = *std::move(value);
  return absl::OkStatus();
}

absl::Status ReadMapPayload(PayloadReader& reader, const ColumnType& type,
                            StructForm form, Datum* out) {
  uint64_t count;
  BACKFILL_RETURN_IF_ERROR(ReadCount(reader, "MAP entry count", &count));
  MapValue map;
  map.entries.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < map.entries.size(); ++i) {
    const size_t key_offset = reader.offset();
    BACKFILL_RETURN_IF_ERROR(
        ReadTypedPayload(reader, type.map_key(), form, &map.entries[i].key));
    if (i > 0 && CompareDatums(map.entries[i - 1].key, map.entries[i].key,
                               OrderType::Ascending()) >= 0) {
      return absl::DataLossError(absl::StrCat(
          "MAP keys not strictly ascending at offset ", key_offset));
    }
    BACKFILL_RETURN_IF_ERROR(
        ReadFlagged(reader, type.map_value(), form, &map.entries[i].value));
  }
  *out = std::move(map);
  return absl::OkStatus();
}

}  // namespace

bool HasTypedPayload(const ColumnType& type) {
  return type.is_nested() || type.id() == DataType::kJsonb;
}

void AppendTypedPayload(const Datum& datum, const ColumnType& type,
                        StructForm form, std::string* out) {
  switch (type.id()) {
    case DataType::kList: {
      const std::vector<Datum>& elements = std::get<ListValue>(datum).elements;
      AppendVarint(elements.size(), out);
      for (const Datum& element : elements) {
        AppendFlagged(element, type.element(), form, out);
      }
      return;
    }
    case DataType::kStruct: {
      const std::vector<Datum>& values = std::get<StructValue>(datum).fields;
      const absl::Span<const StructField> fields = type.fields();
      if (form == StructForm::kPositional) {
        for (size_t i = 0; i < fields.size(); ++i) {
          AppendFlagged(values[i], fields[i].type, form, out);
        }
        return;
      }
      AppendVarint(fields.size(), out);
      std::string payload;
      for (size_t i = 0; i < fields.size(); ++i) {
        AppendVarint(static_cast<uint64_t>(fields[i].id), out);
        payload.clear();
        if (!IsNull(values[i])) {
          AppendTypedPayload(values[i], fields[i].type, form, &payload);
        }
        AppendVarint(payload.size(), out);
        out->append(payload);
      }
      return;
    }
    case DataType::kMap: {
      const std::vector<MapEntry>& entries = std::get<MapValue>(datum).entries;
      AppendVarint(entries.size(), out);
      for (const MapEntry& entry : entries) {
        AppendTypedPayload(entry.key, type.map_key(), form, out);
        AppendFlagged(entry.value, type.map_value(), form, out);
      }
      return;
    }
    case DataType::kJsonb: {
      const std::string text = std::get<Jsonb>(datum).ToString();
      AppendVarint(text.size(), out);
      out->append(text);
      return;
    }
    default:
      AppendPayload(datum, type.id(), out);
  }
}

absl::Status ReadTypedPayload(PayloadReader& reader, const ColumnType& type,
                              StructForm form, Datum* out) {
  switch (type.id()) {
    case DataType::kList: {
      uint64_t count;
      BACKFILL_RETURN_IF_ERROR(ReadCount(reader, "LIST length", &count));
      ListValue list;
      list.elements.resize(static_cast<size_t>(count));
      for (Datum& element : list.elements) {
        BACKFILL_RETURN_IF_ERROR(
            ReadFlagged(reader, type.element(), form, &element));
      }
      *out = std::move(list);
      return absl::OkStatus();
    }
    case DataType::kStruct: {
      if (form == StructForm::kColumnAware) {
        return ReadColumnAwareStruct(reader, type, out);
      }
      StructValue value;
      value.fields.resize(type.fields().size());
      for (size_t i = 0; i < value.fields.size(); ++i) {
        BACKFILL_RETURN_IF_ERROR(
            ReadFlagged(reader, type.fields()[i].type, form, &value.fields[i]));
      }
      *out = std::move(value);
      return absl::OkStatus();
    }
    case DataType::kMap:
      return ReadMapPayload(reader, type, form, out);
    case DataType::kJsonb:
      return ReadJsonbPayload(reader, out);
    default:
      return reader.Read(type.id(), out);
  }
}

}  // namespace serde_internal
}  // namespace backfill
