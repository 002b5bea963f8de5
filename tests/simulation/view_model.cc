#include "tests/simulation/view_model.h"

#include "absl/strings/str_cat.h"

namespace backfill {
namespace simulation {

std::optional<Divergence> ViewModel::Apply(const StreamChunk& chunk,
                                           const VnodeBitmap& owned) {
  if (absl::Status status = chunk.Validate(); !status.ok()) {
    Divergence d;
    d.what = "malformed output chunk";
    d.detail = absl::StrCat(status.ToString(), ": ", chunk.DebugString());
    return d;
  }
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    Row s3 = chunk.RowAt(i);
    const Row pk = table_.PkOfS3(s3);
    const VirtualNode vnode = table_.VnodeOfPk(pk);
    std::string pk_bytes = table_.PkBytes(pk);
    Divergence d;
    d.vnode = vnode;
    d.key = RowDebugString(pk);
    if (!owned.Test(vnode)) {
      d.what = "output row of a vnode the actor does not own";
      d.actual = RowDebugString(s3);
      return d;
    }
    VnodeRows& rows = vnodes_[vnode];
    auto it = rows.find(pk_bytes);
    switch (chunk.op(i)) {
      case Op::kInsert:
      case Op::kUpdateInsert: {
        if (it != rows.end()) {
          d.what = "duplicate: insert of a pk the view already holds";
          d.expected = "absent";
          d.actual = RowDebugString(it->second.s3);
          d.detail = absl::StrCat("inserted ", RowDebugString(s3));
          return d;
        }
        std::string encoded = table_.EncodeS3(s3);
        rows.emplace(std::move(pk_bytes),
                     ViewRow{std::move(s3), std::move(encoded)});
        break;
      }
      case Op::kDelete:
      case Op::kUpdateDelete: {
        if (it == rows.end() || it->second.encoded != table_.EncodeS3(s3)) {
          d.what = "delete of a row the view lacks";
          d.expected = RowDebugString(s3);
          d.actual =
              it == rows.end() ? "absent" : RowDebugString(it->second.s3);
          return d;
        }
        rows.erase(it);
        if (rows.empty()) vnodes_.erase(vnode);
        break;
      }
    }
  }
  return std::nullopt;
}

ViewModel::Vnodes ViewModel::Part(const VnodeBitmap& owned) const {
  Vnodes part;
  if (static_cast<size_t>(owned.Count()) * 4 < vnodes_.size()) {
    for (VirtualNode vnode : owned.set_vnodes()) {
      auto it = vnodes_.find(vnode);
      if (it != vnodes_.end()) part.emplace(vnode, it->second);
    }
  } else {
    for (const auto& [vnode, rows] : vnodes_) {
      if (owned.Test(vnode)) part.emplace(vnode, rows);
    }
  }
  return part;
}

size_t ViewModel::num_rows() const {
  size_t total = 0;
  for (const auto& [vnode, rows] : vnodes_) total += rows.size();
  return total;
}

}  // namespace simulation
}  // namespace backfill
