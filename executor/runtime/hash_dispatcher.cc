#include "executor/runtime/hash_dispatcher.h"

#include <utility>

#include "executor/stream_chunk.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

HashDispatcher::HashDispatcher(std::vector<ChannelSender> outputs,
                               VnodeHasher hasher, std::vector<int> vnode_owner,
                               std::vector<int> s2_indices, Clock& clock)
    : outputs_(std::move(outputs)),
      hasher_(std::move(hasher)),
      vnode_owner_(std::move(vnode_owner)),
      s2_indices_(std::move(s2_indices)),
      clock_(clock) {}

absl::Status HashDispatcher::Dispatch(Message message) {
  if (std::holds_alternative<Watermark>(message)) return absl::OkStatus();
  if (std::holds_alternative<Barrier>(message)) {
    for (ChannelSender& output : outputs_) {
      BACKFILL_RETURN_IF_ERROR(output.Send(message, clock_));
    }
    return absl::OkStatus();
  }
  const StreamChunk& chunk = std::get<StreamChunk>(message);
  const size_t n = outputs_.size();
  std::vector<std::vector<Op>> ops(n);
  std::vector<std::vector<Row>> rows(n);
  std::vector<DataType> s2_types;
  const std::vector<DataType> s1_types = chunk.data_types();
  for (int index : s2_indices_) s2_types.push_back(s1_types[index]);
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    const Row row = chunk.RowAt(i);
    const int owner = vnode_owner_[hasher_.VnodeOf(row)];
    Op op = chunk.op(i);
    if (op == Op::kUpdateDelete || op == Op::kUpdateInsert) {
      // Find the other half (the adjacent visible row).
      size_t j = i;
      if (op == Op::kUpdateDelete) {
        for (j = i + 1; j < chunk.capacity() && !chunk.is_visible(j); ++j) {
        }
      } else {
        while (j > 0 && !chunk.is_visible(--j)) {
        }
      }
      if (j < chunk.capacity() && j != i) {
        const int other = vnode_owner_[hasher_.VnodeOf(chunk.RowAt(j))];
        if (other != owner) {
          op = op == Op::kUpdateDelete ? Op::kDelete : Op::kInsert;
        }
      }
    }
    ops[owner].push_back(op);
    rows[owner].push_back(ProjectRow(row, s2_indices_));
  }
  for (size_t actor = 0; actor < n; ++actor) {
    if (rows[actor].empty()) continue;
    Message out = StreamChunk::FromRows(s2_types, std::move(ops[actor]),
                                        rows[actor]);
    BACKFILL_RETURN_IF_ERROR(outputs_[actor].Send(std::move(out), clock_));
  }
  return absl::OkStatus();
}

void HashDispatcher::Close() {
  for (ChannelSender& output : outputs_) output.Close();
}

}  // namespace backfill
