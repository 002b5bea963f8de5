// Hot-path cost of metric updates: a counter increment and a histogram
// observation through pre-resolved handles, one and two threads sharing the
// same child (the contended case).
//
//   bazel run -c opt //metrics:registry_benchmark
#include "benchmark/benchmark.h"
#include "metrics/registry.h"

namespace backfill {
namespace {

struct Handles {
  Registry registry;
  Counter counter;
  Histogram histogram;
  Gauge gauge;
};

// Shared by all benchmark threads; never destroyed.
Handles& SharedHandles() {
  static Handles* const handles = [] {
    auto* h = new Handles();
    h->counter = *(*h->registry.AddCounterFamily("rows_total", "Rows.",
                                                 {"table_id", "actor_id"}))
                      ->WithLabels({"1", "2"});
    h->histogram = *(*h->registry.AddHistogramFamily("latency_seconds",
                                                     "Latency.", {"table_id"}))
                        ->WithLabels({"1"});
    h->gauge = *(*h->registry.AddGaugeFamily("buffer_rows", "Rows.", {}))
                    ->WithLabels({});
    return h;
  }();
  return *handles;
}

void BM_CounterIncrement(benchmark::State& state) {
  const Counter counter = SharedHandles().counter;
  for (auto _ : state) counter.Increment();
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(2);

void BM_GaugeAdd(benchmark::State& state) {
  const Gauge gauge = SharedHandles().gauge;
  for (auto _ : state) gauge.Add(1);
}
BENCHMARK(BM_GaugeAdd)->Threads(1)->Threads(2);

void BM_HistogramObserve(benchmark::State& state) {
  const Histogram histogram = SharedHandles().histogram;
  double value = 0;
  for (auto _ : state) {
    histogram.Observe(value);
    value = value < 20 ? value + 0.37 : 0;  // Walks across all buckets.
  }
}
BENCHMARK(BM_HistogramObserve)->Threads(1)->Threads(2);

// The cold path, for comparison: resolving a labeled child.
void BM_WithLabelsLookup(benchmark::State& state) {
  Registry registry;
  CounterFamily* family =
      *registry.AddCounterFamily("c_total", "C.", {"table_id", "actor_id"});
  for (auto _ : state) {
    benchmark::DoNotOptimize(family->WithLabels({"1", "2"}));
  }
}
BENCHMARK(BM_WithLabelsLookup);

}  // namespace
}  // namespace backfill
