// ReplicatedStateTable: an actor's private, never-committed mirror of another
// actor's (the upstream's) table, used by the arrangement backfill to read the
// upstream's snapshot including its not-yet-committed writes (CONTRACT §3).
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(auto replica, ReplicatedStateTable::Create(
//       upstream_catalog, store, owned_vnodes, /*output_column_ids=*/{3, 1}));
//   replica->Write(RowOp::kInsert, s2_row);    // widened to S1, NULL-filled
//   replica->Commit(next);                     // sealed privately, never committed
// clang-format on
//
// Schemas: S1 = the upstream catalog's columns (what storage holds); S2 = the
// columns named by `output_column_ids`, in that order. Writes take S2 rows and
// widen them to S1 with NULL in every column not in S2; reads return S2 rows.
// Every primary-key column must be in S2 (else InvalidArgument at Create).
//
// Visibility: reads see the upstream's committed data plus this instance's own
// sealed and unsealed writes; each sealed batch is dropped once the upstream's
// committed epoch reaches it (the committed store then holds the same data).
// Writes are inconsistent: no existence checks, the last write of a pk wins.
// Thread-safety: one thread at a time.
#ifndef STORAGE_REPLICATED_STATE_TABLE_H_
#define STORAGE_REPLICATED_STATE_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "serde/row.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_table.h"

namespace backfill {

// The kind of one replicated row write.
enum class RowOp : uint8_t {
  kInsert,        // put
  kDelete,        // tombstone
  kUpdateDelete,  // U-: tombstone
  kUpdateInsert,  // U+: put
};

class ReplicatedStateTable {
 public:
  // Errors: InvalidArgument for a bad catalog, an unknown or repeated column
  // id, or a pk column missing from `output_column_ids` (named).
  static absl::StatusOr<std::unique_ptr<ReplicatedStateTable>> Create(
      const TableCatalog& upstream_catalog, StateStore& store,
      VnodeBitmap owned_vnodes, absl::Span<const int32_t> output_column_ids);

  // As StateTable.
  bool ReadyToInit(EpochPair first) const { return table_->ReadyToInit(first); }
  absl::Status InitEpoch(EpochPair first, const InitWait& wait = {}) {
    return table_->InitEpoch(first, wait);
  }

  // Replicates one S2 row. Errors: InvalidArgument for a row of the wrong
  // shape; FailedPrecondition for an unowned vnode or before InitEpoch.
  absl::Status Write(RowOp op, RowView s2_row);

  // The S2 row with primary key `pk` (pk columns in pk order), or nullopt.
  absl::StatusOr<std::optional<Row>> GetRow(RowView pk);
  // S2 rows of one vnode in pk order (see StateTable::IterWithVnode).
  absl::StatusOr<std::unique_ptr<RowIterator>> IterWithVnode(
      VirtualNode vnode, const PkRowRange& range = {});

  // Seals this epoch's replicated writes privately; see StateTable::Commit.
  absl::Status Commit(EpochPair next) { return table_->Commit(next); }

  Epoch epoch() const { return table_->epoch(); }
  StateStore& store() const { return table_->store(); }
  // The upstream's catalog, as given to Create.
  const TableCatalog& catalog() const { return upstream_catalog_; }
  const VnodeBitmap& vnodes() const { return table_->vnodes(); }
  const KeySerde& pk_serde() const { return table_->pk_serde(); }
  // For each S2 column, its S1 index.
  absl::Span<const int> output_indices() const { return output_indices_; }
  // For each pk column (pk order), its position in S2.
  absl::Span<const int> pk_in_output_indices() const {
    return pk_in_output_indices_;
  }
  // The vnode of a pk row (pk order), from the upstream distribution key.
  VirtualNode ComputeVnodeByPk(RowView pk) const {
    return table_->ComputeVnodeByPk(pk);
  }

 private:
  ReplicatedStateTable(TableCatalog upstream_catalog,
                       std::unique_ptr<StateTable> table,
                       std::vector<int> output_indices,
                       std::vector<int> pk_in_output_indices);

  TableCatalog upstream_catalog_;
  // Over the upstream catalog with every column outside S2 nullable.
  std::unique_ptr<StateTable> table_;
  std::vector<int> output_indices_;
  std::vector<int> pk_in_output_indices_;
  // S2 = S1 (every column, in order): scans return stored rows unprojected.
  bool output_is_identity_ = false;
  Row widened_;
};

}  // namespace backfill

#endif  // STORAGE_REPLICATED_STATE_TABLE_H_
