#include "tests/simulation/invariant_oracle.h"

#include <functional>
#include <map>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

namespace backfill {
namespace simulation {
namespace {

// Expected S3 rows by vnode and pk bytes.
struct Expected {
  Row s3;
  std::string encoded;
};
using ExpectedVnodes = std::map<VirtualNode, std::map<std::string, Expected>>;

// Compares per vnode; `describe` adds context for a vnode.
std::optional<Divergence> Compare(
    const ExpectedVnodes& expected, const ViewModel::Vnodes& view,
    const std::function<bool(VirtualNode)>& in_scope,
    const std::function<std::string(VirtualNode)>& describe,
    const SimTable& table) {
  static const std::map<std::string, Expected> kNoExpected;
  static const ViewModel::VnodeRows kNoRows;
  // Every vnode that has expected or actual rows.
  std::map<VirtualNode, bool> vnodes;
  for (const auto& [vnode, rows] : expected) vnodes[vnode] = true;
  for (const auto& [vnode, rows] : view) {
    if (in_scope(vnode)) vnodes[vnode] = true;
  }
  for (const auto& [vnode, unused] : vnodes) {
    auto e = expected.find(vnode);
    auto v = view.find(vnode);
    const auto& want = e == expected.end() ? kNoExpected : e->second;
    const auto& have = v == view.end() ? kNoRows : v->second;
    auto wi = want.begin();
    auto hi = have.begin();
    while (wi != want.end() || hi != have.end()) {
      Divergence d;
      d.what = "CONTRACT §5 invariant";
      d.vnode = vnode;
      d.detail = describe(vnode);
      if (hi == have.end() || (wi != want.end() && wi->first < hi->first)) {
        d.key = RowDebugString(table.PkOfS3(wi->second.s3));
        d.expected = RowDebugString(wi->second.s3);
        d.actual = "absent";
        return d;
      }
      if (wi == want.end() || hi->first < wi->first) {
        d.key = RowDebugString(table.PkOfS3(hi->second.s3));
        d.expected = "absent";
        d.actual = RowDebugString(hi->second.s3);
        return d;
      }
      if (wi->second.encoded != hi->second.encoded) {
        d.key = RowDebugString(table.PkOfS3(wi->second.s3));
        d.expected = RowDebugString(wi->second.s3);
        d.actual = RowDebugString(hi->second.s3);
        return d;
      }
      ++wi;
      ++hi;
    }
  }
  return std::nullopt;
}

void AddExpected(const SimTable& table, const std::string& pk_bytes,
                 const ModelRow& row, ExpectedVnodes* expected) {
  Row s3 = table.S1ToS3(row.s1);
  std::string encoded = table.EncodeS3(s3);
  (*expected)[row.vnode].emplace(pk_bytes,
                                 Expected{std::move(s3), std::move(encoded)});
}

}  // namespace

std::optional<Divergence> CheckActorInvariant(const SimTable& table,
                                              const RowModel& upstream,
                                              const ViewModel::Vnodes& view,
                                              const VnodeBitmap& owned,
                                              const BackfillState& state) {
  ExpectedVnodes expected;
  for (const auto& [pk_bytes, row] : upstream) {
    if (!owned.Test(row.vnode)) continue;
    const VnodeProgress* progress = state.Get(row.vnode);
    if (progress == nullptr) {
      Divergence d;
      d.what = "an owned vnode is missing from the backfill state";
      d.vnode = row.vnode;
      return d;
    }
    bool visible = false;
    if (std::holds_alternative<Completed>(*progress)) {
      visible = true;
    } else if (const auto* in_progress = std::get_if<InProgress>(progress)) {
      visible =
          table.ComparePks(table.PkOfS1(row.s1), in_progress->current_pos) <= 0;
    }
    if (visible) AddExpected(table, pk_bytes, row, &expected);
  }
  return Compare(
      expected, view, [&owned](VirtualNode v) { return owned.Test(v); },
      [&state](VirtualNode v) {
        const VnodeProgress* progress = state.Get(v);
        return absl::StrCat("vnode progress ",
                            progress == nullptr
                                ? std::string("(not owned)")
                                : ProgressDebugString(*progress));
      },
      table);
}

std::optional<Divergence> CheckWholeView(const SimTable& table,
                                         const RowModel& upstream,
                                         const ViewModel::Vnodes& view) {
  ExpectedVnodes expected;
  for (const auto& [pk_bytes, row] : upstream) {
    AddExpected(table, pk_bytes, row, &expected);
  }
  return Compare(
      expected, view, [](VirtualNode) { return true; },
      [](VirtualNode) { return std::string("every actor finished"); }, table);
}

}  // namespace simulation
}  // namespace backfill
