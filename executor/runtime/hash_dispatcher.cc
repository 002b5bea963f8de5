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
      BACKFILL_RETURN_IF_ERROR(SendTo(output, message));
    }
    return absl::OkStatus();
  }
  const StreamChunk& chunk = std::get<StreamChunk>(message);
  const size_t n = outputs_.size();
  // The vnodes of the whole chunk at once, column-wise.
  std::vector<absl::Span<const Datum>> columns;
  columns.reserve(chunk.num_columns());
  for (int c = 0; c < chunk.num_columns(); ++c) {
    columns.push_back(chunk.column(c).values());
  }
  hasher_.VnodesOfColumns(columns, chunk.capacity(), &vnodes_);
  std::vector<std::vector<Op>> ops(n);
  std::vector<std::vector<Row>> rows(n);
  std::vector<DataType> s2_types;
  for (int index : s2_indices_) s2_types.push_back(chunk.column(index).type());
  // A U-/U+ pair is two adjacent visible rows: remember the U-'s owner.
  int update_delete_owner = -1;
  size_t update_delete_row = 0;
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    const int owner = vnode_owner_[vnodes_[i]];
    Op op = chunk.op(i);
    if (op == Op::kUpdateDelete) {
      update_delete_owner = owner;
      update_delete_row = ops[owner].size();
    } else if (op == Op::kUpdateInsert && update_delete_owner >= 0) {
      if (update_delete_owner != owner) {
        ops[update_delete_owner][update_delete_row] = Op::kDelete;
        op = Op::kInsert;
      }
      update_delete_owner = -1;
    }
    Row projected;
    projected.reserve(s2_indices_.size());
    for (int index : s2_indices_) projected.push_back(chunk.column(index).value(i));
    ops[owner].push_back(op);
    rows[owner].push_back(std::move(projected));
  }
  for (size_t actor = 0; actor < n; ++actor) {
    if (rows[actor].empty()) continue;
    Message out = StreamChunk::FromRows(s2_types, std::move(ops[actor]),
                                        rows[actor]);
    BACKFILL_RETURN_IF_ERROR(SendTo(outputs_[actor], std::move(out)));
  }
  return absl::OkStatus();
}

absl::Status HashDispatcher::SendTo(ChannelSender& output, Message message) {
  switch (output.TrySend(message)) {
    case SendResult::kSent:
      return absl::OkStatus();
    case SendResult::kClosed:
    case SendResult::kFull:
      break;
  }
  const absl::Time start = clock_.Now();
  absl::Status status = output.Send(std::move(message), clock_);
  const int64_t waited = absl::ToInt64Nanoseconds(clock_.Now() - start);
  int64_t seen = max_blocked_ns_.load(std::memory_order_relaxed);
  while (waited > seen && !max_blocked_ns_.compare_exchange_weak(
                              seen, waited, std::memory_order_relaxed)) {
  }
  return status;
}

void HashDispatcher::Close() {
  for (ChannelSender& output : outputs_) output.Close();
}

}  // namespace backfill
