// ViewModel: the downstream materialized view of the simulation, kept as a
// model: per vnode, pk bytes -> S3 row. Every output chunk of every backfill
// actor is applied to it; an insert of a pk the view holds (a duplicate), a
// delete of a row it lacks, or a row of a vnode the actor does not own is a
// Divergence. testonly.
//
//   ViewModel view(table);
//   if (auto d = view.Apply(chunk, actor_vnodes)) report(*d);
//   ViewModel::Vnodes part = view.Part(actor_vnodes);  // for checkpoints
#ifndef TESTS_SIMULATION_VIEW_MODEL_H_
#define TESTS_SIMULATION_VIEW_MODEL_H_

#include <map>
#include <optional>
#include <string>

#include "executor/stream_chunk.h"
#include "serde/row.h"
#include "serde/vnode.h"
#include "serde/vnode_bitmap.h"
#include "tests/simulation/divergence.h"
#include "tests/simulation/sim_table.h"

namespace backfill {
namespace simulation {

struct ViewRow {
  Row s3;
  std::string encoded;  // SimTable::EncodeS3(s3)
};

class ViewModel {
 public:
  // pk bytes -> row.
  using VnodeRows = std::map<std::string, ViewRow>;
  // vnode -> its rows (vnodes without rows absent).
  using Vnodes = std::map<VirtualNode, VnodeRows>;

  // REQUIRES: `table` outlives the model.
  explicit ViewModel(const SimTable& table) : table_(table) {}

  // Applies an S3 chunk emitted by an actor owning `owned`, row by row.
  // Returns the first violation (the view then holds the rows before it).
  std::optional<Divergence> Apply(const StreamChunk& chunk,
                                  const VnodeBitmap& owned);

  // The rows of the vnodes in `owned`.
  Vnodes Part(const VnodeBitmap& owned) const;
  const Vnodes& vnodes() const { return vnodes_; }
  void Restore(Vnodes vnodes) { vnodes_ = std::move(vnodes); }
  size_t num_rows() const;

 private:
  const SimTable& table_;
  Vnodes vnodes_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_VIEW_MODEL_H_
