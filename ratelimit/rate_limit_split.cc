#include "ratelimit/rate_limit_split.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace backfill {

std::vector<RateLimit> SplitJobRateLimit(
    RateLimit job_limit,
    absl::Span<const uint32_t> remaining_vnodes_per_actor) {
  const size_t num_actors = remaining_vnodes_per_actor.size();
  if (!job_limit.is_fixed()) {
    return std::vector<RateLimit>(num_actors, job_limit);
  }
  std::vector<uint64_t> weights(remaining_vnodes_per_actor.begin(),
                                remaining_vnodes_per_actor.end());
  uint64_t total = std::accumulate(weights.begin(), weights.end(), uint64_t{0});
  if (total == 0) {
    std::fill(weights.begin(), weights.end(), 1);
    total = num_actors;
  }
  const uint64_t rate = job_limit.rows_per_second();

  // Largest remainder. rate * weight < 2^64 since both are < 2^32.
  std::vector<uint64_t> shares(num_actors);
  std::vector<uint64_t> remainders(num_actors);
  uint64_t assigned = 0;
  for (size_t i = 0; i < num_actors; ++i) {
    shares[i] = rate * weights[i] / total;
    remainders[i] = rate * weights[i] % total;
    assigned += shares[i];
  }
  std::vector<size_t> order(num_actors);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainders[a] > remainders[b];
  });
  // Fewer than num_actors rows are left over, and only actors with a
  // non-zero remainder (hence weight > 0) receive one.
  for (size_t k = 0; assigned < rate && k < num_actors; ++k) {
    ++shares[order[k]];
    ++assigned;
  }

  // Raise zero shares of active actors to 1, taking from the largest share.
  for (size_t i = 0; i < num_actors; ++i) {
    if (weights[i] == 0 || shares[i] != 0) continue;
    shares[i] = 1;
    size_t largest = num_actors;
    for (size_t j = 0; j < num_actors; ++j) {
      if (shares[j] > 1 &&
          (largest == num_actors || shares[j] > shares[largest])) {
        largest = j;
      }
    }
    if (largest != num_actors) --shares[largest];
  }

  std::vector<RateLimit> limits;
  limits.reserve(num_actors);
  for (size_t i = 0; i < num_actors; ++i) {
    // Inactive actors (weight 0) have share 0 and get Fixed(1).
    limits.push_back(RateLimit::Fixed(
        static_cast<uint32_t>(std::max<uint64_t>(shares[i], 1))));
  }
  return limits;
}

}  // namespace backfill
