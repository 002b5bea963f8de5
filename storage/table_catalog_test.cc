#include "storage/table_catalog.h"

#include <functional>

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
      // Found by //storage:table_catalog_fuzz.
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

}  // namespace
}  // namespace backfill
