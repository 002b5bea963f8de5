#include "tools/storage_fault_spec.h"

#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace backfill {
namespace {

absl::StatusOr<StorageFaultSpec> ParseOne(absl::string_view text) {
  StorageFaultSpec spec;
  spec.text = std::string(text);
  bool has_op = false, has_count = false, persistent = false;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const absl::string_view key = item.substr(0, eq);
    const absl::string_view value = eq == absl::string_view::npos
                                        ? absl::string_view()
                                        : item.substr(eq + 1);
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(
          "storage fault spec \"", text, "\": ", key, "=", value, " ", why));
    };
    if (key == "persistent" && eq == absl::string_view::npos) {
      persistent = true;
      continue;
    }
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "storage fault spec \"", text, "\": \"", item,
          "\" is not key=value (keys: op, file, after, count, persistent, "
          "probability, seed)"));
    }
    if (key == "op") {
      has_op = true;
      if (value == "read") {
        spec.operation = FaultInjector::Operation::kRead;
      } else if (value == "write") {
        spec.operation = FaultInjector::Operation::kWrite;
      } else if (value == "sync") {
        spec.operation = FaultInjector::Operation::kSync;
      } else if (value == "full_disk") {
        spec.operation = FaultInjector::Operation::kWrite;
        spec.no_space = true;
      } else {
        return bad("is not read, write, sync or full_disk");
      }
    } else if (key == "file") {
      spec.file = std::string(value);
    } else if (key == "after") {
      if (!absl::SimpleAtoi(value, &spec.after)) {
        return bad("is not a non-negative integer");
      }
    } else if (key == "count") {
      uint64_t count = 0;
      if (!absl::SimpleAtoi(value, &count) || count == 0) {
        return bad("is not a positive integer");
      }
      spec.count = count;
      has_count = true;
    } else if (key == "probability") {
      double p = 0;
      if (!absl::SimpleAtod(value, &p) || !std::isfinite(p) || p <= 0 ||
          p > 1) {
        return bad("is not in (0, 1]");
      }
      spec.probability = p;
    } else if (key == "seed") {
      if (!absl::SimpleAtoi(value, &spec.seed)) {
        return bad("is not a non-negative integer");
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "storage fault spec \"", text, "\": unknown key \"", key,
          "\" (keys: op, file, after, count, persistent, probability, seed)"));
    }
  }
  if (!has_op) {
    return absl::InvalidArgumentError(
        absl::StrCat("storage fault spec \"", text,
                     "\" has no op= (read, write, sync or full_disk)"));
  }
  if (persistent && has_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("storage fault spec \"", text,
                     "\": count and persistent exclude each other"));
  }
  if (persistent) spec.count.reset();
  return spec;
}

}  // namespace

absl::string_view FaultOperationName(FaultInjector::Operation operation) {
  switch (operation) {
    case FaultInjector::Operation::kRead:
      return "read";
    case FaultInjector::Operation::kWrite:
      return "write";
    case FaultInjector::Operation::kSync:
      return "sync";
  }
  return "?";
}

absl::StatusOr<std::vector<StorageFaultSpec>> ParseStorageFaultSpecs(
    absl::string_view text) {
  std::vector<StorageFaultSpec> specs;
  for (absl::string_view part : absl::StrSplit(text, ';')) {
    if (absl::StripAsciiWhitespace(part).empty()) continue;
    absl::StatusOr<StorageFaultSpec> spec =
        ParseOne(absl::StripAsciiWhitespace(part));
    if (!spec.ok()) return spec.status();
    specs.push_back(*std::move(spec));
  }
  if (specs.empty()) {
    return absl::InvalidArgumentError(
        "storage fault spec is empty (e.g. op=write,after=100,count=2)");
  }
  return specs;
}

SpecFaultInjector::SpecFaultInjector(std::vector<StorageFaultSpec> specs) {
  for (StorageFaultSpec& spec : specs) {
    State state;
    state.random.seed(spec.seed);
    state.spec = std::move(spec);
    states_.push_back(std::move(state));
  }
}

absl::Status SpecFaultInjector::Check(Operation operation,
                                      absl::string_view file_name) {
  MutexLock lock(&mu_);
  if (!armed_) return absl::OkStatus();
  for (State& state : states_) {
    const StorageFaultSpec& spec = state.spec;
    if (spec.operation != operation) continue;
    if (!spec.file.empty() &&
        file_name.find(spec.file) == absl::string_view::npos) {
      continue;
    }
    if (state.seen++ < spec.after) continue;
    if (spec.count.has_value() && state.fired >= *spec.count) continue;
    if (spec.probability < 1) {
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      if (uniform(state.random) >= spec.probability) continue;
    }
    ++state.fired;
    ++injected_;
    const std::string what =
        absl::StrCat("injected storage fault ", state.fired,
                     spec.count.has_value() ? absl::StrCat(" of ", *spec.count)
                                            : std::string(" (persistent)"),
                     " [", spec.text, "]: ", FaultOperationName(operation),
                     " of ", std::string(file_name), " failed");
    if (spec.no_space) {
      return absl::ResourceExhaustedError(
          absl::StrCat("No space left on device: ", what));
    }
    return absl::InternalError(absl::StrCat("Input/output error: ", what));
  }
  return absl::OkStatus();
}

void SpecFaultInjector::SetArmed(bool armed) {
  MutexLock lock(&mu_);
  armed_ = armed;
}

uint64_t SpecFaultInjector::injected() const {
  MutexLock lock(&mu_);
  return injected_;
}

}  // namespace backfill
