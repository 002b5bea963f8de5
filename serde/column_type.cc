#include "serde/column_type.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {

struct ColumnType::Nested {
  std::vector<ColumnType> element;  // LIST: one; MAP: key, value
  std::vector<StructField> fields;  // STRUCT
};

ColumnType::ColumnType(DataType id) : id_(id) {
  assert(id != DataType::kList && id != DataType::kStruct &&
         id != DataType::kMap);
}

ColumnType ColumnType::List(ColumnType element) {
  auto nested = std::make_shared<Nested>();
  nested->element.push_back(std::move(element));
  return ColumnType(DataType::kList, std::move(nested));
}

ColumnType ColumnType::Struct(std::vector<StructField> fields) {
  auto nested = std::make_shared<Nested>();
  nested->fields = std::move(fields);
  return ColumnType(DataType::kStruct, std::move(nested));
}

ColumnType ColumnType::Map(ColumnType key, ColumnType value) {
  auto nested = std::make_shared<Nested>();
  nested->element.push_back(std::move(key));
  nested->element.push_back(std::move(value));
  return ColumnType(DataType::kMap, std::move(nested));
}

const ColumnType& ColumnType::map_key() const {
  assert(id_ == DataType::kMap);
  return nested_->element[0];
}

const ColumnType& ColumnType::map_value() const {
  assert(id_ == DataType::kMap);
  return nested_->element[1];
}

const ColumnType& ColumnType::element() const {
  assert(id_ == DataType::kList);
  return nested_->element[0];
}

absl::Span<const StructField> ColumnType::fields() const {
  assert(id_ == DataType::kStruct);
  return nested_->fields;
}

std::string ColumnType::DebugString() const {
  switch (id_) {
    case DataType::kList:
      return absl::StrCat("LIST<", element().DebugString(), ">");
    case DataType::kMap:
      return absl::StrCat("MAP<", map_key().DebugString(), ", ",
                          map_value().DebugString(), ">");
    case DataType::kStruct:
      return absl::StrCat(
          "STRUCT<",
          absl::StrJoin(fields(), ", ",
                        [](std::string* out, const StructField& field) {
                          absl::StrAppend(out, field.name, " ",
                                          field.type.DebugString());
                        }),
          ">");
    default:
      return std::string(DataTypeName(id_));
  }
}

bool operator==(const ColumnType& a, const ColumnType& b) {
  if (a.id_ != b.id_) return false;
  switch (a.id_) {
    case DataType::kList:
      return a.element() == b.element();
    case DataType::kMap:
      return a.map_key() == b.map_key() && a.map_value() == b.map_value();
    case DataType::kStruct:
      return std::equal(
          a.fields().begin(), a.fields().end(), b.fields().begin(),
          b.fields().end(), [](const StructField& x, const StructField& y) {
            return x.name == y.name && x.id == y.id && x.type == y.type;
          });
    default:
      return true;
  }
}

bool IsValidMapKeyType(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kVarchar:
      return true;
    default:
      return false;
  }
}

absl::Status ValidateColumnType(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kList:
      return ValidateColumnType(type.element());
    case DataType::kMap:
      if (!IsValidMapKeyType(type.map_key())) {
        return absl::InvalidArgumentError(absl::StrCat(
            type.DebugString(), ": invalid map key type ",
            type.map_key().DebugString(),
            " (INT16, INT32, INT64 or VARCHAR)"));
      }
      return ValidateColumnType(type.map_value());
    case DataType::kStruct: {
      absl::flat_hash_set<std::string> names;
      absl::flat_hash_set<int32_t> ids;
      for (const StructField& field : type.fields()) {
        auto invalid = [&](absl::string_view why) {
          return absl::InvalidArgumentError(
              absl::StrCat(type.DebugString(), ".", field.name, ": ", why));
        };
        if (field.id < 0) {
          return invalid(absl::StrCat("negative field id ", field.id));
        }
        if (!names.insert(field.name).second) {
          return invalid("duplicate field name");
        }
        if (!ids.insert(field.id).second) {
          return invalid(absl::StrCat("duplicate field id ", field.id));
        }
        if (absl::Status status = ValidateColumnType(field.type);
            !status.ok()) {
          return status;
        }
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::Status ValidateKeyColumnType(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kJsonb:
      return absl::InvalidArgumentError(
          "JSONB cannot be in a key: it has no SQL order (as RisingWave, "
          "which rejects JSONB in keys)");
    case DataType::kMap:
      return absl::InvalidArgumentError(absl::StrCat(
          type.DebugString(),
          " cannot be in a key: maps have no order or equality in RisingWave"));
    case DataType::kList:
      if (absl::Status status = ValidateKeyColumnType(type.element());
          !status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(type.DebugString(), ": ", status.message()));
      }
      return absl::OkStatus();
    case DataType::kStruct:
      for (const StructField& field : type.fields()) {
        if (absl::Status status = ValidateKeyColumnType(field.type);
            !status.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              type.DebugString(), ".", field.name, ": ", status.message()));
        }
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

int ColumnTypeDepth(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kList:
      return 1 + ColumnTypeDepth(type.element());
    case DataType::kMap:
      return 1 + std::max(ColumnTypeDepth(type.map_key()),
                          ColumnTypeDepth(type.map_value()));
    case DataType::kStruct: {
      int depth = 0;
      for (const StructField& field : type.fields()) {
        depth = std::max(depth, ColumnTypeDepth(field.type));
      }
      return 1 + depth;
    }
    default:
      return 0;
  }
}

}  // namespace backfill
