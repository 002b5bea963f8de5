// Fuzzes table catalogs as other teams hand them to us: the input is a binary
// proto::TableCatalog. Properties, for every input that parses:
//  1. TableCatalogFromProto either fails with InvalidArgument or returns a
//     catalog that ValidateTableCatalog accepts and that survives
//     TableCatalogToProto -> TableCatalogFromProto unchanged.
//  2. Every accepted catalog is usable: a StateTable over a memory store owns
//     all its vnodes; rows (random values of the column types, seeded by the
//     input) insert (or fail with FailedPrecondition: duplicate pk, a vnode
//     column value outside the vnodes), read back as stored (value columns,
//     pk columns from the key, other columns NULL) before and after a
//     checkpoint, through GetRow and through a vnode scan, and delete.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/stubs/logging.h"
#include "serde/random_datum.h"
#include "serde/row.h"
#include "serde/vnode_bitmap.h"
#include "storage/catalog.pb.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

constexpr int kRows = 8;

// A row of `catalog`: NULL only in nullable columns; the vnode column (if
// any) mostly inside [0, vnode_count].
Row RandomRowOf(const TableCatalog& catalog, std::mt19937_64& rng) {
  Row row;
  for (const ColumnDesc& column : catalog.columns) {
    row.push_back(
        RandomColumnDatum(column.type, rng, column.nullable ? 0.25 : 0.0));
  }
  if (catalog.vnode_column.has_value() && rng() % 8 != 0) {
    row[*catalog.vnode_column] =
        static_cast<int16_t>(rng() % (catalog.vnode_count + 1));
  }
  return row;
}

// What reading `row` back gives: value columns and pk columns as written,
// every other column NULL.
Row Stored(const TableCatalog& catalog, const Row& row) {
  Row out(row.size());
  for (int column : catalog.value_indices) out[column] = row[column];
  for (int column : catalog.pk_indices) out[column] = row[column];
  return out;
}

// Every row of `expected` (pk bytes -> stored row) reads back from `table`.
void CheckReads(
    StateTable& table,
    const std::map<std::string, std::pair<VirtualNode, Row>>& expected) {
  const TableCatalog& catalog = table.catalog();
  std::map<VirtualNode, size_t> per_vnode;
  for (const auto& [pk_bytes, entry] : expected) {
    const auto& [vnode, row] = entry;
    ++per_vnode[vnode];
    absl::StatusOr<std::optional<Row>> read =
        table.GetRow(ProjectRow(row, catalog.pk_indices));
    FuzzCheck(read.ok(), "GetRow of a written row", read.status());
    FuzzCheck(read->has_value() && RowsEqual(**read, row),
              "a written row reads back as stored");
  }
  for (const auto& [vnode, count] : per_vnode) {
    absl::StatusOr<std::unique_ptr<RowIterator>> it =
        table.IterWithVnode(vnode);
    FuzzCheck(it.ok(), "scanning an owned vnode", it.status());
    size_t seen = 0;
    for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
      auto found = expected.find(std::string((*it)->pk_bytes()));
      FuzzCheck(found != expected.end() && found->second.first == vnode &&
                    RowsEqual((*it)->row(), found->second.second),
                "a scan returns the rows written to the vnode");
      ++seen;
    }
    FuzzCheck((*it)->status().ok(), "a scan ends without error",
              (*it)->status());
    FuzzCheck(seen == count, "a scan returns every row of the vnode");
  }
}

void FuzzOne(const uint8_t* data, size_t size) {
  proto::TableCatalog proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return;
  absl::StatusOr<TableCatalog> catalog = TableCatalogFromProto(proto);
  if (!catalog.ok()) {
    FuzzCheck(catalog.status().code() == absl::StatusCode::kInvalidArgument,
              "a bad catalog is InvalidArgument", catalog.status());
    return;
  }
  FuzzCheck(ValidateTableCatalog(*catalog).ok(),
            "an accepted catalog validates");
  (void)catalog->DebugString();
  const std::string encoded = TableCatalogToProto(*catalog).SerializeAsString();
  proto::TableCatalog again_proto;
  FuzzCheck(again_proto.ParseFromString(encoded), "ToProto parses");
  absl::StatusOr<TableCatalog> again = TableCatalogFromProto(again_proto);
  FuzzCheck(again.ok(), "ToProto of an accepted catalog is accepted",
            again.status());
  FuzzCheck(TableCatalogToProto(*again).SerializeAsString() == encoded,
            "ToProto -> FromProto is the identity");

  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const VnodeBitmap all = VnodeBitmap::All(catalog->vnode_count);
  absl::StatusOr<std::unique_ptr<StateTable>> table =
      StateTable::Create(*catalog, *store, all);
  FuzzCheck(table.ok(), "an accepted catalog makes a StateTable",
            table.status());
  FuzzCheck((*table)->InitEpoch(EpochPair{Epoch(1), Epoch(0)}).ok(),
            "InitEpoch");
  std::mt19937_64 rng(
      FuzzSeed(absl::string_view(reinterpret_cast<const char*>(data), size)));
  std::map<std::string, std::pair<VirtualNode, Row>> expected;
  for (int i = 0; i < kRows; ++i) {
    const Row row = RandomRowOf(*catalog, rng);
    const std::string pk_bytes =
        (*table)->pk_serde().Serialize(ProjectRow(row, catalog->pk_indices));
    const VirtualNode vnode = (*table)->ComputeVnode(row);
    FuzzCheck(vnode <= static_cast<VirtualNode>(catalog->vnode_count),
              "ComputeVnode is in range");
    FuzzCheck((*table)->ComputeVnodeByPk(
                  ProjectRow(row, catalog->pk_indices)) == vnode,
              "ComputeVnodeByPk agrees with ComputeVnode");
    absl::Status status = (*table)->Insert(row);
    if (!status.ok()) {
      FuzzCheck(status.code() == absl::StatusCode::kFailedPrecondition,
                "a rejected insert is FailedPrecondition", status);
      FuzzCheck(expected.contains(pk_bytes) ||
                    vnode == static_cast<VirtualNode>(catalog->vnode_count),
                "an insert is rejected only for a duplicate pk or a bad vnode",
                status);
      continue;
    }
    FuzzCheck(!expected.contains(pk_bytes), "a duplicate pk is rejected");
    expected[pk_bytes] = {vnode, Stored(*catalog, row)};
  }
  CheckReads(**table, expected);
  FuzzCheck((*table)->Commit(EpochPair{Epoch(2), Epoch(1)}).ok(), "Commit");
  FuzzCheck(store->Checkpoint(Epoch(1)).ok(), "Checkpoint");
  table->reset();

  // A new instance reads the checkpoint, and deletes a row.
  absl::StatusOr<std::unique_ptr<StateTable>> reader =
      StateTable::Create(*catalog, *store, all);
  FuzzCheck(reader.ok(), "a second StateTable", reader.status());
  FuzzCheck((*reader)->InitEpoch(EpochPair{Epoch(2), Epoch(1)}).ok(),
            "InitEpoch");
  CheckReads(**reader, expected);
  if (!expected.empty()) {
    const auto first = expected.begin();
    absl::Status status = (*reader)->Delete(first->second.second);
    FuzzCheck(status.ok(), "deleting a stored row", status);
    absl::StatusOr<std::optional<Row>> read = (*reader)->GetRow(
        ProjectRow(first->second.second, catalog->pk_indices));
    FuzzCheck(read.ok() && !read->has_value(), "a deleted row is gone",
              read.status());
    expected.erase(first);
    CheckReads(**reader, expected);
  }
  FuzzCheck((*reader)->Commit(EpochPair{Epoch(3), Epoch(2)}).ok(), "Commit");
}

}  // namespace
}  // namespace backfill

// Invalid UTF-8 in string fields fails the parse (as it should) and logs an
// error line per input: silenced.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(data, size);
  return 0;
}
