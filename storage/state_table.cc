#include "storage/state_table.h"

#include <cassert>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "serde/schema.h"
#include "serde/vnode_hash.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

class StateTableRowIterator final : public RowIterator {
 public:
  StateTableRowIterator(std::unique_ptr<StateStoreIterator> inner,
                        const StateTable* table, VirtualNode vnode)
      : inner_(std::move(inner)), table_(table), vnode_(vnode) {}

  bool Valid() const override { return status_.ok() && inner_->Valid(); }
  void SeekToFirst() override {
    inner_->SeekToFirst();
    Load();
  }
  void Next() override {
    inner_->Next();
    Load();
  }
  RowView row() const override { return row_; }
  absl::string_view pk_bytes() const override { return inner_->key(); }
  absl::Status status() const override {
    if (!status_.ok()) return status_;
    return inner_->status();
  }
  size_t ReadColumns(size_t max_rows,
                     absl::Span<std::vector<Datum>> columns) override {
    if (max_rows == 0 || !Valid()) return 0;
    assert(columns.size() == row_.size());
    // The current row is decoded already (Load): move it over. The rest
    // decode in place; only the row the batch stops on goes to row_.
    MoveRowIntoColumns(row_, columns);
    inner_->Next();
    const size_t n =
        1 + inner_->VisitRows(max_rows - 1, [&](absl::string_view key,
                                                absl::string_view value) {
          absl::Status decoded =
              table_->DecodeRowAppend(vnode_, key, value, columns);
          if (ABSL_PREDICT_TRUE(decoded.ok())) return true;
          status_ = std::move(decoded);
          return false;
        });
    Load();  // nothing after an error: the batch stopped on the bad row
    return n;
  }

 private:
  void Load() {
    if (!status_.ok() || !inner_->Valid()) return;
    status_ = table_->DecodeRow(vnode_, inner_->key(), inner_->value(), &row_);
  }

  std::unique_ptr<StateStoreIterator> inner_;
  const StateTable* table_;
  VirtualNode vnode_;
  Row row_;
  absl::Status status_;
};

}  // namespace

size_t RowIterator::ReadColumns(size_t max_rows,
                                absl::Span<std::vector<Datum>> columns) {
  size_t n = 0;
  for (; n < max_rows && Valid(); ++n, Next()) {
    const RowView row = this->row();
    assert(row.size() == columns.size());
    for (size_t c = 0; c < columns.size() && c < row.size(); ++c) {
      columns[c].push_back(row[c]);
    }
  }
  return n;
}

absl::StatusOr<std::unique_ptr<StateTable>> StateTable::Create(
    const TableCatalog& catalog, StateStore& store, VnodeBitmap owned_vnodes,
    const StateTableOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(catalog));
  if (static_cast<int>(owned_vnodes.size()) != catalog.vnode_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", catalog.table_id, " (", catalog.name, "): vnode bitmap has ",
        owned_vnodes.size(), " bits but the table has ", catalog.vnode_count,
        " vnodes"));
  }
  BACKFILL_ASSIGN_OR_RETURN(
      KeySerde pk_serde,
      KeySerde::CreateFromColumnTypes(catalog.PkColumnTypes(),
                                      catalog.pk_orders));
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ValueRowCodec> value_codec,
                            MakeValueCodec(catalog));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher row_hasher,
      VnodeHasher::Create(catalog.dist_key_indices, catalog.vnode_count));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher pk_hasher,
      VnodeHasher::Create(catalog.DistKeyInPk(), catalog.vnode_count));
  LocalOptions local_options;
  local_options.replicated = options.replicated;
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<LocalStateStore> local,
      store.NewLocalStateStore(catalog.table_id, local_options));
  return std::unique_ptr<StateTable>(
      new StateTable(catalog, std::move(owned_vnodes), std::move(pk_serde),
                     std::move(row_hasher), std::move(pk_hasher),
                     std::move(value_codec), std::move(local), store, options));
}

StateTable::StateTable(TableCatalog catalog, VnodeBitmap vnodes,
                       KeySerde pk_serde, VnodeHasher row_hasher,
                       VnodeHasher pk_hasher,
                       std::unique_ptr<ValueRowCodec> value_codec,
                       std::unique_ptr<LocalStateStore> local,
                       StateStore& store, StateTableOptions options)
    : catalog_(std::move(catalog)),
      vnodes_(std::move(vnodes)),
      pk_serde_(std::move(pk_serde)),
      value_codec_(std::move(value_codec)),
      local_(std::move(local)),
      store_(store),
      options_(options),
      row_hasher_(std::move(row_hasher)),
      pk_hasher_(std::move(pk_hasher)),
      column_types_(ColumnTypes(catalog_.columns)) {
  if (catalog_.vnode_column.has_value()) {
    for (size_t i = 0; i < catalog_.pk_indices.size(); ++i) {
      if (catalog_.pk_indices[i] == *catalog_.vnode_column) {
        vnode_column_in_pk_ = static_cast<int>(i);
      }
    }
  }
  pk_only_columns_ = catalog_.PkOnlyColumns();
  value_is_whole_row_ =
      pk_only_columns_.empty() &&
      catalog_.value_indices.size() == catalog_.columns.size();
  for (size_t i = 0; value_is_whole_row_ && i < catalog_.value_indices.size();
       ++i) {
    value_is_whole_row_ = catalog_.value_indices[i] == static_cast<int>(i);
  }
}

StateTable::~StateTable() = default;

bool StateTable::ReadyToInit(EpochPair first) const {
  return store_.IsCommitted(catalog_.table_id, first.prev);
}

absl::Status StateTable::InitEpoch(EpochPair first, const InitWait& wait) {
  if (initialised_) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): InitEpoch called twice"));
  }
  if (!ReadyToInit(first)) {
    Cancellation never;
    BACKFILL_RETURN_IF_ERROR(store_.WaitCommitted(
        catalog_.table_id, first.prev, wait.deadline,
        wait.cancellation != nullptr ? *wait.cancellation : never,
        wait.clock != nullptr ? *wait.clock : Clock::Real()));
  }
  BACKFILL_RETURN_IF_ERROR(local_->Init(first));
  initialised_ = true;
  return absl::OkStatus();
}

namespace {

VirtualNode VnodeFromColumn(const Datum& datum, int vnode_count) {
  const int16_t* value = std::get_if<int16_t>(&datum);
  if (value == nullptr || *value < 0 || *value >= vnode_count) {
    return static_cast<VirtualNode>(vnode_count);
  }
  return static_cast<VirtualNode>(*value);
}

}  // namespace

VirtualNode StateTable::ComputeVnodeByPk(RowView pk) const {
  if (vnode_column_in_pk_ >= 0) {
    return VnodeFromColumn(pk[vnode_column_in_pk_], catalog_.vnode_count);
  }
  return pk_hasher_.VnodeOf(pk);
}

VirtualNode StateTable::ComputeVnode(RowView row) const {
  if (catalog_.vnode_column.has_value()) {
    return VnodeFromColumn(row[*catalog_.vnode_column], catalog_.vnode_count);
  }
  return row_hasher_.VnodeOf(row);
}

std::string StateTable::ErrorContext(VirtualNode vnode,
                                     absl::string_view pk_bytes) const {
  std::string pk_text = absl::CHexEscape(pk_bytes);
  if (absl::StatusOr<Row> pk = pk_serde_.Deserialize(pk_bytes); pk.ok()) {
    pk_text = RowDebugString(*pk);
  }
  return absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                      ") vnode ", vnode, " pk ", pk_text, " at ",
                      local_->epoch().DebugString());
}

absl::Status StateTable::CheckWritable(RowView row, VirtualNode* vnode,
                                       std::string* pk_bytes) {
  if (!initialised_) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): write before InitEpoch"));
  }
  if (absl::Status status = ValidateRow(catalog_.columns, row); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("table ", catalog_.table_id,
                                                   " (", catalog_.name,
                                                   "): ", status.message()));
  }
  *vnode = ComputeVnode(row);
  pk_bytes->clear();
  Row pk = ProjectRow(row, catalog_.pk_indices);
  pk_serde_.Serialize(pk, pk_bytes);
  if (!vnodes_.Test(*vnode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("write to a vnode this table does not own: ",
                     ErrorContext(*vnode, *pk_bytes)));
  }
  return absl::OkStatus();
}

absl::Status StateTable::Put(RowView row, VirtualNode vnode,
                             absl::string_view pk_bytes) {
  scratch_row_.clear();
  for (int column : catalog_.value_indices) scratch_row_.push_back(row[column]);
  scratch_value_.clear();
  value_codec_->Encode(scratch_row_, &scratch_value_);
  return local_->Insert(vnode, pk_bytes, scratch_value_);
}

absl::Status StateTable::CorruptValue(const absl::Status& decoded,
                                      VirtualNode vnode,
                                      absl::string_view pk_bytes) const {
  if (decoded.ok()) return decoded;
  return absl::DataLossError(absl::StrCat("corrupt value: ", decoded.message(),
                                          ": ", ErrorContext(vnode, pk_bytes)));
}

absl::Status StateTable::DecodeRowAppend(
    VirtualNode vnode, absl::string_view pk_bytes, absl::string_view value,
    absl::Span<std::vector<Datum>> columns) const {
  assert(columns.size() == catalog_.columns.size());
  if (value_is_whole_row_) {  // The scan's fast path: in place.
    return CorruptValue(value_codec_->DecodeAppend(value, columns), vnode,
                        pk_bytes);
  }
  Row row;
  BACKFILL_RETURN_IF_ERROR(DecodeRow(vnode, pk_bytes, value, &row));
  MoveRowIntoColumns(row, columns);
  return absl::OkStatus();
}

absl::Status StateTable::DecodeRow(VirtualNode vnode,
                                   absl::string_view pk_bytes,
                                   absl::string_view value, Row* out) const {
  if (value_is_whole_row_) {  // The scan's fast path: no copies.
    return CorruptValue(value_codec_->DecodeInto(value, out), vnode, pk_bytes);
  }
  absl::StatusOr<Row> decoded = value_codec_->Decode(value);
  BACKFILL_RETURN_IF_ERROR(CorruptValue(decoded.status(), vnode, pk_bytes));
  Row& values = *decoded;
  out->assign(catalog_.columns.size(), Datum());
  for (size_t i = 0; i < catalog_.value_indices.size() && i < values.size();
       ++i) {
    (*out)[catalog_.value_indices[i]] = std::move(values[i]);
  }
  if (!pk_only_columns_.empty()) {
    absl::StatusOr<Row> pk = pk_serde_.Deserialize(pk_bytes);
    if (!pk.ok()) {
      return absl::DataLossError(
          absl::StrCat("corrupt key: ", pk.status().message(), ": ",
                       ErrorContext(vnode, pk_bytes)));
    }
    for (const auto& [position, column] : pk_only_columns_) {
      (*out)[column] = std::move((*pk)[position]);
    }
  }
  return absl::OkStatus();
}

absl::Status StateTable::Insert(RowView row) {
  VirtualNode vnode = 0;
  std::string pk_bytes;
  BACKFILL_RETURN_IF_ERROR(CheckWritable(row, &vnode, &pk_bytes));
  if (options_.op_consistency == OpConsistency::kConsistentOldValue) {
    BACKFILL_ASSIGN_OR_RETURN(std::optional<std::string> existing,
                              local_->Get(vnode, pk_bytes));
    if (existing.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("inconsistent insert: the pk already exists: ",
                       ErrorContext(vnode, pk_bytes)));
    }
  }
  return Put(row, vnode, pk_bytes);
}

absl::Status StateTable::Delete(RowView row) {
  VirtualNode vnode = 0;
  std::string pk_bytes;
  BACKFILL_RETURN_IF_ERROR(CheckWritable(row, &vnode, &pk_bytes));
  if (options_.op_consistency == OpConsistency::kConsistentOldValue) {
    BACKFILL_ASSIGN_OR_RETURN(std::optional<std::string> existing,
                              local_->Get(vnode, pk_bytes));
    if (!existing.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("inconsistent delete: no row with this pk: ",
                       ErrorContext(vnode, pk_bytes)));
    }
    Row stored;
    BACKFILL_RETURN_IF_ERROR(DecodeRow(vnode, pk_bytes, *existing, &stored));
    if (!RowsEqual(stored, row)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "inconsistent delete: stored row ", RowDebugString(stored),
          " differs from deleted row ", RowDebugString(row), ": ",
          ErrorContext(vnode, pk_bytes)));
    }
  }
  return local_->Delete(vnode, pk_bytes);
}

absl::Status StateTable::Update(RowView old_row, RowView new_row) {
  VirtualNode old_vnode = 0, new_vnode = 0;
  std::string old_pk, new_pk;
  BACKFILL_RETURN_IF_ERROR(CheckWritable(old_row, &old_vnode, &old_pk));
  BACKFILL_RETURN_IF_ERROR(CheckWritable(new_row, &new_vnode, &new_pk));
  if (old_pk != new_pk || old_vnode != new_vnode) {
    BACKFILL_RETURN_IF_ERROR(Delete(old_row));
    return Insert(new_row);
  }
  if (options_.op_consistency == OpConsistency::kConsistentOldValue) {
    BACKFILL_ASSIGN_OR_RETURN(std::optional<std::string> existing,
                              local_->Get(old_vnode, old_pk));
    if (!existing.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("inconsistent update: no row with this pk: ",
                       ErrorContext(old_vnode, old_pk)));
    }
    Row stored;
    BACKFILL_RETURN_IF_ERROR(DecodeRow(old_vnode, old_pk, *existing, &stored));
    if (!RowsEqual(stored, old_row)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "inconsistent update: stored row ", RowDebugString(stored),
          " differs from old row ", RowDebugString(old_row), ": ",
          ErrorContext(old_vnode, old_pk)));
    }
  }
  return Put(new_row, new_vnode, new_pk);
}

absl::StatusOr<std::optional<Row>> StateTable::GetRow(RowView pk) {
  if (!initialised_) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): read before InitEpoch"));
  }
  if (pk.size() != catalog_.pk_indices.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", catalog_.table_id, " (", catalog_.name, "): pk has ",
        pk.size(), " columns, expected ", catalog_.pk_indices.size()));
  }
  const VirtualNode vnode = ComputeVnodeByPk(pk);
  const std::string pk_bytes = pk_serde_.Serialize(pk);
  BACKFILL_ASSIGN_OR_RETURN(std::optional<std::string> value,
                            local_->Get(vnode, pk_bytes));
  if (!value.has_value()) return std::optional<Row>();
  Row row;
  BACKFILL_RETURN_IF_ERROR(DecodeRow(vnode, pk_bytes, *value, &row));
  return std::optional<Row>(std::move(row));
}

absl::StatusOr<std::unique_ptr<RowIterator>> StateTable::IterWithVnode(
    VirtualNode vnode, const PkRowRange& range) {
  if (!initialised_) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): read before InitEpoch"));
  }
  if (vnode >= vnodes_.size() || !vnodes_.Test(vnode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): iterating vnode ", vnode, " which it does not own"));
  }
  PkRange pk_range;
  if (range.start.has_value()) {
    const KeySerde prefix = pk_serde_.Prefix(
        std::min(range.start->size(), pk_serde_.num_columns()));
    std::string start = prefix.Serialize(*range.start);
    if (range.start_exclusive) {
      std::optional<std::string> next = NextKey(start);
      if (!next.has_value()) {
        // Nothing can follow an all-0xFF key: an empty range.
        pk_range.inclusive_min = start;
        pk_range.exclusive_max = start;
      } else {
        pk_range.inclusive_min = std::move(*next);
      }
    } else {
      pk_range.inclusive_min = std::move(start);
    }
  }
  if (range.exclusive_end.has_value()) {
    const KeySerde prefix = pk_serde_.Prefix(
        std::min(range.exclusive_end->size(), pk_serde_.num_columns()));
    pk_range.exclusive_max = prefix.Serialize(*range.exclusive_end);
  }
  ScanOptions scan_options;
  scan_options.fill_cache = options_.fill_cache;
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<StateStoreIterator> inner,
                            local_->NewIterator(vnode, pk_range, scan_options));
  return std::unique_ptr<RowIterator>(
      new StateTableRowIterator(std::move(inner), this, vnode));
}

absl::Status StateTable::Commit(EpochPair next) {
  if (!initialised_) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", catalog_.table_id, " (", catalog_.name,
                     "): Commit before InitEpoch"));
  }
  if (next.prev != local_->epoch()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "table ", catalog_.table_id, " (", catalog_.name, "): commit of ",
        next.DebugString(), " does not continue the current ",
        local_->epoch().DebugString()));
  }
  return local_->Seal(next);
}

}  // namespace backfill
