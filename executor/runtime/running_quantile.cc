#include "executor/runtime/running_quantile.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace backfill {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index =
      std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  return values[index];
}

RunningQuantile::RunningQuantile(double p) : p_(p) { assert(p >= 0 && p <= 1); }

void RunningQuantile::Add(double value) {
  if (std::isnan(value)) return;
  if (lower_.empty() || value <= lower_.top()) {
    lower_.push(value);
  } else {
    upper_.push(value);
  }
  // The index Percentile reads, computed the same way (so that both agree
  // on every n, rounding included).
  const size_t n = size();
  const size_t index = std::min(n - 1, static_cast<size_t>(p_ * n));
  const size_t want_lower = index + 1;
  // One value added, so the lower heap is at most one off its size. (The
  // loops also restore it should that ever not hold.)
  while (lower_.size() > want_lower) {
    upper_.push(lower_.top());
    lower_.pop();
  }
  while (lower_.size() < want_lower && !upper_.empty()) {
    lower_.push(upper_.top());
    upper_.pop();
  }
}

}  // namespace backfill
