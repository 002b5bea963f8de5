#include "storage/table_catalog.h"

#include <functional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/catalog.pb.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

proto::TableCatalog GoodProto() {
  proto::TableCatalog proto;
  proto.set_table_id(7);
  proto.set_name("t");
  for (int i = 0; i < 3; ++i) {
    proto::ColumnCatalog* column = proto.add_columns();
    column->set_name(std::string(1, static_cast<char>('a' + i)));
    column->set_type(i == 1 ? proto::VARCHAR : proto::INT64);
    column->set_column_id(i + 1);
    column->set_nullable(true);
  }
  proto::KeyColumn* k0 = proto.add_primary_key();
  k0->set_column_index(2);
  k0->set_descending(true);
  proto::KeyColumn* k1 = proto.add_primary_key();
  k1->set_column_index(0);
  k1->set_nulls(proto::NULLS_FIRST);
  proto.add_distribution_key(0);
  return proto;
}

TEST(TableCatalogTest, DecodesWithDefaults) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(TableCatalog catalog,
                                TableCatalogFromProto(GoodProto()));
  EXPECT_EQ(catalog.table_id, 7u);
  EXPECT_EQ(catalog.vnode_count, 256);
  EXPECT_EQ(catalog.pk_indices, (std::vector<int>{2, 0}));
  EXPECT_EQ(catalog.pk_orders[0], OrderType::Descending());
  EXPECT_EQ(catalog.pk_orders[1], OrderType::AscendingNullsFirst());
  EXPECT_EQ(catalog.DistKeyInPk(), (std::vector<int>{1}));
  EXPECT_EQ(catalog.value_indices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(catalog.PkTypes(),
            (std::vector<DataType>{DataType::kInt64, DataType::kInt64}));
  // Round trip through the proto form.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      TableCatalog again, TableCatalogFromProto(TableCatalogToProto(catalog)));
  EXPECT_EQ(again.DebugString(), catalog.DebugString());
}

TEST(TableCatalogTest, RejectsInconsistencyNamingTheField) {
  struct Case {
    std::function<void(proto::TableCatalog&)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](auto& p) { p.clear_columns(); }, "columns is empty"},
      {[](auto& p) { p.mutable_columns(1)->set_name("b\xff"); },
       "columns[1].name \"b\\xff\" is not valid UTF-8"},
      {[](auto& p) { p.set_name("t\xc3"); },
       "name \"t\\xc3\" is not valid UTF-8"},
      {[](auto& p) { p.mutable_columns(1)->set_type(proto::DATA_TYPE_UNSPECIFIED); },
       "columns[1] (b).type"},
      {[](auto& p) { p.mutable_columns(1)->set_column_id(1); },
       "duplicate column id 1"},
      {[](auto& p) { p.mutable_primary_key(0)->set_column_index(9); },
       "primary_key[0] = 9 is out of range"},
      {[](auto& p) { p.mutable_primary_key(1)->set_column_index(2); },
       "primary_key[1] = 2 appears twice"},
      {[](auto& p) { p.set_distribution_key(0, 1); },
       "distribution_key[0] = 1 is not a primary-key column"},
      {[](auto& p) { p.set_vnode_count(40000); }, "vnode_count = 40000"},
      {[](auto& p) { p.add_value_indices(2); p.add_value_indices(1); },
       "value_indices[1] = 1 is not ascending"},
      {[](auto& p) { p.mutable_primary_key(0)->set_nulls(static_cast<proto::NullsOrder>(9)); },
       "primary_key[0].nulls"},
      {[](auto& p) { p.set_value_encoding(static_cast<proto::ValueEncoding>(5)); },
       "value_encoding = 5"},
      {[](auto& p) { p.set_vnode_column_index(1); },
       "vnode_column_index = 1 is not a primary-key column"},
      {[](auto& p) { p.set_vnode_column_index(0); },
       "vnode_column_index = 0 is not an INT16 column"},
      // Found by //storage:table_catalog_fuzz (both).
      {[](auto& p) { p.set_table_id(0xFFFFFFFF); },
       "table_id 4294967295 is reserved for the store's epoch pins"},
      {[](auto& p) {
         p.mutable_columns(1)->set_nullable(false);
         p.add_value_indices(0);
       },
       "columns[1] (b) is NOT NULL but stored neither in value_indices nor "
       "in the primary key"},
  };
  for (const Case& c : cases) {
    proto::TableCatalog proto = GoodProto();
    c.mutate(proto);
    EXPECT_THAT(TableCatalogFromProto(proto),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(c.field)))
        << c.field;
  }
}

TEST(TableCatalogTest, SingletonAndValueIndices) {
  proto::TableCatalog proto = GoodProto();
  proto.clear_distribution_key();
  proto.set_vnode_count(1);
  proto.add_value_indices(1);
  BACKFILL_ASSERT_OK_AND_ASSIGN(TableCatalog catalog, TableCatalogFromProto(proto));
  EXPECT_TRUE(catalog.dist_key_indices.empty());
  EXPECT_EQ(catalog.value_indices, (std::vector<int>{1}));
  EXPECT_THAT(ValidateTableCatalog(catalog), IsOk());
}

// Issue 21: the added scalar types and the nested ones go through the proto
// form whole (field names, ids and nested parts included).
TEST(TableCatalogTest, NewAndNestedTypesRoundTrip) {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  const ColumnType point = ColumnType::Struct(
      {{"x", DataType::kFloat64, 4},
       {"tags", ColumnType::List(DataType::kVarchar), 9}});
  catalog.columns = {
      {"at", DataType::kTimestamptz, 1, false},
      {"span", DataType::kInterval, 2, false},
      {"doc", DataType::kJsonb, 3, true},
      {"points", ColumnType::List(point), 4, true},
      {"attrs", ColumnType::Map(DataType::kVarchar, DataType::kInt256), 5,
       true},
      {"row_id", DataType::kSerial, 6, true}};
  catalog.pk_indices = {0, 1};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending()};
  catalog.dist_key_indices = {1};
  catalog.value_indices = {0, 1, 2, 3, 4, 5};
  ASSERT_THAT(ValidateTableCatalog(catalog), IsOk());
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      TableCatalog again, TableCatalogFromProto(TableCatalogToProto(catalog)));
  ASSERT_EQ(again.columns.size(), catalog.columns.size());
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    EXPECT_EQ(again.columns[i].type, catalog.columns[i].type)
        << again.columns[i].type.DebugString();
  }
  EXPECT_EQ(again.columns[3].type.DebugString(),
            "LIST<STRUCT<x FLOAT64, tags LIST<VARCHAR>>>");
  EXPECT_EQ(TableCatalogToProto(again).SerializeAsString(),
            TableCatalogToProto(catalog).SerializeAsString());
}

TEST(TableCatalogTest, RejectsBadNestingAndNonKeyTypesInTheKey) {
  struct Case {
    std::function<void(proto::TableCatalog&)> mutate;
    std::string message;
  };
  auto list_of = [](proto::ColumnCatalog* column, proto::DataType element) {
    column->set_type(proto::LIST);
    column->mutable_nested()->mutable_element()->set_type(element);
  };
  const std::vector<Case> cases = {
      {[](auto& p) { p.mutable_columns(1)->set_type(proto::STRUCT); },
       "columns[1] (b): STRUCT without its nested parts"},
      {[](auto& p) {
         p.mutable_columns(1)->set_type(proto::STRUCT);
         p.mutable_columns(1)->mutable_nested();
       },
       "a STRUCT needs at least one nested.fields"},
      {[](auto& p) {
         p.mutable_columns(1)->set_type(proto::LIST);
         p.mutable_columns(1)->mutable_nested()->add_fields();
       },
       "a LIST needs nested.element and nothing else"},
      {[](auto& p) {
         p.mutable_columns(1)->set_type(proto::MAP);
         p.mutable_columns(1)->mutable_nested()->mutable_map_key()->set_type(
             proto::VARCHAR);
       },
       "a MAP needs nested.map_key and nested.map_value"},
      {[](auto& p) {
         p.mutable_columns(1)->mutable_nested()->mutable_element()->set_type(
             proto::INT64);
       },
       "columns[1] (b): VARCHAR has nested parts"},
      {[&](auto& p) { list_of(p.mutable_columns(1), proto::DATA_TYPE_UNSPECIFIED); },
       "columns[1] (b).element.type = 0 is not a data type"},
      {[&](auto& p) { list_of(p.mutable_columns(1), static_cast<proto::DataType>(21)); },
       "columns[1] (b).element.type = 21 is not a data type"},
      {[](auto& p) { p.mutable_columns(0)->set_type(proto::JSONB); },
       "primary_key[1] = 0 (a): "},
      {[](auto& p) {
         p.mutable_columns(0)->set_type(proto::MAP);
         p.mutable_columns(0)->mutable_nested()->mutable_map_key()->set_type(
             proto::INT32);
         p.mutable_columns(0)->mutable_nested()->mutable_map_value()->set_type(
             proto::INT32);
       },
       "primary_key[1] = 0 (a): "},
      {[&](auto& p) { list_of(p.mutable_columns(0), proto::JSONB); },
       "primary_key[1] = 0 (a): LIST<JSONB>: JSONB cannot be in a key"},
      {[](auto& p) {
         proto::ColumnCatalog* c = p.mutable_columns(1);
         proto::TypeCatalog* part = nullptr;
         c->set_type(proto::LIST);
         part = c->mutable_nested()->mutable_element();
         for (int i = 0; i < kMaxCatalogTypeDepth + 1; ++i) {
           part->set_type(proto::LIST);
           part = part->mutable_nested()->mutable_element();
         }
         part->set_type(proto::INT64);
       },
       "nested deeper than 16"},
  };
  for (const Case& c : cases) {
    proto::TableCatalog proto = GoodProto();
    c.mutate(proto);
    EXPECT_THAT(TableCatalogFromProto(proto),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(c.message)))
        << c.message;
  }
}

// Issue 21: LIST and STRUCT columns of key types may be pk and dist-key
// columns (PkColumnTypes keeps their parts); JSONB or MAP inside one may not.
TEST(TableCatalogTest, ListAndStructKeyColumns) {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  const ColumnType point = ColumnType::Struct(
      {{"x", DataType::kFloat64, 1},
       {"tags", ColumnType::List(DataType::kVarchar), 2}});
  catalog.columns = {{"path", ColumnType::List(DataType::kInt32), 1, true},
                     {"point", point, 2, false},
                     {"v", DataType::kInt64, 3, true}};
  catalog.pk_indices = {1, 0};
  catalog.pk_orders = {OrderType::Descending(), OrderType::Ascending()};
  catalog.dist_key_indices = {0, 1};
  catalog.value_indices = {2};
  ASSERT_THAT(ValidateTableCatalog(catalog), IsOk());
  const std::vector<ColumnType> pk_types = catalog.PkColumnTypes();
  ASSERT_EQ(pk_types.size(), 2u);
  EXPECT_EQ(pk_types[0], point);
  EXPECT_EQ(pk_types[1], ColumnType::List(DataType::kInt32));
  EXPECT_EQ(catalog.PkTypes(),
            (std::vector<DataType>{DataType::kStruct, DataType::kList}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      TableCatalog again, TableCatalogFromProto(TableCatalogToProto(catalog)));
  EXPECT_EQ(again.PkColumnTypes()[0], point);

  catalog.columns[0].type = ColumnType::List(DataType::kJsonb);
  EXPECT_THAT(ValidateTableCatalog(catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("primary_key[1] = 0 (path): LIST<JSONB>")));
  catalog.columns[0].type = ColumnType::Struct(
      {{"m", ColumnType::Map(DataType::kInt32, DataType::kInt32), 1}});
  EXPECT_THAT(ValidateTableCatalog(catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot be in a key")));
}

}  // namespace
}  // namespace backfill
