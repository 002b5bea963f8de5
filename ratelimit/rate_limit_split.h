// SplitJobRateLimit: turns a job-wide rate limit into per-actor limits by
// each actor's share of the vnodes it still has to backfill (CONTRACT §7;
// RisingWave applies the limit per actor, so its job rate grows with
// parallelism; we split it instead).
//
//   std::vector<RateLimit> limits =
//       SplitJobRateLimit(RateLimit::Fixed(1000), {64, 192, 0});
//   // limits == {Fixed(250), Fixed(750), Fixed(1)}
#ifndef RATELIMIT_RATE_LIMIT_SPLIT_H_
#define RATELIMIT_RATE_LIMIT_SPLIT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "ratelimit/rate_limit.h"

namespace backfill {

// Returns one limit per entry of `remaining_vnodes_per_actor` (same order).
//
// * Disabled / Pause: every actor gets the job's limit.
// * Fixed(R): the actors with remaining vnodes ("active" actors) share R in
//   proportion to their remaining vnodes, rounded by the largest-remainder
//   method (floor of each exact share, then the leftover rows/s go one each
//   to the largest fractional parts, ties to the lower index). An active
//   actor whose share rounds to 0 is raised to Fixed(1) (never paused by
//   rounding), the row taken from the largest share that is > 1 (ties to
//   the lower index). Hence:
//     - if R >= number of active actors, the shares sum to exactly R; each
//       differs from its exact proportion by less than 1 row/s unless some
//       share had to be raised to 1;
//     - otherwise every active actor gets Fixed(1) (sum > R: a limit below
//       1 row/s would be Pause).
//   An actor with 0 remaining vnodes takes no part in the split (its share
//   goes to the others) and gets Fixed(1): it reads no snapshot rows, and a
//   stale count never pauses it. If no actor has remaining vnodes, every
//   actor counts as having one (an even split).
// Pure and deterministic.
std::vector<RateLimit> SplitJobRateLimit(
    RateLimit job_limit, absl::Span<const uint32_t> remaining_vnodes_per_actor);

}  // namespace backfill

#endif  // RATELIMIT_RATE_LIMIT_SPLIT_H_
