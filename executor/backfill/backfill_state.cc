#include "executor/backfill/backfill_state.h"

#include <cassert>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/saturating.h"

namespace backfill {

namespace {

// The row count of an InProgress or Completed progress; 0 for NotStarted.
uint64_t RowCountOf(const VnodeProgress& progress) {
  if (const auto* p = std::get_if<InProgress>(&progress)) return p->row_count;
  if (const auto* p = std::get_if<Completed>(&progress)) return p->row_count;
  return 0;
}

}  // namespace

bool ProgressSamePosition(const VnodeProgress& a, const VnodeProgress& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<InProgress>(&a)) {
    return RowsEqual(x->current_pos, std::get<InProgress>(b).current_pos);
  }
  if (const auto* x = std::get_if<Completed>(&a)) {
    return RowsEqual(x->current_pos, std::get<Completed>(b).current_pos);
  }
  return true;  // both NotStarted
}

bool ProgressEquals(const VnodeProgress& a, const VnodeProgress& b) {
  return ProgressSamePosition(a, b) && RowCountOf(a) == RowCountOf(b);
}

std::string ProgressDebugString(const VnodeProgress& progress) {
  if (const auto* p = std::get_if<InProgress>(&progress)) {
    return absl::StrCat("InProgress{", RowDebugString(p->current_pos), ", ",
                        p->row_count, "}");
  }
  if (const auto* p = std::get_if<Completed>(&progress)) {
    return absl::StrCat("Completed{", RowDebugString(p->current_pos), ", ",
                        p->row_count, "}");
  }
  return "NotStarted";
}

BackfillState::BackfillState(std::map<VirtualNode, VnodeProgress> loaded) {
  for (auto& [vnode, progress] : loaded) {
    vnodes_.emplace(vnode, PerVnode{progress, progress});
  }
}

const VnodeProgress* BackfillState::Get(VirtualNode vnode) const {
  auto it = vnodes_.find(vnode);
  return it == vnodes_.end() ? nullptr : &it->second.current;
}

const VnodeProgress* BackfillState::GetCommitted(VirtualNode vnode) const {
  auto it = vnodes_.find(vnode);
  return it == vnodes_.end() ? nullptr : &it->second.committed;
}

std::vector<VirtualNode> BackfillState::owned_vnodes() const {
  std::vector<VirtualNode> out;
  out.reserve(vnodes_.size());
  for (const auto& entry : vnodes_) out.push_back(entry.first);
  return out;
}

absl::Status BackfillState::UpdateProgress(VirtualNode vnode, Row pos,
                                           uint64_t delta) {
  auto it = vnodes_.find(vnode);
  if (it == vnodes_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("UpdateProgress of a vnode not owned: vnode ", vnode));
  }
  VnodeProgress& current = it->second.current;
  if (std::holds_alternative<Completed>(current)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "UpdateProgress of a Completed vnode: vnode ", vnode, " ",
        ProgressDebugString(current), ", new pos ", RowDebugString(pos)));
  }
  // Saturates at the persisted range: a loaded count near INT64_MAX, only
  // from corrupt or absurd data, must not wrap or fail the encoding
  // (BackfillStateTest.RowCountsSaturate).
  constexpr uint64_t kMaxCount =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const auto* in_progress = std::get_if<InProgress>(&current);
  const uint64_t count = SaturatingAdd(
      in_progress != nullptr ? in_progress->row_count : 0, delta, kMaxCount);
  current = InProgress{std::move(pos), count};
  touched_.insert(vnode);
  return absl::OkStatus();
}

absl::Status BackfillState::FinishProgress(VirtualNode vnode, size_t pk_len) {
  auto it = vnodes_.find(vnode);
  if (it == vnodes_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("FinishProgress of a vnode not owned: vnode ", vnode));
  }
  VnodeProgress& current = it->second.current;
  touched_.insert(vnode);
  if (std::holds_alternative<NotStarted>(current)) {
    current = Completed{Row(pk_len, Datum()), 0};
  } else if (auto* in_progress = std::get_if<InProgress>(&current)) {
    current =
        Completed{std::move(in_progress->current_pos), in_progress->row_count};
  }
  return absl::OkStatus();
}

void BackfillState::FinishAll(size_t pk_len) {
  for (auto& entry : vnodes_) {
    absl::Status status = FinishProgress(entry.first, pk_len);
    assert(status.ok());
    (void)status;
  }
}

bool BackfillState::HasProgress() const {
  for (const auto& entry : vnodes_) {
    if (std::holds_alternative<InProgress>(entry.second.current)) return true;
  }
  return false;
}

bool BackfillState::IsCompletelyFinished() const {
  for (const auto& entry : vnodes_) {
    if (!std::holds_alternative<Completed>(entry.second.current)) return false;
  }
  return true;
}

uint64_t BackfillState::total_row_count() const {
  uint64_t total = 0;
  for (const auto& entry : vnodes_) {
    uint64_t count = 0;
    if (const auto* p = std::get_if<InProgress>(&entry.second.current)) {
      count = p->row_count;
    } else if (const auto* c = std::get_if<Completed>(&entry.second.current)) {
      count = c->row_count;
    }
    total = SaturatingAdd(total, count);
  }
  return total;
}

std::vector<VirtualNode> BackfillState::ChangedVnodes() const {
  std::vector<VirtualNode> out;
  for (VirtualNode vnode : touched_) {
    const PerVnode& state = vnodes_.at(vnode);
    if (std::holds_alternative<NotStarted>(state.current)) continue;
    if (!ProgressEquals(state.current, state.committed)) out.push_back(vnode);
  }
  return out;
}

std::vector<ProgressWrite> BackfillState::PendingWrites() const {
  std::vector<ProgressWrite> writes;
  for (VirtualNode vnode : ChangedVnodes()) {
    const PerVnode& state = vnodes_.at(vnode);
    ProgressWrite write;
    write.vnode = vnode;
    if (!std::holds_alternative<NotStarted>(state.committed)) {
      write.old_value = EncodeProgressValue(state.committed);
    }
    write.new_value = EncodeProgressValue(state.current);
    writes.push_back(std::move(write));
  }
  return writes;
}

void BackfillState::MarkCommitted(VirtualNode vnode) {
  auto it = vnodes_.find(vnode);
  if (it != vnodes_.end()) {
    it->second.committed = it->second.current;
    touched_.erase(vnode);
  }
}

Row EncodeProgressValue(const VnodeProgress& progress) {
  assert(!std::holds_alternative<NotStarted>(progress));
  const bool finished = std::holds_alternative<Completed>(progress);
  const Row& pos = finished ? std::get<Completed>(progress).current_pos
                            : std::get<InProgress>(progress).current_pos;
  const uint64_t count = finished ? std::get<Completed>(progress).row_count
                                  : std::get<InProgress>(progress).row_count;
  assert(count <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  Row value = pos;
  value.push_back(finished);
  value.push_back(static_cast<int64_t>(count));
  return value;
}

absl::StatusOr<VnodeProgress> DecodeProgressValue(
    VirtualNode vnode, RowView value, absl::Span<const DataType> pk_types) {
  auto corrupt = [&](auto&&... what) {
    return absl::DataLossError(
        absl::StrCat("corrupt backfill progress of vnode ", vnode, ": ",
                     what..., "; value ", RowDebugString(value)));
  };
  if (value.size() != pk_types.size() + 2) {
    return corrupt("expected ", pk_types.size() + 2, " columns (",
                   pk_types.size(), " pk + finished + row_count), got ",
                   value.size());
  }
  const Datum& count_datum = value[value.size() - 1];
  const Datum& finished_datum = value[value.size() - 2];
  const auto* count = std::get_if<int64_t>(&count_datum);
  if (count == nullptr) {
    return corrupt(IsNull(count_datum) ? "row_count is NULL"
                                       : "row_count is not an INT64");
  }
  if (*count < 0) return corrupt("negative row_count ", *count);
  const auto* finished = std::get_if<bool>(&finished_datum);
  if (finished == nullptr) {
    return corrupt(IsNull(finished_datum)
                       ? "backfill_finished is NULL"
                       : "backfill_finished is not a BOOLEAN");
  }
  Row pos(value.begin(), value.end() - 2);
  for (size_t i = 0; i < pos.size(); ++i) {
    if (!DatumMatchesType(pos[i], pk_types[i])) {
      return corrupt("pk column ", i, " is not a ", DataTypeName(pk_types[i]));
    }
  }
  const uint64_t row_count = static_cast<uint64_t>(*count);
  if (*finished) return Completed{std::move(pos), row_count};
  return InProgress{std::move(pos), row_count};
}

}  // namespace backfill
