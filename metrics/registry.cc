#include "metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

bool IsNameStart(char c, bool allow_colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (allow_colon && c == ':');
}

bool IsValidName(absl::string_view name, bool allow_colon) {
  if (name.empty() || !IsNameStart(name[0], allow_colon)) return false;
  for (char c : name.substr(1)) {
    if (!IsNameStart(c, allow_colon) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Prometheus floats: shortest round-trip decimal, or +Inf / -Inf / NaN.
void AppendDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out->append(buffer, result.ptr);
  }
}

void AppendEscaped(absl::string_view text, bool escape_quote,
                   std::string* out) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        out->append(escape_quote ? "\\\"" : "\"");
        break;
      default:
        out->push_back(c);
    }
  }
}

// name{labels} value\n, with an optional extra label (le) after `labels`.
void AppendSample(absl::string_view name, const std::string& labels,
                  absl::string_view extra_label, absl::string_view value,
                  std::string* out) {
  absl::StrAppend(out, name);
  if (!labels.empty() || !extra_label.empty()) {
    absl::StrAppend(out, "{", labels,
                    !labels.empty() && !extra_label.empty() ? "," : "",
                    extra_label, "}");
  }
  absl::StrAppend(out, " ", value, "\n");
}

std::string FormatDouble(double value) {
  std::string text;
  AppendDouble(value, &text);
  return text;
}

absl::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      break;
  }
  return "histogram";
}

absl::Status ValidateFamily(absl::string_view name,
                            const std::vector<std::string>& label_names,
                            MetricType type) {
  if (!IsValidMetricName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid metric name (want [a-zA-Z_:][a-zA-Z0-9_:]*): \"", name, "\""));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& label = label_names[i];
    if (!IsValidLabelName(label)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid label name (want [a-zA-Z_][a-zA-Z0-9_]*, not starting "
          "with \"__\") for metric ",
          name, ": \"", label, "\""));
    }
    if (type == MetricType::kHistogram && label == "le") {
      return absl::InvalidArgumentError(absl::StrCat(
          "label name \"le\" is reserved for histogram buckets: ", name));
    }
    if (std::find(label_names.begin(), label_names.begin() + i, label) !=
        label_names.begin() + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          "duplicate label name for metric ", name, ": \"", label, "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status NormalizeBuckets(absl::string_view name,
                              std::vector<double>& upper_bounds) {
  if (!upper_bounds.empty() && std::isinf(upper_bounds.back()) &&
      upper_bounds.back() > 0) {
    upper_bounds.pop_back();
  }
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    if (!std::isfinite(upper_bounds[i]) ||
        (i > 0 && !(upper_bounds[i - 1] < upper_bounds[i]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram buckets must be finite and strictly increasing for "
          "metric ",
          name, ": [", absl::StrJoin(upper_bounds, ", "), "]"));
    }
  }
  return absl::OkStatus();
}

template <typename T>
T* DetachedCell() {
  static T* const cell = new T();
  return cell;
}

metrics_internal::HistogramCell* DetachedHistogramCell() {
  static const std::vector<double>* const no_bounds = new std::vector<double>();
  static metrics_internal::HistogramCell* const cell =
      new metrics_internal::HistogramCell(no_bounds);
  return cell;
}

}  // namespace

bool IsValidMetricName(absl::string_view name) {
  return IsValidName(name, /*allow_colon=*/true);
}

bool IsValidLabelName(absl::string_view name) {
  return IsValidName(name, /*allow_colon=*/false) &&
         !absl::StartsWith(name, "__");
}

namespace metrics_internal {

HistogramCell::HistogramCell(const std::vector<double>* upper_bounds)
    : upper_bounds(upper_bounds),
      bucket_counts(new std::atomic<uint64_t>[upper_bounds->size() + 1]()) {}

Family::Family(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {}

absl::Status Family::CheckLabelValues(
    absl::Span<const absl::string_view> label_values) const {
  if (label_values.size() != label_names_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metric ", name_, " takes ", label_names_.size(), " label values (",
        absl::StrJoin(label_names_, ", "), "), got ", label_values.size()));
  }
  return absl::OkStatus();
}

template <typename Cell, typename Create>
Cell* Family::FindOrCreate(absl::Span<const absl::string_view> label_values,
                           Create create) {
  std::vector<std::string> key(label_values.begin(), label_values.end());
  MutexLock guard(&mu_);
  auto [it, inserted] = children_.try_emplace(std::move(key));
  if (inserted) it->second = create();
  return static_cast<Cell*>(it->second.get());
}

void Family::AppendText(std::string* out) const {
  absl::StrAppend(out, "# HELP ", name_, " ");
  AppendEscaped(help_, /*escape_quote=*/false, out);
  absl::StrAppend(out, "\n# TYPE ", name_, " ", TypeName(type_), "\n");
  MutexLock guard(&mu_);
  std::string labels;
  for (const auto& [label_values, cell] : children_) {
    labels.clear();
    for (size_t i = 0; i < label_values.size(); ++i) {
      if (i > 0) labels.push_back(',');
      labels.append(label_names_[i]).append("=\"");
      AppendEscaped(label_values[i], /*escape_quote=*/true, &labels);
      labels.push_back('"');
    }
    AppendChildText(labels, cell.get(), out);
  }
}

}  // namespace metrics_internal

Counter::Counter() : cell_(DetachedCell<std::atomic<uint64_t>>()) {}
Gauge::Gauge() : cell_(DetachedCell<std::atomic<double>>()) {}
Histogram::Histogram() : cell_(DetachedHistogramCell()) {}

void Histogram::Observe(double value) const {
  const std::vector<double>& bounds = *cell_->upper_bounds;
  // NaN compares false with everything and lands in +Inf, as in Prometheus's
  // Go client.
  const size_t bucket =
      std::isnan(value)
          ? bounds.size()
          : std::lower_bound(bounds.begin(), bounds.end(), value) -
                bounds.begin();
  cell_->bucket_counts[bucket].fetch_add(1, std::memory_order_relaxed);
  cell_->sum.fetch_add(value, std::memory_order_relaxed);
}

uint64_t Histogram::count() const {
  uint64_t count = 0;
  for (size_t i = 0; i <= cell_->upper_bounds->size(); ++i) {
    count += cell_->bucket_counts[i].load(std::memory_order_relaxed);
  }
  return count;
}

absl::Duration HistogramTimer::Stop() {
  if (!stopped_) {
    stopped_ = true;
    elapsed_ = clock_.Now() - start_;
    histogram_.ObserveDuration(elapsed_);
  }
  return elapsed_;
}

absl::StatusOr<Counter> CounterFamily::WithLabels(
    absl::Span<const absl::string_view> label_values) {
  BACKFILL_RETURN_IF_ERROR(CheckLabelValues(label_values));
  return Counter(FindOrCreate<std::atomic<uint64_t>>(
      label_values, [] { return std::make_shared<std::atomic<uint64_t>>(0); }));
}

void CounterFamily::AppendChildText(const std::string& labels, const void* cell,
                                    std::string* out) const {
  const uint64_t value = static_cast<const std::atomic<uint64_t>*>(cell)->load(
      std::memory_order_relaxed);
  AppendSample(name(), labels, "", absl::StrCat(value), out);
}

absl::StatusOr<Gauge> GaugeFamily::WithLabels(
    absl::Span<const absl::string_view> label_values) {
  BACKFILL_RETURN_IF_ERROR(CheckLabelValues(label_values));
  return Gauge(FindOrCreate<std::atomic<double>>(
      label_values, [] { return std::make_shared<std::atomic<double>>(0.0); }));
}

void GaugeFamily::AppendChildText(const std::string& labels, const void* cell,
                                  std::string* out) const {
  const double value = static_cast<const std::atomic<double>*>(cell)->load(
      std::memory_order_relaxed);
  AppendSample(name(), labels, "", FormatDouble(value), out);
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names,
                                 std::vector<double> upper_bounds)
    : Family(std::move(name), std::move(help), MetricType::kHistogram,
             std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {}

absl::StatusOr<Histogram> HistogramFamily::WithLabels(
    absl::Span<const absl::string_view> label_values) {
  BACKFILL_RETURN_IF_ERROR(CheckLabelValues(label_values));
  return Histogram(
      FindOrCreate<metrics_internal::HistogramCell>(label_values, [this] {
        return std::make_shared<metrics_internal::HistogramCell>(
            &upper_bounds_);
      }));
}

// Buckets are cumulative on export and _count is their total, so the +Inf
// bucket always equals _count even while other threads observe.
void HistogramFamily::AppendChildText(const std::string& labels,
                                      const void* cell,
                                      std::string* out) const {
  const auto* histogram =
      static_cast<const metrics_internal::HistogramCell*>(cell);
  const std::string bucket_name = absl::StrCat(name(), "_bucket");
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    cumulative += histogram->bucket_counts[i].load(std::memory_order_relaxed);
    const std::string le = i < upper_bounds_.size()
                               ? FormatDouble(upper_bounds_[i])
                               : std::string("+Inf");
    AppendSample(bucket_name, labels, absl::StrCat("le=\"", le, "\""),
                 absl::StrCat(cumulative), out);
  }
  AppendSample(absl::StrCat(name(), "_sum"), labels, "",
               FormatDouble(histogram->sum.load(std::memory_order_relaxed)),
               out);
  AppendSample(absl::StrCat(name(), "_count"), labels, "",
               absl::StrCat(cumulative), out);
}

std::vector<double> DefaultHistogramBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

std::vector<double> ExponentialHistogramBuckets(double start, double factor,
                                                int count) {
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (int i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

absl::StatusOr<metrics_internal::Family*> Registry::Add(
    std::unique_ptr<metrics_internal::Family> family,
    const std::vector<double>* upper_bounds) {
  MutexLock guard(&mu_);
  auto it = families_.find(family->name());
  if (it == families_.end()) {
    metrics_internal::Family* added = family.get();
    families_.emplace(family->name(), std::move(family));
    return added;
  }
  metrics_internal::Family* existing = it->second.get();
  const bool same_buckets =
      upper_bounds == nullptr ||
      (existing->type() == MetricType::kHistogram &&
       static_cast<HistogramFamily*>(existing)->upper_bounds() ==
           *upper_bounds);
  if (existing->type() != family->type() ||
      existing->help() != family->help() ||
      existing->label_names() != family->label_names() || !same_buckets) {
    return absl::AlreadyExistsError(
        absl::StrCat("metric ", family->name(),
                     " is already registered with a different definition: ",
                     TypeName(existing->type()), " (",
                     absl::StrJoin(existing->label_names(), ", "), ") vs ",
                     TypeName(family->type()), " (",
                     absl::StrJoin(family->label_names(), ", "), ")"));
  }
  return existing;
}

absl::StatusOr<CounterFamily*> Registry::AddCounterFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  BACKFILL_RETURN_IF_ERROR(
      ValidateFamily(name, label_names, MetricType::kCounter));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics_internal::Family * family,
      Add(std::unique_ptr<CounterFamily>(new CounterFamily(
              std::string(name), std::string(help), std::move(label_names))),
          nullptr));
  return static_cast<CounterFamily*>(family);
}

absl::StatusOr<GaugeFamily*> Registry::AddGaugeFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  BACKFILL_RETURN_IF_ERROR(
      ValidateFamily(name, label_names, MetricType::kGauge));
  BACKFILL_ASSIGN_OR_RETURN(
      metrics_internal::Family * family,
      Add(std::unique_ptr<GaugeFamily>(new GaugeFamily(
              std::string(name), std::string(help), std::move(label_names))),
          nullptr));
  return static_cast<GaugeFamily*>(family);
}

absl::StatusOr<HistogramFamily*> Registry::AddHistogramFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names, std::vector<double> upper_bounds) {
  BACKFILL_RETURN_IF_ERROR(
      ValidateFamily(name, label_names, MetricType::kHistogram));
  BACKFILL_RETURN_IF_ERROR(NormalizeBuckets(name, upper_bounds));
  auto family = std::unique_ptr<HistogramFamily>(
      new HistogramFamily(std::string(name), std::string(help),
                          std::move(label_names), std::move(upper_bounds)));
  const std::vector<double>* bounds = &family->upper_bounds();
  BACKFILL_ASSIGN_OR_RETURN(metrics_internal::Family * added,
                            Add(std::move(family), bounds));
  return static_cast<HistogramFamily*>(added);
}

std::string Registry::ExportText() const {
  std::string out;
  MutexLock guard(&mu_);
  for (const auto& [name, family] : families_) family->AppendText(&out);
  return out;
}

}  // namespace backfill
