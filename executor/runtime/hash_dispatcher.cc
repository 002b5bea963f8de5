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
      clock_(clock),
      pending_(outputs_.size()),
      blocked_since_(outputs_.size()) {}

absl::Status HashDispatcher::Dispatch(Message message) {
  BACKFILL_RETURN_IF_ERROR(Push(std::move(message)));
  auto waker = std::make_shared<BlockingWaker>();
  while (true) {
    waker->Reset();
    PollContext cx(waker, clock_);
    BACKFILL_ASSIGN_OR_RETURN(const bool flushed, PollFlush(cx));
    if (flushed) return absl::OkStatus();
    waker->WaitUntil(clock_, absl::InfiniteFuture());
  }
}

absl::Status HashDispatcher::Push(Message message) {
  if (std::holds_alternative<Watermark>(message)) return absl::OkStatus();
  if (std::holds_alternative<Barrier>(message)) {
    for (std::deque<Message>& pending : pending_) pending.push_back(message);
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
    for (int index : s2_indices_)
      projected.push_back(chunk.column(index).value(i));
    ops[owner].push_back(op);
    rows[owner].push_back(std::move(projected));
  }
  for (size_t actor = 0; actor < n; ++actor) {
    if (rows[actor].empty()) continue;
    pending_[actor].push_back(
        StreamChunk::FromRows(s2_types, std::move(ops[actor]), rows[actor]));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> HashDispatcher::PollFlush(PollContext& cx) {
  bool flushed = true;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    std::deque<Message>& pending = pending_[i];
    while (!pending.empty()) {
      const SendResult sent = outputs_[i].PollSend(pending.front(), cx);
      if (sent == SendResult::kClosed) {
        pending.clear();
        return absl::CancelledError("dispatcher: channel receiver closed");
      }
      if (sent == SendResult::kFull) {
        // The time a send waits for room: from the first attempt that found
        // the output full until the message is taken.
        if (!blocked_since_[i].has_value()) blocked_since_[i] = clock_.Now();
        flushed = false;
        break;
      }
      pending.pop_front();
      if (blocked_since_[i].has_value()) {
        const int64_t waited =
            absl::ToInt64Nanoseconds(clock_.Now() - *blocked_since_[i]);
        blocked_since_[i].reset();
        int64_t seen = max_blocked_ns_.load(std::memory_order_relaxed);
        while (waited > seen && !max_blocked_ns_.compare_exchange_weak(
                                    seen, waited, std::memory_order_relaxed)) {
        }
      }
    }
  }
  return flushed;
}

void HashDispatcher::Close() {
  for (ChannelSender& output : outputs_) output.Close();
}

}  // namespace backfill
