#include "tests/simulation/upstream_materialize.h"

#include <utility>

#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace simulation {

absl::StatusOr<std::unique_ptr<UpstreamMaterialize>>
UpstreamMaterialize::Create(const SimTable& table, StateStore& store,
                            EpochPair first, RowModel model) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateTable> state,
      StateTable::Create(table.catalog(), store,
                         VnodeBitmap::All(table.catalog().vnode_count)));
  BACKFILL_RETURN_IF_ERROR(state->InitEpoch(first));
  return std::unique_ptr<UpstreamMaterialize>(
      new UpstreamMaterialize(table, std::move(state), std::move(model)));
}

bool UpstreamMaterialize::Contains(const Row& s1) const {
  return model_.contains(sim_.PkBytes(sim_.PkOfS1(s1)));
}

absl::Status UpstreamMaterialize::Insert(const Row& row,
                                         std::vector<UpstreamChange>* changes) {
  BACKFILL_RETURN_IF_ERROR(table_->Insert(row));
  const VirtualNode vnode = sim_.VnodeOfS1(row);
  model_[sim_.PkBytes(sim_.PkOfS1(row))] = ModelRow{row, vnode};
  changes->push_back(UpstreamChange{Op::kInsert, row, vnode});
  return absl::OkStatus();
}

absl::Status UpstreamMaterialize::Delete(const Row& row_ref,
                                         std::vector<UpstreamChange>* changes) {
  const Row row = row_ref;  // may refer into the model
  BACKFILL_RETURN_IF_ERROR(table_->Delete(row));
  model_.erase(sim_.PkBytes(sim_.PkOfS1(row)));
  changes->push_back(UpstreamChange{Op::kDelete, row, sim_.VnodeOfS1(row)});
  return absl::OkStatus();
}

absl::Status UpstreamMaterialize::Update(const Row& old_ref, const Row& new_ref,
                                         std::vector<UpstreamChange>* changes) {
  const Row old_row = old_ref, new_row = new_ref;  // may refer into the model
  BACKFILL_RETURN_IF_ERROR(table_->Update(old_row, new_row));
  model_.erase(sim_.PkBytes(sim_.PkOfS1(old_row)));
  const VirtualNode new_vnode = sim_.VnodeOfS1(new_row);
  model_[sim_.PkBytes(sim_.PkOfS1(new_row))] = ModelRow{new_row, new_vnode};
  changes->push_back(
      UpstreamChange{Op::kUpdateDelete, old_row, sim_.VnodeOfS1(old_row)});
  changes->push_back(UpstreamChange{Op::kUpdateInsert, new_row, new_vnode});
  return absl::OkStatus();
}

absl::Status UpstreamMaterialize::Commit(EpochPair next) {
  return table_->Commit(next);
}

}  // namespace simulation
}  // namespace backfill
