// TableCatalog: the validated, protobuf-free description of a table that state
// tables are built from: columns, primary key with order types, distribution
// key, vnode count, value encoding.
//
//   BACKFILL_ASSIGN_OR_RETURN(TableCatalog catalog,
//                             TableCatalogFromProto(proto_catalog));
//   int pk_len = catalog.pk_indices.size();
//
// Every TableCatalog returned by TableCatalogFromProto or accepted by
// ValidateTableCatalog satisfies the invariants listed on the fields.
#ifndef STORAGE_TABLE_CATALOG_H_
#define STORAGE_TABLE_CATALOG_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "serde/order_type.h"
#include "serde/schema.h"
#include "serde/value_row_codec.h"
#include "storage/table_key.h"

namespace backfill {
namespace proto {
class TableCatalog;
}  // namespace proto

enum class ValueEncoding { kPositional, kColumnAware };

struct TableCatalog {
  TableId table_id = 0;
  std::string name;
  // Unique names and column ids (ValidateSchema).
  Schema columns;
  // Primary key: distinct column indices, with one OrderType each; each
  // column of a key type (ValidateKeyColumnType: not JSONB or MAP, nor a
  // LIST or STRUCT holding one; LISTs and STRUCTs of key types are key
  // columns, encoded as serde/FORMAT.md section 1.3 says).
  std::vector<int> pk_indices;
  std::vector<OrderType> pk_orders;
  // Distribution key: column indices, each in the pk; empty = singleton.
  std::vector<int> dist_key_indices;
  // 1 .. kMaxVnodeCount; a singleton table still has its vnode count, but
  // every row is in vnode 0.
  int vnode_count = 256;
  ValueEncoding value_encoding = ValueEncoding::kPositional;
  // Columns stored in the value, ascending and distinct; by default all.
  // A column neither here nor in the pk is not stored (reads back as NULL),
  // so it must be nullable.
  std::vector<int> value_indices;
  // When set: an INT16 pk column whose value is the row's vnode (then
  // dist_key_indices only documents the distribution; the vnode is not
  // hashed). Used by tables keyed by vnode, like the backfill progress table.
  std::optional<int> vnode_column;

  // For each dist-key column, its position in the pk.
  std::vector<int> DistKeyInPk() const;
  // The pk columns' DataTypes (a nested column's id only) and their whole
  // types (what a KeySerde of the pk is made from).
  std::vector<DataType> PkTypes() const;
  std::vector<ColumnType> PkColumnTypes() const;
  // (position in the pk, column index) of each pk column not stored in the
  // value, in pk order: a stored row's reader takes them from the pk bytes.
  std::vector<std::pair<int, int>> PkOnlyColumns() const;
  std::string DebugString() const;
};

// OK iff `catalog` satisfies the invariants above; otherwise InvalidArgument
// naming the field and the offending value ("table 7 (t): distribution_key[1]
// = 3 is not a primary-key column").
absl::Status ValidateTableCatalog(const TableCatalog& catalog);

// The codec of the stored value of `catalog`'s rows: the value_indices
// columns in value_encoding. REQUIRES: ValidateTableCatalog(catalog) is OK.
// Errors: MakeValueRowCodec's (serde/value_codec.h).
absl::StatusOr<std::unique_ptr<ValueRowCodec>> MakeValueCodec(
    const TableCatalog& catalog);

// Decodes and validates. Unknown enum values, DATA_TYPE_UNSPECIFIED, a
// STRUCT, LIST or MAP without its parts (or parts on another type), types
// nested deeper than kMaxCatalogTypeDepth, and every inconsistency are
// InvalidArgument naming the field.
inline constexpr int kMaxCatalogTypeDepth = 16;
absl::StatusOr<TableCatalog> TableCatalogFromProto(
    const proto::TableCatalog& proto);
proto::TableCatalog TableCatalogToProto(const TableCatalog& catalog);

}  // namespace backfill

#endif  // STORAGE_TABLE_CATALOG_H_
