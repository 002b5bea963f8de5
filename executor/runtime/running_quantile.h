// RunningQuantile: one quantile of a growing series of values, exact, kept up
// to date as values arrive.
//
//   RunningQuantile p99(0.99);
//   for (double ms : latencies) p99.Add(ms);
//   double now = p99.Get();  // == Percentile(latencies, 0.99)
//
// The quantile is the one Percentile below computes by sorting: the value at
// index min(n - 1, floor(p x n)) of the n values in ascending order.
// RunningQuantile's Add is O(log n) and Get O(1), where sorting a copy of the
// series at every query costs O(n log n) per query: quadratic over a job that
// reports its latency quantiles at every barrier. Memory is one double per
// value, as a series kept for sorting would need.
//
// The values below the quantile sit in a max-heap, the others in a min-heap;
// each Add moves at most one value between them to keep the lower heap at
// floor(p x n) + 1 values.
//
// Thread-compatible.
#ifndef EXECUTOR_RUNTIME_RUNNING_QUANTILE_H_
#define EXECUTOR_RUNTIME_RUNNING_QUANTILE_H_

#include <cstddef>
#include <functional>
#include <queue>
#include <vector>

namespace backfill {

// The value at quantile `p` in [0, 1] of `values` (0 if empty): the element
// at index min(n - 1, floor(p x n)) in sorted order. O(n log n): for a
// series queried once.
double Percentile(std::vector<double> values, double p);

class RunningQuantile {
 public:
  // REQUIRES: 0 <= p <= 1.
  explicit RunningQuantile(double p);

  // Adds one value. NaN is ignored (it has no place in the order).
  void Add(double value);

  // The quantile of the values added so far; 0 when there are none.
  double Get() const { return lower_.empty() ? 0 : lower_.top(); }

  // How many values were added (NaN excluded).
  size_t size() const { return lower_.size() + upper_.size(); }

 private:
  double p_;
  // The floor(p x n) + 1 smallest values (max on top), and the rest (min on
  // top).
  std::priority_queue<double> lower_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> upper_;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_RUNNING_QUANTILE_H_
