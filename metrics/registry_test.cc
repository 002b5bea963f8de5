#include "metrics/registry.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/promtool.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(RegistryTest, EmptyRegistryExportsNothing) {
  Registry registry;
  EXPECT_EQ(registry.ExportText(), "");
}

TEST(RegistryTest, CounterExposition) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * family,
      registry.AddCounterFamily("rows_total", "Rows read.",
                                {"table", "actor"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter counter,
                                family->WithLabels({"1", "2"}));
  counter.Increment();
  counter.Increment(41);
  EXPECT_EQ(counter.value(), 42u);
  EXPECT_EQ(registry.ExportText(),
            "# HELP rows_total Rows read.\n"
            "# TYPE rows_total counter\n"
            "rows_total{table=\"1\",actor=\"2\"} 42\n");
}

TEST(RegistryTest, WithLabelsReturnsTheSameChild) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * family,
      registry.AddCounterFamily("c_total", "C.", {"a"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter first, family->WithLabels({"x"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter second, family->WithLabels({"x"}));
  first.Increment(2);
  second.Increment(3);
  EXPECT_EQ(first.value(), 5u);
  EXPECT_EQ(second.value(), 5u);
}

TEST(RegistryTest, UnlabeledMetrics) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * family,
                                registry.AddGaugeFamily("up", "Up.", {}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge gauge, family->WithLabels({}));
  gauge.Set(1);
  EXPECT_EQ(registry.ExportText(), "# HELP up Up.\n# TYPE up gauge\nup 1\n");
}

TEST(RegistryTest, GaugeValues) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * family,
                                registry.AddGaugeFamily("g", "G.", {"k"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge a, family->WithLabels({"a"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge b, family->WithLabels({"b"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge c, family->WithLabels({"c"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge d, family->WithLabels({"d"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Gauge e, family->WithLabels({"e"}));
  a.Set(2.5);
  a.Add(-3);
  b.Set(std::numeric_limits<double>::infinity());
  c.Set(-std::numeric_limits<double>::infinity());
  d.Set(std::nan(""));
  e.Set(0.1);
  EXPECT_EQ(a.value(), -0.5);
  EXPECT_EQ(registry.ExportText(),
            "# HELP g G.\n# TYPE g gauge\n"
            "g{k=\"a\"} -0.5\n"
            "g{k=\"b\"} +Inf\n"
            "g{k=\"c\"} -Inf\n"
            "g{k=\"d\"} NaN\n"
            "g{k=\"e\"} 0.1\n");
}

TEST(RegistryTest, HistogramExposition) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * family,
      registry.AddHistogramFamily("latency_seconds", "Latency.", {"op"},
                                  {0.5, 1, 2.5}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Histogram histogram,
                                family->WithLabels({"read"}));
  histogram.Observe(0.25);
  histogram.Observe(0.5);  // On a bound: counted in that bucket (le).
  histogram.Observe(2);
  histogram.Observe(100);
  EXPECT_EQ(histogram.count(), 4u);
  EXPECT_EQ(histogram.sum(), 102.75);
  EXPECT_EQ(registry.ExportText(),
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{op=\"read\",le=\"0.5\"} 2\n"
            "latency_seconds_bucket{op=\"read\",le=\"1\"} 2\n"
            "latency_seconds_bucket{op=\"read\",le=\"2.5\"} 3\n"
            "latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
            "latency_seconds_sum{op=\"read\"} 102.75\n"
            "latency_seconds_count{op=\"read\"} 4\n");
}

TEST(RegistryTest, HistogramWithoutLabelsOrBuckets) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * family,
      registry.AddHistogramFamily("h", "H.", {},
                                  {std::numeric_limits<double>::infinity()}));
  EXPECT_TRUE(family->upper_bounds().empty());
  BACKFILL_ASSERT_OK_AND_ASSIGN(Histogram histogram, family->WithLabels({}));
  histogram.Observe(std::nan(""));  // NaN goes to +Inf, as in Go.
  EXPECT_EQ(registry.ExportText(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"+Inf\"} 1\nh_sum NaN\nh_count 1\n");
}

TEST(RegistryTest, DefaultAndExponentialBuckets) {
  EXPECT_THAT(
      DefaultHistogramBuckets(),
      ::testing::ElementsAre(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10));
  EXPECT_THAT(
      ExponentialHistogramBuckets(0.001, 10, 4),
      ::testing::ElementsAre(0.001, ::testing::DoubleEq(0.01),
                             ::testing::DoubleEq(0.1), ::testing::DoubleEq(1)));
}

TEST(RegistryTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * family,
      registry.AddCounterFamily("e_total", "Back\\slash \"quoted\"\nnext",
                                {"v"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter counter,
                                family->WithLabels({"a\\b\"c\nd"}));
  counter.Increment();
  EXPECT_EQ(registry.ExportText(),
            "# HELP e_total Back\\\\slash \"quoted\"\\nnext\n"
            "# TYPE e_total counter\n"
            "e_total{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

// Families by name and children by label values, whatever the creation
// order.
TEST(RegistryTest, DeterministicOrdering) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * zeta,
                                registry.AddGaugeFamily("zeta", "Z.", {"k"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * alpha,
                                registry.AddGaugeFamily("alpha", "A.", {"k"}));
  for (const char* value : {"b", "c", "a"}) {
    ASSERT_THAT(zeta->WithLabels({value}), IsOk());
    ASSERT_THAT(alpha->WithLabels({value}), IsOk());
  }
  const std::string text = registry.ExportText();
  EXPECT_EQ(text,
            "# HELP alpha A.\n# TYPE alpha gauge\n"
            "alpha{k=\"a\"} 0\nalpha{k=\"b\"} 0\nalpha{k=\"c\"} 0\n"
            "# HELP zeta Z.\n# TYPE zeta gauge\n"
            "zeta{k=\"a\"} 0\nzeta{k=\"b\"} 0\nzeta{k=\"c\"} 0\n");
  EXPECT_EQ(registry.ExportText(), text);
}

TEST(RegistryTest, FamilyWithoutChildrenExportsHelpAndType) {
  Registry registry;
  ASSERT_THAT(registry.AddCounterFamily("none_total", "None.", {"a"}), IsOk());
  EXPECT_EQ(registry.ExportText(),
            "# HELP none_total None.\n# TYPE none_total counter\n");
}

TEST(RegistryTest, ValidatesMetricNames) {
  Registry registry;
  for (const char* name : {"", "1abc", "a-b", "a b", "é", "a.b"}) {
    EXPECT_THAT(registry.AddCounterFamily(name, "h", {}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("invalid metric name")))
        << name;
  }
  for (const char* name : {"a", "_a", ":a", "a:b_c9", "A"}) {
    EXPECT_THAT(registry.AddGaugeFamily(name, "h", {}), IsOk()) << name;
  }
  EXPECT_TRUE(IsValidMetricName("job:rate:sum"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_TRUE(IsValidLabelName("_ok"));
}

TEST(RegistryTest, ValidatesLabelNames) {
  Registry registry;
  EXPECT_THAT(
      registry.AddCounterFamily("a_total", "h", {"ok", "bad-name"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad-name")));
  EXPECT_THAT(registry.AddCounterFamily("b_total", "h", {"__name__"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      registry.AddGaugeFamily("c", "h", {"x", "x"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate")));
  EXPECT_THAT(registry.AddHistogramFamily("d", "h", {"le"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("le")));
  EXPECT_THAT(registry.AddGaugeFamily("e", "h", {"le"}), IsOk());
}

TEST(RegistryTest, ValidatesBuckets) {
  Registry registry;
  EXPECT_THAT(registry.AddHistogramFamily("a", "h", {}, {1, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("strictly increasing")));
  EXPECT_THAT(registry.AddHistogramFamily("b", "h", {}, {2, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry.AddHistogramFamily("c", "h", {}, {std::nan(""), 1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry.AddHistogramFamily(
                  "d", "h", {}, {-std::numeric_limits<double>::infinity()}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(registry.AddHistogramFamily("e", "h", {}, {}), IsOk());
  EXPECT_THAT(registry.AddHistogramFamily("f", "h", {}, {-1, 0, 1}), IsOk());
}

TEST(RegistryTest, WrongLabelCountIsInvalidArgument) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * counters,
      registry.AddCounterFamily("c_total", "h", {"table_id", "actor_id"}));
  EXPECT_THAT(counters->WithLabels({"1"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("takes 2 label values (table_id, actor_id), "
                                 "got 1")));
  EXPECT_THAT(counters->WithLabels({"1", "2", "3"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * gauges,
                                registry.AddGaugeFamily("g", "h", {}));
  EXPECT_THAT(gauges->WithLabels({"x"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK_AND_ASSIGN(HistogramFamily * histograms,
                                registry.AddHistogramFamily("h", "h", {"a"}));
  EXPECT_THAT(histograms->WithLabels({}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RegistryTest, IdenticalRedefinitionReturnsTheSameFamily) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * first, registry.AddCounterFamily("c_total", "h", {"a"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * second, registry.AddCounterFamily("c_total", "h", {"a"}));
  EXPECT_EQ(first, second);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * h1, registry.AddHistogramFamily("h", "h", {}, {1, 2}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * h2, registry.AddHistogramFamily("h", "h", {}, {1, 2}));
  EXPECT_EQ(h1, h2);
}

TEST(RegistryTest, ConflictingRedefinitionIsAlreadyExists) {
  Registry registry;
  ASSERT_THAT(registry.AddCounterFamily("m", "h", {"a"}), IsOk());
  EXPECT_THAT(registry.AddGaugeFamily("m", "h", {"a"}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(registry.AddHistogramFamily("m", "h", {"a"}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(registry.AddCounterFamily("m", "h", {"b"}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(registry.AddCounterFamily("m", "other help", {"a"}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_THAT(registry.AddHistogramFamily("h", "h", {}, {1}), IsOk());
  EXPECT_THAT(registry.AddHistogramFamily("h", "h", {}, {2}),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST(RegistryTest, DefaultHandlesAreDetached) {
  Registry registry;
  Counter counter;
  Gauge gauge;
  Histogram histogram;
  counter.Increment();
  gauge.Set(3);
  histogram.Observe(1);
  EXPECT_EQ(registry.ExportText(), "");
}

TEST(HistogramTimerTest, ObservesElapsedTimeOnTheClock) {
  SimulatedClock clock;
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * family,
      registry.AddHistogramFamily("t_seconds", "T.", {}, {1, 10}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Histogram histogram, family->WithLabels({}));
  {
    HistogramTimer timer(histogram, clock);
    clock.AdvanceTime(absl::Seconds(2));
  }
  EXPECT_EQ(histogram.count(), 1u);
  EXPECT_EQ(histogram.sum(), 2.0);
  HistogramTimer timer(histogram, clock);
  clock.AdvanceTime(absl::Milliseconds(500));
  EXPECT_EQ(timer.Stop(), absl::Milliseconds(500));
  clock.AdvanceTime(absl::Seconds(1));
  EXPECT_EQ(timer.Stop(), absl::Milliseconds(500));  // Observed once.
  EXPECT_EQ(histogram.count(), 2u);
  EXPECT_EQ(histogram.sum(), 2.5);
}

// Threads updating shared handles and creating children while another
// exports: totals are exact.
TEST(RegistryConcurrentTest, ConcurrentUpdatesAndExports) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * counters,
      registry.AddCounterFamily("c_total", "C.", {"t"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(GaugeFamily * gauges,
                                registry.AddGaugeFamily("g", "G.", {"t"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * histograms,
      registry.AddHistogramFamily("h", "H.", {"t"}, {1, 2}));
  constexpr int kNumThreads = 4;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kNumThreads; ++i) {
    threads.emplace_back([&, i] {
      const std::string own = std::to_string(i);
      Counter shared = *counters->WithLabels({"shared"});
      Counter mine = *counters->WithLabels({own});
      Gauge gauge = *gauges->WithLabels({"shared"});
      Histogram histogram = *histograms->WithLabels({"shared"});
      for (int j = 0; j < kIterations; ++j) {
        shared.Increment();
        mine.Increment(2);
        gauge.Add(1);
        histogram.Observe(j % 3);
      }
    });
  }
  threads.emplace_back([&] {
    for (int j = 0; j < 50; ++j) EXPECT_FALSE(registry.ExportText().empty());
  });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters->WithLabels({"shared"})->value(),
            uint64_t{kNumThreads} * kIterations);
  EXPECT_EQ(counters->WithLabels({"0"})->value(), uint64_t{2} * kIterations);
  EXPECT_EQ(gauges->WithLabels({"shared"})->value(),
            double{kNumThreads} * kIterations);
  EXPECT_EQ(histograms->WithLabels({"shared"})->count(),
            uint64_t{kNumThreads} * kIterations);
}

// Prometheus's own linter accepts the exposition of every metric type,
// escaped labels and help included.
TEST(RegistryPromtoolTest, PromtoolAcceptsTheExposition) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * counters,
      registry.AddCounterFamily("backfill_rows_read_total",
                                "Rows read \\ with \"quotes\"\nand lines.",
                                {"table_id", "actor_id"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      GaugeFamily * gauges,
      registry.AddGaugeFamily("backfill_rate_limit_rows_per_second",
                              "Rate limit.", {"table_id"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * histograms,
      registry.AddHistogramFamily("backfill_barrier_latency_seconds",
                                  "Barrier latency.", {"actor_id"}));
  ASSERT_THAT(registry.AddGaugeFamily("backfill_unused", "No children.", {}),
              IsOk());
  counters->WithLabels({"1", "a\\b\"c\nd"})->Increment(7);
  counters->WithLabels({"2", "3"})->Increment();
  gauges->WithLabels({"1"})->Set(std::numeric_limits<double>::infinity());
  gauges->WithLabels({"2"})->Set(0.125);
  Histogram histogram = *histograms->WithLabels({"3"});
  for (double value : {0.001, 0.3, 7.0, 99.0}) histogram.Observe(value);
  ASSERT_THAT(histograms->WithLabels({"4"}), IsOk());

  const std::string text = registry.ExportText();
  absl::StatusOr<PromtoolResult> result = RunPromtoolCheckMetrics(text);
  ASSERT_THAT(result, IsOk())
      << "promtool is required by this test (Debian package `prometheus`)";
  EXPECT_EQ(result->exit_code, 0) << result->output << "\n" << text;
  EXPECT_EQ(result->output, "") << text;
}

// The checker itself: promtool rejects what it should, so a passing test
// above means something.
TEST(RegistryPromtoolTest, PromtoolRejectsBadInput) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      PromtoolResult result,
      RunPromtoolCheckMetrics("# TYPE x counter\nx{a=\"unterminated} 1\n"));
  EXPECT_NE(result.exit_code, 0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      PromtoolResult lint,
      RunPromtoolCheckMetrics("# HELP x_count X.\n# TYPE x_count counter\n"
                              "x_count 1\n"));
  EXPECT_NE(lint.exit_code, 0);
  EXPECT_THAT(lint.output, HasSubstr("_total"));
}

}  // namespace
}  // namespace backfill
