// UpstreamMaterialize: the upstream table's materialize actor in the
// simulation: a consistent StateTable over every vnode, written with the DML,
// plus a model of its content (std::map by pk bytes). Each write returns the
// change records the dispatcher routes (a U-/U+ pair for an update). testonly.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto upstream, UpstreamMaterialize::Create(
//       table, store, EpochPair{Epoch(2), Epoch(1)}, restored_model));
//   std::vector<UpstreamChange> changes;
//   BACKFILL_RETURN_IF_ERROR(upstream->Insert(row, &changes));
//   BACKFILL_RETURN_IF_ERROR(upstream->Commit(EpochPair{Epoch(3), Epoch(2)}));
//
// A failed write leaves the model unchanged (the simulation then crashes and
// reverts everything anyway).
#ifndef TESTS_SIMULATION_UPSTREAM_MATERIALIZE_H_
#define TESTS_SIMULATION_UPSTREAM_MATERIALIZE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/stream_chunk.h"
#include "serde/row.h"
#include "serde/vnode.h"
#include "storage/epoch.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "tests/simulation/sim_table.h"

namespace backfill {
namespace simulation {

// One row of the upstream model.
struct ModelRow {
  Row s1;
  VirtualNode vnode = 0;
};
// The upstream table's content: pk bytes -> row (so iteration is pk order).
using RowModel = std::map<std::string, ModelRow>;

// One change of the upstream stream, in S1. An update is a kUpdateDelete
// record immediately followed by its kUpdateInsert.
struct UpstreamChange {
  Op op = Op::kInsert;
  Row s1;
  VirtualNode vnode = 0;
};

class UpstreamMaterialize {
 public:
  // A table instance whose first epoch is `first` (the caller has made sure
  // the committed epoch is >= first.prev), holding `model` (what the store
  // holds at first.prev).
  static absl::StatusOr<std::unique_ptr<UpstreamMaterialize>> Create(
      const SimTable& table, StateStore& store, EpochPair first,
      RowModel model);

  absl::Status Insert(const Row& row, std::vector<UpstreamChange>* changes);
  absl::Status Delete(const Row& row, std::vector<UpstreamChange>* changes);
  absl::Status Update(const Row& old_row, const Row& new_row,
                      std::vector<UpstreamChange>* changes);
  // Seals the current epoch (next.prev).
  absl::Status Commit(EpochPair next);

  const RowModel& model() const { return model_; }
  bool Contains(const Row& s1) const;
  Epoch epoch() const { return table_->epoch(); }

 private:
  UpstreamMaterialize(const SimTable& table, std::unique_ptr<StateTable> state,
                      RowModel model)
      : sim_(table), table_(std::move(state)), model_(std::move(model)) {}

  const SimTable& sim_;
  std::unique_ptr<StateTable> table_;
  RowModel model_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_UPSTREAM_MATERIALIZE_H_
