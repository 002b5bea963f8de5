#include "executor/runtime/verifier.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "serde/memcmp_codec.h"
#include "serde/vnode_bitmap.h"
#include "storage/replicated_state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

std::string EncodedRow(const Row& row, const std::vector<DataType>& types) {
  std::string key;
  EncodeKey(row, types,
            std::vector<OrderType>(types.size(), OrderType::Ascending()), &key);
  return key;
}

}  // namespace

absl::StatusOr<std::vector<Row>> ReadCommittedRows(
    StateStore& store, const TableCatalog& catalog,
    const std::vector<int>& columns) {
  // A read-only view through a replicated instance: it decodes rows exactly
  // as the table's own state table does, and is never part of a checkpoint.
  std::vector<int32_t> all_ids;
  for (const ColumnDesc& column : catalog.columns) {
    all_ids.push_back(column.column_id);
  }
  BACKFILL_ASSIGN_OR_RETURN(
      auto table,
      ReplicatedStateTable::Create(
          catalog, store, VnodeBitmap::All(catalog.vnode_count), all_ids));
  const Epoch committed = store.CommittedEpoch(catalog.table_id);
  BACKFILL_RETURN_IF_ERROR(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  std::vector<DataType> types;
  for (int column : columns) types.push_back(catalog.columns[column].type);
  std::vector<std::pair<std::string, Row>> rows;
  for (int vnode = 0; vnode < catalog.vnode_count; ++vnode) {
    BACKFILL_ASSIGN_OR_RETURN(
        auto it, table->IterWithVnode(static_cast<VirtualNode>(vnode)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Row projected = ProjectRow(it->row(), columns);
      std::string key = EncodedRow(projected, types);
      rows.emplace_back(std::move(key), std::move(projected));
    }
    BACKFILL_RETURN_IF_ERROR(it->status());
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Row> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

absl::StatusOr<ViewVerdict> VerifyView(StateStore& store,
                                       const StreamingJobOptions& options) {
  const std::vector<int> output = JobOutputColumns(options);
  std::vector<int> view_output;
  for (size_t i = 0; i < output.size(); ++i) {
    view_output.push_back(static_cast<int>(i));
  }
  BACKFILL_ASSIGN_OR_RETURN(std::vector<Row> upstream_rows,
                            ReadCommittedRows(store, options.upstream, output));
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<Row> view_rows,
      ReadCommittedRows(store, ViewCatalog(options), view_output));
  ViewVerdict verdict;
  verdict.upstream_rows = upstream_rows.size();
  verdict.view_rows = view_rows.size();
  verdict.consistent = upstream_rows.size() == view_rows.size();
  for (size_t i = 0; verdict.consistent && i < upstream_rows.size(); ++i) {
    if (!RowsEqual(upstream_rows[i], view_rows[i])) {
      verdict.consistent = false;
      verdict.mismatch =
          absl::StrCat("row ", i, ": table ", RowDebugString(upstream_rows[i]),
                       " view ", RowDebugString(view_rows[i]));
    }
  }
  if (!verdict.consistent && verdict.mismatch.empty()) {
    verdict.mismatch = absl::StrCat("table has ", upstream_rows.size(),
                                    " rows, view has ", view_rows.size());
  }
  return verdict;
}

}  // namespace backfill
