// Random assignments of a table's vnodes to 1..8 backfill actors, as a
// scheduler might produce them on creation and after every rescale: the even
// contiguous split (VnodeBitmap::EvenSplit), random contiguous ranges, or a
// random scatter. Every actor gets at least one vnode; the bitmaps partition
// the vnodes. testonly.
//
//   std::vector<VnodeBitmap> owned = RandomVnodeAssignment(rng, 256, 8);
#ifndef TESTS_SIMULATION_VNODE_ASSIGNMENT_H_
#define TESTS_SIMULATION_VNODE_ASSIGNMENT_H_

#include <random>
#include <vector>

#include "serde/vnode_bitmap.h"

namespace backfill {
namespace simulation {

// A partition of `vnode_count` vnodes among 1..min(max_actors, vnode_count)
// actors (the count is random too).
std::vector<VnodeBitmap> RandomVnodeAssignment(std::mt19937_64& rng,
                                               int vnode_count, int max_actors);

// True iff both assign the same vnodes to the same actor indices.
bool SameAssignment(const std::vector<VnodeBitmap>& a,
                    const std::vector<VnodeBitmap>& b);

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_VNODE_ASSIGNMENT_H_
