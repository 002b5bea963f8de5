#include "tests/simulation/vnode_assignment.h"

#include <algorithm>

namespace backfill {
namespace simulation {

std::vector<VnodeBitmap> RandomVnodeAssignment(std::mt19937_64& rng,
                                               int vnode_count,
                                               int max_actors) {
  const int limit = std::max(1, std::min(max_actors, vnode_count));
  const int actors = std::uniform_int_distribution<int>(1, limit)(rng);
  const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
  if (kind == 0 || actors == 1) {
    return *VnodeBitmap::EvenSplit(vnode_count, actors);
  }
  std::vector<VnodeBitmap> owned(actors, VnodeBitmap(vnode_count));
  if (kind == 1) {
    // Random contiguous ranges: actors-1 distinct cut points in 1..count-1.
    std::vector<int> cuts;
    for (int v = 1; v < vnode_count; ++v) cuts.push_back(v);
    std::shuffle(cuts.begin(), cuts.end(), rng);
    cuts.resize(actors - 1);
    cuts.push_back(0);
    cuts.push_back(vnode_count);
    std::sort(cuts.begin(), cuts.end());
    for (int a = 0; a < actors; ++a) {
      owned[a] = VnodeBitmap::FromRange(vnode_count, cuts[a], cuts[a + 1]);
    }
    return owned;
  }
  // A random scatter; the first `actors` vnodes of a shuffle seed each actor.
  std::vector<int> order(vnode_count);
  for (int v = 0; v < vnode_count; ++v) order[v] = v;
  std::shuffle(order.begin(), order.end(), rng);
  for (int i = 0; i < vnode_count; ++i) {
    const int actor =
        i < actors ? i : std::uniform_int_distribution<int>(0, actors - 1)(rng);
    owned[actor].Set(static_cast<VirtualNode>(order[i]));
  }
  return owned;
}

bool SameAssignment(const std::vector<VnodeBitmap>& a,
                    const std::vector<VnodeBitmap>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

}  // namespace simulation
}  // namespace backfill
