#include "executor/runtime/hash_dispatcher.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/stream_chunk.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

HashDispatcher::HashDispatcher(std::vector<ChannelSender> outputs,
                               VnodeHasher hasher, std::vector<int> vnode_owner,
                               std::vector<int> s2_indices, Clock& clock,
                               ExchangeEndpoint endpoint)
    : hasher_(std::move(hasher)),
      vnode_owner_(std::move(vnode_owner)),
      s2_indices_(std::move(s2_indices)),
      clock_(clock),
      endpoint_(std::move(endpoint)) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs_.emplace_back(i < endpoint_.peers.size() ? endpoint_.peers[i] : 0,
                          std::move(outputs[i]));
  }
}

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
  if (const Barrier* barrier = std::get_if<Barrier>(&message)) {
    for (Output& output : outputs_) {
      if (!output.removed) output.pending.push_back(message);
    }
    const DispatcherUpdate* update = nullptr;
    if (const auto* m = barrier->MutationAs<UpdateMutation>()) {
      auto it = m->dispatchers.find(endpoint_.actor);
      if (it != m->dispatchers.end()) update = &it->second;
    }
    // The barrier after a rescale's barrier closes its window once
    // delivered; back-to-back rescales keep it open.
    if (window_ == Window::kOpen && update == nullptr) {
      window_ = Window::kClosing;
    }
    if (update == nullptr) return absl::OkStatus();
    return ApplyUpdate(*barrier, *update);
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
    outputs_[actor].pending.push_back(
        StreamChunk::FromRows(s2_types, std::move(ops[actor]), rows[actor]));
  }
  return absl::OkStatus();
}

absl::Status HashDispatcher::ApplyUpdate(const Barrier& barrier,
                                         const DispatcherUpdate& update) {
  const std::string context =
      absl::StrCat("dispatcher of actor ", endpoint_.actor, " at ",
                   barrier.epoch.DebugString(), ": ");
  if (endpoint_.exchange == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(context, "an Update reschedules it but it has no exchange"));
  }
  if (update.vnode_owners.size() != vnode_owner_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, "the update names owners of ", update.vnode_owners.size(),
        " vnodes, not ", vnode_owner_.size()));
  }
  std::map<ActorId, int> index;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (!outputs_[i].removed) index[outputs_[i].actor] = static_cast<int>(i);
  }
  for (ActorId actor : update.removed_downstream_actors) {
    auto it = index.find(actor);
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, "removed actor ", actor, " has no output here"));
    }
    outputs_[it->second].removed = true;
    index.erase(it);
  }
  for (ActorId actor : update.added_downstream_actors) {
    BACKFILL_ASSIGN_OR_RETURN(ChannelSender sender,
                              endpoint_.exchange->TakeSender(endpoint_.actor,
                                                             actor));
    index[actor] = static_cast<int>(outputs_.size());
    outputs_.emplace_back(actor, std::move(sender));
    outputs_.back().pending.push_back(Message(barrier));  // its first message
  }
  std::vector<int> owner(update.vnode_owners.size());
  for (size_t vnode = 0; vnode < owner.size(); ++vnode) {
    auto it = index.find(update.vnode_owners[vnode]);
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, "vnode ", vnode, " goes to actor ",
          update.vnode_owners[vnode], ", which has no output after it"));
    }
    owner[vnode] = it->second;
  }
  vnode_owner_ = std::move(owner);
  window_ = Window::kOpen;
  return absl::OkStatus();
}

absl::StatusOr<bool> HashDispatcher::PollFlush(PollContext& cx) {
  bool flushed = true;
  for (Output& output : outputs_) {
    while (!output.pending.empty()) {
      const SendResult sent = output.sender.PollSend(output.pending.front(), cx);
      if (sent == SendResult::kClosed) {
        output.pending.clear();
        return absl::CancelledError("dispatcher: channel receiver closed");
      }
      if (sent == SendResult::kFull) {
        // The time a send waits for room: from the first attempt that found
        // the output full until the message is taken.
        if (!output.blocked_since.has_value()) {
          output.blocked_since = clock_.Now();
        }
        flushed = false;
        break;
      }
      output.pending.pop_front();
      if (output.blocked_since.has_value()) {
        RaiseTo(max_blocked_ns_, absl::ToInt64Nanoseconds(
                                     clock_.Now() - *output.blocked_since));
        output.blocked_since.reset();
      }
    }
  }
  if (!flushed) {
    if (!stalled_since_.has_value()) stalled_since_ = clock_.Now();
    return false;
  }
  if (stalled_since_.has_value()) {
    if (window_ != Window::kNone) {
      window_blocked_ += clock_.Now() - *stalled_since_;
    }
    stalled_since_.reset();
  }
  if (window_ == Window::kClosing) {
    RaiseTo(max_rescale_blocked_ns_, absl::ToInt64Nanoseconds(window_blocked_));
    window_ = Window::kNone;
    window_blocked_ = absl::ZeroDuration();
  }
  DropRemovedOutputs();
  return true;
}

void HashDispatcher::DropRemovedOutputs() {
  bool any = false;
  for (const Output& output : outputs_) any |= output.removed;
  if (!any) return;
  std::vector<int> new_index(outputs_.size(), -1);
  std::vector<Output> kept;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].removed) {
      outputs_[i].sender.Close();
      continue;
    }
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(outputs_[i]));
  }
  outputs_ = std::move(kept);
  // No vnode is owned by a removed output (ApplyUpdate checked it).
  for (int& owner : vnode_owner_) owner = new_index[owner];
}

void HashDispatcher::Close() {
  for (Output& output : outputs_) output.sender.Close();
  if (window_ != Window::kNone) {
    RaiseTo(max_rescale_blocked_ns_, absl::ToInt64Nanoseconds(window_blocked_));
    window_ = Window::kNone;
  }
}

void HashDispatcher::RaiseTo(std::atomic<int64_t>& max, int64_t value) {
  int64_t seen = max.load(std::memory_order_relaxed);
  while (value > seen &&
         !max.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace backfill
