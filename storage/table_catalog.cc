#include "storage/table_catalog.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/utf8.h"
#include "serde/value_codec.h"
#include "serde/vnode.h"
#include "storage/catalog.pb.h"

namespace backfill {
namespace {

std::string TableName(const TableCatalog& catalog) {
  return absl::StrCat("table ", catalog.table_id, " (", catalog.name, ")");
}

absl::Status Invalid(const TableCatalog& catalog, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(TableName(catalog), ": ", what));
}

bool IsNestedType(DataType type) {
  return type == DataType::kStruct || type == DataType::kList ||
         type == DataType::kMap;
}

absl::StatusOr<ColumnType> TypeFromProto(int type_value,
                                         const proto::NestedTypeCatalog* nested,
                                         const std::string& field, int depth);

absl::StatusOr<ColumnType> PartFromProto(const proto::TypeCatalog& part,
                                         const std::string& field, int depth) {
  return TypeFromProto(part.type(), part.has_nested() ? &part.nested() : nullptr,
                       field, depth);
}

// `field` names the type in errors ("columns[2] (tags).element").
absl::StatusOr<ColumnType> TypeFromProto(int type_value,
                                         const proto::NestedTypeCatalog* nested,
                                         const std::string& field, int depth) {
  const std::optional<DataType> type = DataTypeFromValue(type_value);
  if (!type.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".type = ", type_value, " is not a data type"));
  }
  if (!IsNestedType(*type)) {
    if (nested != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": ", DataTypeName(*type),
          " has nested parts (only STRUCT, LIST and MAP have)"));
    }
    return ColumnType(*type);
  }
  if (depth >= kMaxCatalogTypeDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": nested deeper than ", kMaxCatalogTypeDepth));
  }
  if (nested == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", DataTypeName(*type), " without its nested parts"));
  }
  const bool has_map_parts = nested->has_map_key() || nested->has_map_value();
  switch (*type) {
    case DataType::kList: {
      if (!nested->has_element() || nested->fields_size() > 0 ||
          has_map_parts) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": a LIST needs nested.element and nothing else"));
      }
      absl::StatusOr<ColumnType> element = PartFromProto(
          nested->element(), absl::StrCat(field, ".element"), depth + 1);
      if (!element.ok()) return element.status();
      return ColumnType::List(*std::move(element));
    }
    case DataType::kMap: {
      if (!nested->has_map_key() || !nested->has_map_value() ||
          nested->fields_size() > 0 || nested->has_element()) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": a MAP needs nested.map_key and nested.map_value and "
                   "nothing else"));
      }
      absl::StatusOr<ColumnType> key = PartFromProto(
          nested->map_key(), absl::StrCat(field, ".map_key"), depth + 1);
      if (!key.ok()) return key.status();
      absl::StatusOr<ColumnType> value = PartFromProto(
          nested->map_value(), absl::StrCat(field, ".map_value"), depth + 1);
      if (!value.ok()) return value.status();
      return ColumnType::Map(*std::move(key), *std::move(value));
    }
    default: {  // kStruct
      if (nested->fields_size() == 0 || nested->has_element() ||
          has_map_parts) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": a STRUCT needs at least one nested.fields and nothing "
                   "else"));
      }
      std::vector<StructField> fields;
      for (int i = 0; i < nested->fields_size(); ++i) {
        const proto::FieldCatalog& f = nested->fields(i);
        absl::StatusOr<ColumnType> field_type =
            PartFromProto(f.type(), absl::StrCat(field, ".fields[", i, "] (",
                                                 f.name(), ")"),
                          depth + 1);
        if (!field_type.ok()) return field_type.status();
        fields.push_back({f.name(), *std::move(field_type), f.id()});
      }
      return ColumnType::Struct(std::move(fields));
    }
  }
}

void NestedToProto(const ColumnType& type, proto::NestedTypeCatalog* out);

void PartToProto(const ColumnType& type, proto::TypeCatalog* out) {
  out->set_type(static_cast<proto::DataType>(type.id()));
  if (type.is_nested()) NestedToProto(type, out->mutable_nested());
}

void NestedToProto(const ColumnType& type, proto::NestedTypeCatalog* out) {
  switch (type.id()) {
    case DataType::kList:
      PartToProto(type.element(), out->mutable_element());
      break;
    case DataType::kMap:
      PartToProto(type.map_key(), out->mutable_map_key());
      PartToProto(type.map_value(), out->mutable_map_value());
      break;
    default:
      for (const StructField& field : type.fields()) {
        proto::FieldCatalog* f = out->add_fields();
        f->set_name(field.name);
        f->set_id(field.id);
        PartToProto(field.type, f->mutable_type());
      }
      break;
  }
}

}  // namespace

std::vector<int> TableCatalog::DistKeyInPk() const {
  std::vector<int> positions;
  for (int column : dist_key_indices) {
    auto it = std::find(pk_indices.begin(), pk_indices.end(), column);
    positions.push_back(static_cast<int>(it - pk_indices.begin()));
  }
  return positions;
}

std::vector<DataType> TableCatalog::PkTypes() const {
  std::vector<DataType> types;
  for (int column : pk_indices) types.push_back(columns[column].type);
  return types;
}

std::vector<ColumnType> TableCatalog::PkColumnTypes() const {
  std::vector<ColumnType> types;
  for (int column : pk_indices) types.push_back(columns[column].type);
  return types;
}

std::vector<std::pair<int, int>> TableCatalog::PkOnlyColumns() const {
  std::vector<std::pair<int, int>> pk_only;
  for (size_t i = 0; i < pk_indices.size(); ++i) {
    const int column = pk_indices[i];
    if (std::find(value_indices.begin(), value_indices.end(), column) ==
        value_indices.end()) {
      pk_only.emplace_back(static_cast<int>(i), column);
    }
  }
  return pk_only;
}

std::string TableCatalog::DebugString() const {
  std::vector<std::string> pk;
  for (size_t i = 0; i < pk_indices.size(); ++i) {
    pk.push_back(absl::StrCat(columns[pk_indices[i]].name, " ",
                              pk_orders[i].DebugString()));
  }
  return absl::StrCat(TableName(*this), " pk [", absl::StrJoin(pk, ", "),
                      "] dist [", absl::StrJoin(dist_key_indices, ", "),
                      "] vnodes ", vnode_count);
}

absl::Status ValidateTableCatalog(const TableCatalog& catalog) {
  if (catalog.columns.empty()) return Invalid(catalog, "columns is empty");
  if (catalog.table_id == kEpochPinTableId) {
    return Invalid(catalog,
                   absl::StrCat("table_id ", kEpochPinTableId,
                                " is reserved for the store's epoch pins"));
  }
  // Names are proto3 strings in catalog.proto: one that is not UTF-8 could
  // not be stored as a catalog and parsed back.
  if (!IsValidUtf8(catalog.name)) {
    return Invalid(catalog,
                   absl::StrCat("name \"", absl::CHexEscape(catalog.name),
                                "\" is not valid UTF-8"));
  }
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    if (!IsValidUtf8(catalog.columns[i].name)) {
      return Invalid(catalog,
                     absl::StrCat("columns[", i, "].name \"",
                                  absl::CHexEscape(catalog.columns[i].name),
                                  "\" is not valid UTF-8"));
    }
  }
  if (absl::Status status = ValidateSchema(catalog.columns); !status.ok()) {
    return Invalid(catalog, absl::StrCat("columns: ", status.message()));
  }
  const int num_columns = static_cast<int>(catalog.columns.size());
  if (catalog.pk_orders.size() != catalog.pk_indices.size()) {
    return Invalid(catalog,
                   absl::StrCat("primary_key has ", catalog.pk_indices.size(),
                                " columns but ", catalog.pk_orders.size(),
                                " order types"));
  }
  absl::flat_hash_set<int> pk_set;
  for (size_t i = 0; i < catalog.pk_indices.size(); ++i) {
    const int column = catalog.pk_indices[i];
    if (column < 0 || column >= num_columns) {
      return Invalid(catalog, absl::StrCat("primary_key[", i, "] = ", column,
                                           " is out of range (", num_columns,
                                           " columns)"));
    }
    if (!pk_set.insert(column).second) {
      return Invalid(catalog, absl::StrCat("primary_key[", i, "] = ", column,
                                           " appears twice"));
    }
    const ColumnType& type = catalog.columns[column].type;
    if (absl::Status status = ValidateKeyColumnType(type); !status.ok()) {
      return Invalid(catalog, absl::StrCat("primary_key[", i, "] = ", column,
                                           " (", catalog.columns[column].name,
                                           "): ", status.message()));
    }
  }
  absl::flat_hash_set<int> dist_set;
  for (size_t i = 0; i < catalog.dist_key_indices.size(); ++i) {
    const int column = catalog.dist_key_indices[i];
    if (!pk_set.contains(column)) {
      return Invalid(catalog,
                     absl::StrCat("distribution_key[", i, "] = ", column,
                                  " is not a primary-key column"));
    }
    if (!dist_set.insert(column).second) {
      return Invalid(catalog, absl::StrCat("distribution_key[", i,
                                           "] = ", column, " appears twice"));
    }
  }
  if (catalog.vnode_count < 1 || catalog.vnode_count > kMaxVnodeCount) {
    return Invalid(catalog,
                   absl::StrCat("vnode_count = ", catalog.vnode_count,
                                " is outside [1, ", kMaxVnodeCount, "]"));
  }
  for (size_t i = 0; i < catalog.value_indices.size(); ++i) {
    const int column = catalog.value_indices[i];
    if (column < 0 || column >= num_columns) {
      return Invalid(catalog, absl::StrCat("value_indices[", i, "] = ", column,
                                           " is out of range"));
    }
    if (i > 0 && column <= catalog.value_indices[i - 1]) {
      return Invalid(catalog, absl::StrCat("value_indices[", i, "] = ", column,
                                           " is not ascending"));
    }
  }
  if (catalog.value_indices.empty()) {
    return Invalid(catalog, "value_indices is empty");
  }
  // A column stored neither in the value nor in the key reads back as NULL,
  // so it must allow NULL, or the table would return rows its own schema
  // rejects (regression seed: table_catalog_fuzz's
  // regress_not_null_column_not_stored).
  for (int column = 0; column < num_columns; ++column) {
    const ColumnDesc& desc = catalog.columns[column];
    if (desc.nullable || pk_set.contains(column) ||
        std::find(catalog.value_indices.begin(), catalog.value_indices.end(),
                  column) != catalog.value_indices.end()) {
      continue;
    }
    return Invalid(catalog,
                   absl::StrCat("columns[", column, "] (", desc.name,
                                ") is NOT NULL but stored neither in "
                                "value_indices nor in the primary key (it "
                                "would read back as NULL)"));
  }
  if (catalog.vnode_column.has_value()) {
    const int column = *catalog.vnode_column;
    if (!pk_set.contains(column)) {
      return Invalid(catalog, absl::StrCat("vnode_column_index = ", column,
                                           " is not a primary-key column"));
    }
    if (catalog.columns[column].type != DataType::kInt16) {
      return Invalid(catalog, absl::StrCat("vnode_column_index = ", column,
                                           " is not an INT16 column"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TableCatalog> TableCatalogFromProto(
    const proto::TableCatalog& proto) {
  TableCatalog catalog;
  catalog.table_id = proto.table_id();
  catalog.name = proto.name();
  for (int i = 0; i < proto.columns_size(); ++i) {
    const proto::ColumnCatalog& column = proto.columns(i);
    absl::StatusOr<ColumnType> type = TypeFromProto(
        column.type(), column.has_nested() ? &column.nested() : nullptr,
        absl::StrCat("columns[", i, "] (", column.name(), ")"), /*depth=*/0);
    if (!type.ok()) return Invalid(catalog, type.status().message());
    catalog.columns.push_back(ColumnDesc{column.name(), *std::move(type),
                                         column.column_id(),
                                         column.nullable()});
  }
  for (int i = 0; i < proto.primary_key_size(); ++i) {
    const proto::KeyColumn& key = proto.primary_key(i);
    OrderType order =
        key.descending() ? OrderType::Descending() : OrderType::Ascending();
    switch (key.nulls()) {
      case proto::NULLS_DEFAULT:
        break;
      case proto::NULLS_FIRST:
        order.nulls = NullsOrder::kFirst;
        break;
      case proto::NULLS_LAST:
        order.nulls = NullsOrder::kLast;
        break;
      default:
        return Invalid(catalog, absl::StrCat("primary_key[", i, "].nulls = ",
                                             key.nulls(), " is unknown"));
    }
    catalog.pk_indices.push_back(
        static_cast<int>(std::min<uint32_t>(key.column_index(), 1u << 30)));
    catalog.pk_orders.push_back(order);
  }
  for (uint32_t column : proto.distribution_key()) {
    catalog.dist_key_indices.push_back(
        static_cast<int>(std::min<uint32_t>(column, 1u << 30)));
  }
  catalog.vnode_count =
      proto.vnode_count() == 0
          ? kDefaultVnodeCount
          : static_cast<int>(std::min<uint32_t>(proto.vnode_count(), 1u << 30));
  switch (proto.value_encoding()) {
    case proto::VALUE_ENCODING_POSITIONAL:
      catalog.value_encoding = ValueEncoding::kPositional;
      break;
    case proto::VALUE_ENCODING_COLUMN_AWARE:
      catalog.value_encoding = ValueEncoding::kColumnAware;
      break;
    default:
      return Invalid(catalog,
                     absl::StrCat("value_encoding = ", proto.value_encoding(),
                                  " is unknown"));
  }
  if (proto.value_indices().empty()) {
    for (size_t i = 0; i < catalog.columns.size(); ++i) {
      catalog.value_indices.push_back(static_cast<int>(i));
    }
  } else {
    for (uint32_t column : proto.value_indices()) {
      catalog.value_indices.push_back(
          static_cast<int>(std::min<uint32_t>(column, 1u << 30)));
    }
  }
  if (proto.has_vnode_column_index()) {
    catalog.vnode_column = static_cast<int>(
        std::min<uint32_t>(proto.vnode_column_index(), 1u << 30));
  }
  if (absl::Status status = ValidateTableCatalog(catalog); !status.ok()) {
    return status;
  }
  return catalog;
}

proto::TableCatalog TableCatalogToProto(const TableCatalog& catalog) {
  proto::TableCatalog out;
  out.set_table_id(catalog.table_id);
  out.set_name(catalog.name);
  for (const ColumnDesc& column : catalog.columns) {
    proto::ColumnCatalog* c = out.add_columns();
    c->set_name(column.name);
    c->set_type(static_cast<proto::DataType>(column.type.id()));
    if (column.type.is_nested()) {
      NestedToProto(column.type, c->mutable_nested());
    }
    c->set_column_id(column.column_id);
    c->set_nullable(column.nullable);
  }
  for (size_t i = 0; i < catalog.pk_indices.size(); ++i) {
    proto::KeyColumn* key = out.add_primary_key();
    key->set_column_index(catalog.pk_indices[i]);
    key->set_descending(catalog.pk_orders[i].is_descending());
    key->set_nulls(catalog.pk_orders[i].nulls_first() ? proto::NULLS_FIRST
                                                      : proto::NULLS_LAST);
  }
  for (int column : catalog.dist_key_indices) out.add_distribution_key(column);
  out.set_vnode_count(catalog.vnode_count);
  out.set_value_encoding(catalog.value_encoding == ValueEncoding::kColumnAware
                             ? proto::VALUE_ENCODING_COLUMN_AWARE
                             : proto::VALUE_ENCODING_POSITIONAL);
  for (int column : catalog.value_indices) out.add_value_indices(column);
  if (catalog.vnode_column.has_value()) {
    out.set_vnode_column_index(*catalog.vnode_column);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ValueRowCodec>> MakeValueCodec(
    const TableCatalog& catalog) {
  Schema value_schema;
  for (int column : catalog.value_indices) {
    value_schema.push_back(catalog.columns[column]);
  }
  return MakeValueRowCodec(catalog.value_encoding == ValueEncoding::kColumnAware
                               ? ValueRowEncoding::kColumnAware
                               : ValueRowEncoding::kPositional,
                           std::move(value_schema));
}

}  // namespace backfill
