// Divergence: one violation found by the simulation's oracle, with what is
// needed to understand and reproduce it (seed, step, vnode, key, expected and
// actual rows). testonly.
//
//   Divergence d{.step = "step 812, actor 2 emitted barrier {curr 9, prev 8}",
//                .what = "CONTRACT §5 invariant", .vnode = 17, .key = "(5)",
//                .expected = "(5, 'a')", .actual = "absent"};
//   std::cerr << d.ToString();
#ifndef TESTS_SIMULATION_DIVERGENCE_H_
#define TESTS_SIMULATION_DIVERGENCE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "serde/vnode.h"

namespace backfill {
namespace simulation {

struct Divergence {
  // Where: the simulation step and event (filled in by the simulation).
  std::string step = {};
  // Which check failed, e.g. "CONTRACT §5 invariant", "duplicate insert".
  std::string what = {};
  // The vnode and the pk of the first differing row, when there is one.
  std::optional<VirtualNode> vnode = std::nullopt;
  std::string key = {};
  // The row the oracle expects ("absent" if none) and the one the view has.
  std::string expected = {};
  std::string actual = {};
  // Anything else that helps (the vnode's progress, the error, ...).
  std::string detail = {};

  std::string ToString() const {
    std::string out = absl::StrCat(what, " at ", step);
    if (vnode.has_value()) absl::StrAppend(&out, "\n  vnode:    ", *vnode);
    if (!key.empty()) absl::StrAppend(&out, "\n  key:      ", key);
    if (!expected.empty() || !actual.empty()) {
      absl::StrAppend(&out, "\n  expected: ", expected,
                      "\n  actual:   ", actual);
    }
    if (!detail.empty()) absl::StrAppend(&out, "\n  detail:   ", detail);
    return out;
  }
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_DIVERGENCE_H_
