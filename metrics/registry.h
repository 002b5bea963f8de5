// Registry: Prometheus-style metrics (counters, gauges, histograms with
// labels) and their exposition in the Prometheus text format 0.0.4.
//
//   Registry registry;
//   BACKFILL_ASSIGN_OR_RETURN(CounterFamily* rows, registry.AddCounterFamily(
//       "rows_read_total", "Rows read.", {"table_id"}));
//   BACKFILL_ASSIGN_OR_RETURN(Counter counter, rows->WithLabels({"42"}));
//   counter.Increment(256);   // hot path: one relaxed atomic add
//   std::string text = registry.ExportText();
//
// Families are created once per name (re-adding an identical definition
// returns the same family, so several actors can build their handles from one
// registry). A labeled child is looked up once with WithLabels(); the returned
// handle is a pointer-sized value whose updates are lock-free atomics. No
// global registry: each owner (a worker, a test) creates its own.
#ifndef METRICS_REGISTRY_H_
#define METRICS_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

// The HTTP Content-Type of ExportText()'s output.
inline constexpr absl::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

namespace metrics_internal {

struct HistogramCell {
  explicit HistogramCell(const std::vector<double>* upper_bounds);
  // The family's finite, strictly increasing bucket bounds (not owned).
  const std::vector<double>* const upper_bounds;
  // Per-bucket (not cumulative) counts; the last one is the +Inf bucket.
  const std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts;
  std::atomic<double> sum{0.0};
};

// What the three family types share: name, help, labels, exposition.
class Family {
 public:
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;
  virtual ~Family() = default;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends "# HELP", "# TYPE" and every child's sample lines, children in
  // the lexicographic order of their label values.
  void AppendText(std::string* out) const;

 protected:
  Family(std::string name, std::string help, MetricType type,
         std::vector<std::string> label_names);
  // InvalidArgument unless there is one value per label name.
  absl::Status CheckLabelValues(
      absl::Span<const absl::string_view> label_values) const;
  // Appends the sample lines of one child; `labels` is the rendered
  // `name="value",...` list (empty without labels).
  virtual void AppendChildText(const std::string& labels, const void* cell,
                               std::string* out) const = 0;
  // Returns the child's cell for `label_values`, creating it with `create`.
  // REQUIRES: CheckLabelValues(label_values) is OK.
  template <typename Cell, typename Create>
  Cell* FindOrCreate(absl::Span<const absl::string_view> label_values,
                     Create create);

 private:
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
  mutable Mutex mu_;
  // Children by label values; the cells never move or die before the family.
  std::map<std::vector<std::string>, std::shared_ptr<void>> children_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace metrics_internal

// A monotonically increasing integer. Copyable handle; valid as long as the
// Registry it came from. A default-constructed Counter writes to a detached
// cell that is never exported (handy for code run without metrics).
// Thread-safe: any number of threads may update one handle or copies of it.
class Counter {
 public:
  Counter();
  // Adds `n`. Lock-free (one relaxed atomic add).
  void Increment(uint64_t n = 1) const {
    cell_->fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t value() const { return cell_->load(std::memory_order_relaxed); }

 private:
  friend class CounterFamily;
  explicit Counter(std::atomic<uint64_t>* cell) : cell_(cell) {}
  std::atomic<uint64_t>* cell_;
};

// A value that goes up and down. Handle semantics as Counter.
class Gauge {
 public:
  Gauge();
  // Lock-free.
  void Set(double value) const {
    cell_->store(value, std::memory_order_relaxed);
  }
  // Adds `delta` (may be negative). Lock-free (a compare-and-swap loop).
  void Add(double delta) const {
    cell_->fetch_add(delta, std::memory_order_relaxed);
  }
  double value() const { return cell_->load(std::memory_order_relaxed); }

 private:
  friend class GaugeFamily;
  explicit Gauge(std::atomic<double>* cell) : cell_(cell) {}
  std::atomic<double>* cell_;
};

// Observations counted into buckets. Handle semantics as Counter.
class Histogram {
 public:
  Histogram();
  // Counts `value` in the first bucket whose upper bound is >= value (the
  // +Inf bucket for NaN and values above every bound) and adds it to the
  // sum. Lock-free: a binary search and two atomic adds.
  void Observe(double value) const;
  // Observes `duration` in seconds.
  void ObserveDuration(absl::Duration duration) const {
    Observe(absl::ToDoubleSeconds(duration));
  }
  // The number of observations and their sum. Not a consistent snapshot
  // while other threads observe.
  uint64_t count() const;
  double sum() const { return cell_->sum.load(std::memory_order_relaxed); }

 private:
  friend class HistogramFamily;
  explicit Histogram(metrics_internal::HistogramCell* cell) : cell_(cell) {}
  metrics_internal::HistogramCell* cell_;
};

// Times a scope on `clock` and observes the elapsed seconds into a histogram
// when destroyed, unless Stop() was called first.
//
//   { HistogramTimer timer(metrics.barrier_latency_seconds, clock); ... }
//
// Not thread-safe (one timer, one thread); different timers on one histogram
// are fine.
class HistogramTimer {
 public:
  // `clock` must outlive the timer.
  HistogramTimer(Histogram histogram, Clock& clock)
      : histogram_(histogram), clock_(clock), start_(clock.Now()) {}
  HistogramTimer(const HistogramTimer&) = delete;
  HistogramTimer& operator=(const HistogramTimer&) = delete;
  ~HistogramTimer() {
    if (!stopped_) Stop();
  }
  // Observes the time since construction and returns it. Only the first
  // call observes; later calls return the first result.
  absl::Duration Stop();

 private:
  const Histogram histogram_;
  Clock& clock_;
  const absl::Time start_;
  bool stopped_ = false;
  absl::Duration elapsed_;
};

// A named counter with label names; children by label values.
class CounterFamily final : public metrics_internal::Family {
 public:
  // The child for `label_values` (one per label name, any bytes), created
  // at zero on first use. Call once and keep the handle.
  // Errors: InvalidArgument if the number of values is wrong.
  // Thread-safe (takes the family's lock).
  absl::StatusOr<Counter> WithLabels(
      absl::Span<const absl::string_view> label_values);

 private:
  friend class Registry;
  CounterFamily(std::string name, std::string help,
                std::vector<std::string> label_names)
      : Family(std::move(name), std::move(help), MetricType::kCounter,
               std::move(label_names)) {}
  void AppendChildText(const std::string& labels, const void* cell,
                       std::string* out) const override;
};

// A named gauge with label names; as CounterFamily.
class GaugeFamily final : public metrics_internal::Family {
 public:
  // As CounterFamily::WithLabels; a new child starts at 0.
  absl::StatusOr<Gauge> WithLabels(
      absl::Span<const absl::string_view> label_values);

 private:
  friend class Registry;
  GaugeFamily(std::string name, std::string help,
              std::vector<std::string> label_names)
      : Family(std::move(name), std::move(help), MetricType::kGauge,
               std::move(label_names)) {}
  void AppendChildText(const std::string& labels, const void* cell,
                       std::string* out) const override;
};

// A named histogram with label names and fixed buckets; as CounterFamily.
class HistogramFamily final : public metrics_internal::Family {
 public:
  // As CounterFamily::WithLabels; a new child starts empty.
  absl::StatusOr<Histogram> WithLabels(
      absl::Span<const absl::string_view> label_values);

  // The finite bucket upper bounds (+Inf is implicit).
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  friend class Registry;
  HistogramFamily(std::string name, std::string help,
                  std::vector<std::string> label_names,
                  std::vector<double> upper_bounds);
  void AppendChildText(const std::string& labels, const void* cell,
                       std::string* out) const override;

  const std::vector<double> upper_bounds_;
};

// Prometheus's default buckets, in seconds: .005 .01 .025 .05 .1 .25 .5 1
// 2.5 5 10.
std::vector<double> DefaultHistogramBuckets();
// `count` buckets start, start·factor, start·factor², ...
// REQUIRES: start > 0, factor > 1, count >= 1.
std::vector<double> ExponentialHistogramBuckets(double start, double factor,
                                                int count);

// Owns metric families and renders them. Thread-safe.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Returns the family `name`, creating it if needed. The returned pointer
  // is valid for the registry's lifetime.
  //   name:        [a-zA-Z_:][a-zA-Z0-9_:]*
  //   help:        any text (escaped on export)
  //   label_names: each [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__",
  //                no duplicates (and not "le" for histograms)
  // Errors: InvalidArgument for a bad name, label name or bucket list;
  // AlreadyExists if `name` exists with a different type, help, label names
  // or buckets (an identical definition returns the existing family).
  absl::StatusOr<CounterFamily*> AddCounterFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names);
  absl::StatusOr<GaugeFamily*> AddGaugeFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names);
  // `upper_bounds`: strictly increasing, no NaN; a trailing +Inf is
  // implied and may be given; may be empty (only the +Inf bucket).
  absl::StatusOr<HistogramFamily*> AddHistogramFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names,
      std::vector<double> upper_bounds = DefaultHistogramBuckets());

  // Every family in the Prometheus text format 0.0.4, families by name,
  // children by label values: deterministic for a given state. Values are
  // read with relaxed atomics while others may update them.
  std::string ExportText() const;

 private:
  absl::StatusOr<metrics_internal::Family*> Add(
      std::unique_ptr<metrics_internal::Family> family,
      const std::vector<double>* upper_bounds);

  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<metrics_internal::Family>, std::less<>>
      families_ ABSL_GUARDED_BY(mu_);
};

// Whether `name` is a valid metric name / label name (see AddCounterFamily).
bool IsValidMetricName(absl::string_view name);
bool IsValidLabelName(absl::string_view name);

}  // namespace backfill

#endif  // METRICS_REGISTRY_H_
