// Writes the checked-in seed corpus of //storage:table_catalog_fuzz:
//   bazel run //storage:fuzz_corpus_generator -- $PWD/storage/testdata
// creates <dir>/table_catalog_fuzz/ with binary proto::TableCatalog seeds:
// valid catalogs of several shapes (composite pks mixing orders, a singleton,
// column-aware values, value columns leaving pk columns to the key, a
// progress-table-like catalog with a vnode column, every data type, a LIST
// and a STRUCT in the pk) and
// near-misses TableCatalogFromProto must reject. Deterministic; run by hand,
// the output is committed.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "serde/data_type.h"
#include "storage/catalog.pb.h"
#include "third_party/fuzzing/corpus_file.h"

namespace backfill {
namespace {

void AddColumn(proto::TableCatalog& t, const std::string& name,
               proto::DataType type, int id, bool nullable) {
  proto::ColumnCatalog* c = t.add_columns();
  c->set_name(name);
  c->set_type(type);
  c->set_column_id(id);
  c->set_nullable(nullable);
}

void AddKey(proto::TableCatalog& t, uint32_t column, bool descending,
            proto::NullsOrder nulls) {
  proto::KeyColumn* k = t.add_primary_key();
  k->set_column_index(column);
  k->set_descending(descending);
  k->set_nulls(nulls);
}

// orders(id INT64, customer VARCHAR, price FLOAT64, amount DECIMAL, at
// TIMESTAMP), pk (id).
proto::TableCatalog Simple() {
  proto::TableCatalog t;
  t.set_table_id(1);
  t.set_name("orders");
  AddColumn(t, "id", proto::INT64, 1, false);
  AddColumn(t, "customer", proto::VARCHAR, 2, false);
  AddColumn(t, "price", proto::FLOAT64, 3, true);
  AddColumn(t, "amount", proto::DECIMAL, 4, true);
  AddColumn(t, "at", proto::TIMESTAMP, 5, true);
  AddKey(t, 0, false, proto::NULLS_DEFAULT);
  t.add_distribution_key(0);
  t.set_vnode_count(16);
  return t;
}

// Every data type; pk (c7 VARCHAR DESC, c1 INT16 NULLS FIRST, c9 DATE);
// distribution key (c1); column-aware; ids not in column order.
proto::TableCatalog EveryType() {
  proto::TableCatalog t;
  t.set_table_id(42);
  t.set_name("every_type");
  const proto::DataType types[] = {
      proto::BOOLEAN, proto::INT16,   proto::INT32,   proto::INT64,
      proto::FLOAT32, proto::FLOAT64, proto::DECIMAL, proto::VARCHAR,
      proto::BYTEA,   proto::DATE,    proto::TIME,    proto::TIMESTAMP};
  for (int i = 0; i < 12; ++i) {
    AddColumn(t, "c" + std::to_string(i), types[i], 100 - i, true);
  }
  AddKey(t, 7, true, proto::NULLS_DEFAULT);
  AddKey(t, 1, false, proto::NULLS_FIRST);
  AddKey(t, 9, false, proto::NULLS_LAST);
  t.add_distribution_key(1);
  t.set_vnode_count(256);
  t.set_value_encoding(proto::VALUE_ENCODING_COLUMN_AWARE);
  return t;
}

// A singleton table (no distribution key), 1 vnode, FLOAT32/BYTEA pk.
proto::TableCatalog Singleton() {
  proto::TableCatalog t;
  t.set_table_id(3);
  t.set_name("settings");
  AddColumn(t, "k", proto::FLOAT32, 1, true);
  AddColumn(t, "b", proto::BYTEA, 2, false);
  AddColumn(t, "v", proto::TIME, 3, true);
  AddKey(t, 1, true, proto::NULLS_LAST);
  AddKey(t, 0, false, proto::NULLS_DEFAULT);
  t.set_vnode_count(1);
  return t;
}

// Value columns leave the pk to the key: value_indices (1, 2).
proto::TableCatalog PkOnlyInKey() {
  proto::TableCatalog t = Simple();
  t.set_table_id(4);
  t.clear_value_indices();
  t.add_value_indices(1);
  t.add_value_indices(2);
  return t;
}

// Like a backfill progress table: pk (vnode INT16) that is the vnode column.
proto::TableCatalog ProgressLike() {
  proto::TableCatalog t;
  t.set_table_id(1003);
  t.set_name("orders_backfill_progress");
  AddColumn(t, "vnode", proto::INT16, 0, false);
  AddColumn(t, "id", proto::INT64, 1, true);
  AddColumn(t, "backfill_finished", proto::BOOLEAN, 2, false);
  AddColumn(t, "row_count", proto::INT64, 3, false);
  AddKey(t, 0, false, proto::NULLS_DEFAULT);
  t.add_distribution_key(0);
  t.set_vnode_count(8);
  for (uint32_t i = 1; i < 4; ++i) t.add_value_indices(i);
  t.set_vnode_column_index(0);
  return t;
}

// Issue 21: a pk of a STRUCT<x INT32, names LIST<VARCHAR>> (DESC) and a
// LIST<FLOAT64> (NULLS FIRST), stored only in the key; distribution key the
// LIST.
proto::TableCatalog NestedPk() {
  proto::TableCatalog t;
  t.set_table_id(21);
  t.set_name("nested_pk");
  AddColumn(t, "tags", proto::LIST, 1, true);
  t.mutable_columns(0)->mutable_nested()->mutable_element()->set_type(
      proto::FLOAT64);
  AddColumn(t, "point", proto::STRUCT, 2, false);
  proto::NestedTypeCatalog* point = t.mutable_columns(1)->mutable_nested();
  proto::FieldCatalog* x = point->add_fields();
  x->set_name("x");
  x->set_id(1);
  x->mutable_type()->set_type(proto::INT32);
  proto::FieldCatalog* names = point->add_fields();
  names->set_name("names");
  names->set_id(2);
  names->mutable_type()->set_type(proto::LIST);
  names->mutable_type()->mutable_nested()->mutable_element()->set_type(
      proto::VARCHAR);
  AddColumn(t, "v", proto::INT64, 3, true);
  AddKey(t, 1, true, proto::NULLS_DEFAULT);
  AddKey(t, 0, false, proto::NULLS_FIRST);
  t.add_distribution_key(0);
  t.set_vnode_count(8);
  t.add_value_indices(2);
  return t;
}

// The largest vnode count, an empty pk.
proto::TableCatalog MaxVnodesNoPk() {
  proto::TableCatalog t;
  t.set_table_id(5);
  t.set_name("log");
  AddColumn(t, "line", proto::VARCHAR, 1, true);
  t.set_vnode_count(32768);
  return t;
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <storage/testdata>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir =
      std::filesystem::path(argv[1]) / "table_catalog_fuzz";
  const std::vector<std::pair<std::string, proto::TableCatalog>> valid = {
      {"simple", Simple()},
      {"every_type", EveryType()},
      {"singleton", Singleton()},
      {"pk_only_in_key", PkOnlyInKey()},
      {"progress_like", ProgressLike()},
      {"max_vnodes_no_pk", MaxVnodesNoPk()},
      {"nested_pk", NestedPk()},
  };
  for (const auto& [name, catalog] : valid) {
    WriteCorpusFile(dir, "valid_" + name, catalog.SerializeAsString());
  }
  using Mutation = std::function<void(proto::TableCatalog&)>;
  const std::vector<std::pair<std::string, Mutation>> bad = {
      {"no_columns", [](auto& t) { t.clear_columns(); }},
      {"unspecified_type",
       [](auto& t) {
         t.mutable_columns(1)->set_type(proto::DATA_TYPE_UNSPECIFIED);
       }},
      {"unknown_type",
       [](auto& t) {
         t.mutable_columns(1)->set_type(static_cast<proto::DataType>(21));
       }},
      {"duplicate_id", [](auto& t) { t.mutable_columns(1)->set_column_id(1); }},
      {"duplicate_name", [](auto& t) { t.mutable_columns(1)->set_name("id"); }},
      {"pk_out_of_range",
       [](auto& t) { AddKey(t, 99, false, proto::NULLS_DEFAULT); }},
      {"pk_twice", [](auto& t) { AddKey(t, 0, true, proto::NULLS_DEFAULT); }},
      {"unknown_nulls",
       [](auto& t) {
         t.mutable_primary_key(0)->set_nulls(static_cast<proto::NullsOrder>(3));
       }},
      {"dist_not_pk", [](auto& t) { t.add_distribution_key(2); }},
      {"dist_twice", [](auto& t) { t.add_distribution_key(0); }},
      {"vnodes_too_many", [](auto& t) { t.set_vnode_count(32769); }},
      {"vnodes_huge", [](auto& t) { t.set_vnode_count(0xffffffffu); }},
      {"value_not_ascending",
       [](auto& t) {
         t.add_value_indices(3);
         t.add_value_indices(1);
       }},
      {"value_out_of_range", [](auto& t) { t.add_value_indices(1u << 31); }},
      {"unknown_encoding",
       [](auto& t) {
         t.set_value_encoding(static_cast<proto::ValueEncoding>(2));
       }},
      {"vnode_column_not_pk", [](auto& t) { t.set_vnode_column_index(1); }},
      {"vnode_column_not_int16", [](auto& t) { t.set_vnode_column_index(0); }},
      {"negative_column_id",
       [](auto& t) { t.mutable_columns(2)->set_column_id(-1); }},
      {"reserved_table_id", [](auto& t) { t.set_table_id(0xffffffffu); }},
  };
  for (const auto& [name, mutate] : bad) {
    proto::TableCatalog catalog = Simple();
    mutate(catalog);
    WriteCorpusFile(dir, "bad_" + name, catalog.SerializeAsString());
  }
  const std::string every = EveryType().SerializeAsString();
  WriteCorpusFile(dir, "truncated", every.substr(0, every.size() / 2));
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
