#include "storage/replicated_state_table.h"

#include <cassert>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// Projects the S1 rows of an inner iterator to S2.
class ProjectingRowIterator final : public RowIterator {
 public:
  ProjectingRowIterator(std::unique_ptr<RowIterator> inner,
                        absl::Span<const int> output_indices)
      : inner_(std::move(inner)), output_indices_(output_indices) {}
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override {
    inner_->SeekToFirst();
    Load();
  }
  void Next() override {
    inner_->Next();
    Load();
  }
  RowView row() const override { return row_; }
  absl::string_view pk_bytes() const override { return inner_->pk_bytes(); }
  absl::Status status() const override { return inner_->status(); }
  size_t ReadColumns(size_t max_rows,
                     absl::Span<std::vector<Datum>> columns) override {
    if (max_rows == 0 || !inner_->Valid()) return 0;
    // The inner rows in place into S1 columns, then each output column
    // moved over (output indices are distinct).
    s1_columns_.resize(inner_->row().size());
    for (auto& column : s1_columns_) column.clear();
    const size_t n = inner_->ReadColumns(max_rows, absl::MakeSpan(s1_columns_));
    assert(columns.size() == output_indices_.size());
    for (size_t i = 0; i < columns.size() && i < output_indices_.size(); ++i) {
      std::vector<Datum>& from = s1_columns_[output_indices_[i]];
      columns[i].insert(columns[i].end(), std::make_move_iterator(from.begin()),
                        std::make_move_iterator(from.end()));
    }
    Load();
    return n;
  }

 private:
  void Load() {
    if (!inner_->Valid()) return;
    const RowView s1 = inner_->row();
    row_.resize(output_indices_.size());
    for (size_t i = 0; i < output_indices_.size(); ++i) {
      row_[i] = s1[output_indices_[i]];
    }
  }

  std::unique_ptr<RowIterator> inner_;
  absl::Span<const int> output_indices_;
  Row row_;
  // ReadColumns' scratch: a batch of inner rows, column-major.
  std::vector<std::vector<Datum>> s1_columns_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ReplicatedStateTable>>
ReplicatedStateTable::Create(const TableCatalog& upstream_catalog,
                             StateStore& store, VnodeBitmap owned_vnodes,
                             absl::Span<const int32_t> output_column_ids) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(upstream_catalog));
  const std::string table_name =
      absl::StrCat("replicated table ", upstream_catalog.table_id, " (",
                   upstream_catalog.name, ")");
  absl::flat_hash_map<int32_t, int> index_of_id;
  for (size_t i = 0; i < upstream_catalog.columns.size(); ++i) {
    index_of_id[upstream_catalog.columns[i].column_id] = static_cast<int>(i);
  }
  std::vector<int> output_indices;
  absl::flat_hash_map<int, int> s2_position_of_s1;
  for (size_t i = 0; i < output_column_ids.size(); ++i) {
    auto it = index_of_id.find(output_column_ids[i]);
    if (it == index_of_id.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(table_name, ": output_column_ids[", i,
                       "] = ", output_column_ids[i], " is not a column id"));
    }
    if (!s2_position_of_s1.emplace(it->second, static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(table_name, ": output_column_ids[", i,
                       "] = ", output_column_ids[i], " appears twice"));
    }
    output_indices.push_back(it->second);
  }
  std::vector<int> pk_in_output;
  for (int pk_column : upstream_catalog.pk_indices) {
    auto it = s2_position_of_s1.find(pk_column);
    if (it == s2_position_of_s1.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(table_name, ": primary-key column ", pk_column, " (",
                       upstream_catalog.columns[pk_column].name,
                       ") is not in output_column_ids"));
    }
    pk_in_output.push_back(it->second);
  }
  // Writes are S2 rows NULL-filled outside S2, so to the StateTable below
  // every column outside S2 allows NULL. (Nullability is a check on writes
  // only: the stored bytes, and so the upstream's rows read back, are the
  // same.) Columns in S2 keep the upstream's NOT NULL.
  TableCatalog widened = upstream_catalog;
  for (size_t i = 0; i < widened.columns.size(); ++i) {
    if (!s2_position_of_s1.contains(static_cast<int>(i))) {
      widened.columns[i].nullable = true;
    }
  }
  StateTableOptions options;
  options.op_consistency = OpConsistency::kInconsistent;
  options.replicated = true;
  // The snapshot scan reads each row once: keep the cache for the hot set.
  options.fill_cache = false;
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateTable> table,
      StateTable::Create(widened, store, std::move(owned_vnodes), options));
  return std::unique_ptr<ReplicatedStateTable>(new ReplicatedStateTable(
      upstream_catalog, std::move(table), std::move(output_indices),
      std::move(pk_in_output)));
}

ReplicatedStateTable::ReplicatedStateTable(TableCatalog upstream_catalog,
                                           std::unique_ptr<StateTable> table,
                                           std::vector<int> output_indices,
                                           std::vector<int> pk_in_output)
    : upstream_catalog_(std::move(upstream_catalog)),
      table_(std::move(table)),
      output_indices_(std::move(output_indices)),
      pk_in_output_indices_(std::move(pk_in_output)) {
  output_is_identity_ = output_indices_.size() == catalog().columns.size();
  for (size_t i = 0; output_is_identity_ && i < output_indices_.size(); ++i) {
    output_is_identity_ = output_indices_[i] == static_cast<int>(i);
  }
}

absl::Status ReplicatedStateTable::Write(RowOp op, RowView s2_row) {
  if (s2_row.size() != output_indices_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replicated table ", upstream_catalog_.table_id, ": row has ",
        s2_row.size(), " columns, expected ", output_indices_.size()));
  }
  widened_.assign(table_->catalog().columns.size(), Datum());
  for (size_t i = 0; i < output_indices_.size(); ++i) {
    widened_[output_indices_[i]] = s2_row[i];
  }
  switch (op) {
    case RowOp::kInsert:
    case RowOp::kUpdateInsert:
      return table_->Insert(widened_);
    case RowOp::kDelete:
    case RowOp::kUpdateDelete:
      return table_->Delete(widened_);
  }
  return absl::InvalidArgumentError("unknown row op");
}

absl::StatusOr<std::optional<Row>> ReplicatedStateTable::GetRow(RowView pk) {
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> s1, table_->GetRow(pk));
  if (!s1.has_value()) return std::optional<Row>();
  return std::optional<Row>(ProjectRow(*s1, output_indices_));
}

absl::StatusOr<std::unique_ptr<RowIterator>>
ReplicatedStateTable::IterWithVnode(VirtualNode vnode,
                                    const PkRowRange& range) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RowIterator> inner,
                            table_->IterWithVnode(vnode, range));
  if (output_is_identity_) return inner;
  return std::unique_ptr<RowIterator>(
      new ProjectingRowIterator(std::move(inner), output_indices_));
}

}  // namespace backfill
