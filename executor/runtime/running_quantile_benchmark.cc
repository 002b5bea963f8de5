// The cost of reporting a latency series' p50 and p99 after every value, as
// the barrier coordinator does at every barrier: sorting a copy of the
// series per report against two RunningQuantiles. The argument is the
// series' length (barriers in a job: 60,000 is ten minutes at 10 ms; the
// sorting one stops at 20,000, where one pass already takes about 20 s).
//
//   bazel run -c opt //executor/runtime:running_quantile_benchmark
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "executor/runtime/running_quantile.h"

namespace backfill {
namespace {

std::vector<double> Latencies(int64_t n) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ms(1.0, 0.8);
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(ms(rng));
  return values;
}

// The whole series, reported after every value; time per value.
void BM_SortACopyPerReport(benchmark::State& state) {
  const std::vector<double> values = Latencies(state.range(0));
  for (auto _ : state) {
    std::vector<double> series;
    for (double v : values) {
      series.push_back(v);
      benchmark::DoNotOptimize(Percentile(series, 0.5));
      benchmark::DoNotOptimize(Percentile(series, 0.99));
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SortACopyPerReport)->Arg(1000)->Arg(10000)->Arg(20000);

void BM_RunningQuantiles(benchmark::State& state) {
  const std::vector<double> values = Latencies(state.range(0));
  for (auto _ : state) {
    RunningQuantile p50(0.5), p99(0.99);
    for (double v : values) {
      p50.Add(v);
      p99.Add(v);
      benchmark::DoNotOptimize(p50.Get());
      benchmark::DoNotOptimize(p99.Get());
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RunningQuantiles)->Arg(1000)->Arg(10000)->Arg(20000)->Arg(60000);

}  // namespace
}  // namespace backfill
