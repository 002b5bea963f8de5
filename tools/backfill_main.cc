// bazel run -c opt //tools:backfill -- [--scenario=FILE] [--data_dir=DIR]
//     [--parallelism=N] [--rate_limit=R] [--dump_dir=DIR] [--metrics_port=P]
//     [--json] [--inject_storage_faults=SPEC]
//
// Runs a real backfill over RocksDB under a live upstream workload: creates
// (or resumes) the scenario's table, keeps writing to it, creates the view
// with N backfill actors, shows progress, keeps the upstream running a few
// checkpoints after the backfill finished, stops it and checks that the view
// equals the table. The last line of standard output is one JSON object.
// Exit codes (tools/exit_codes.h): 0 consistent, 1 inconsistent, 2 error.
// Storage errors are recovered from (the store is reopened, the job resumes
// from the last checkpoint; each recovery is logged on standard error); a
// corrupt data directory is a DATA_LOSS error (the job does not run on it).
// --inject_storage_faults (test only) fails the store's file operations as
// tools/storage_fault_spec.h describes.
// A thin main: everything it does is a tested library.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/streaming_job.h"
#include "metrics/http_exporter.h"
#include "metrics/registry.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "tools/copy_format.h"
#include "tools/exit_codes.h"
#include "tools/job_options.h"
#include "tools/progress_display.h"
#include "tools/scenario.h"
#include "tools/storage_fault_spec.h"

namespace backfill {
namespace {

struct Flags {
  std::string scenario;
  std::string data_dir;
  std::optional<uint32_t> parallelism;
  std::optional<uint64_t> rate_limit;
  std::string dump_dir;
  std::optional<int> metrics_port;
  bool json = false;
  // Test only: --inject_storage_faults.
  std::vector<StorageFaultSpec> storage_faults;
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      flags.json = true;
      continue;
    }
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown argument \"", arg, "\" (expected --name=value)"));
    }
    const std::string name = arg.substr(2, eq - 2);
    const std::string value = arg.substr(eq + 1);
    uint64_t number = 0;
    auto need_number = [&]() -> absl::Status {
      if (!absl::SimpleAtoi(value, &number)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, "=", value, " is not a non-negative integer"));
      }
      return absl::OkStatus();
    };
    if (name == "scenario") {
      flags.scenario = value;
    } else if (name == "data_dir") {
      flags.data_dir = value;
    } else if (name == "dump_dir") {
      flags.dump_dir = value;
    } else if (name == "parallelism") {
      if (absl::Status s = need_number(); !s.ok()) return s;
      if (number == 0 || number > 32768) {
        return absl::InvalidArgumentError("--parallelism must be in [1, 32768]");
      }
      flags.parallelism = static_cast<uint32_t>(number);
    } else if (name == "rate_limit") {
      if (absl::Status s = need_number(); !s.ok()) return s;
      flags.rate_limit = number;
    } else if (name == "inject_storage_faults") {
      absl::StatusOr<std::vector<StorageFaultSpec>> specs =
          ParseStorageFaultSpecs(value);
      if (!specs.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--inject_storage_faults: ", specs.status().message()));
      }
      flags.storage_faults = *std::move(specs);
    } else if (name == "metrics_port") {
      if (absl::Status s = need_number(); !s.ok()) return s;
      if (number > 65535) return absl::InvalidArgumentError("--metrics_port must be <= 65535");
      flags.metrics_port = static_cast<int>(number);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
  }
  return flags;
}

// "DATA_LOSS: open /dir: ...": the code says what kind of failure it is.
std::string ErrorText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                      status.message());
}

int Fail(const Flags* flags, absl::string_view scenario,
         const absl::Status& status, uint32_t recoveries = 0) {
  std::cerr << "backfill: error: " << ErrorText(status) << "\n";
  if (status.code() == absl::StatusCode::kDataLoss) {
    std::cerr << "backfill: the data directory is corrupt (data loss); the "
                 "job did not run on it: restore it from a copy, or remove it "
                 "to start the job over\n";
  }
  RunSummary summary;
  summary.scenario = std::string(scenario);
  summary.recoveries = recoveries;
  summary.error = ErrorText(status);
  if (flags == nullptr || !flags->json) std::cout << FormatSummaryTable(summary);
  std::cout << RunSummaryJson(summary) << std::endl;
  return static_cast<int>(ExitCode::kError);
}

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) return Fail(nullptr, "", flags.status());
  // Validate everything before touching the data directory.
  absl::StatusOr<tools::Scenario> scenario =
      flags->scenario.empty() ? absl::StatusOr<tools::Scenario>(DefaultScenario())
                              : LoadScenarioFile(flags->scenario);
  if (!scenario.ok()) return Fail(&*flags, flags->scenario, scenario.status());
  if (flags->parallelism.has_value()) {
    scenario->mutable_backfill()->set_parallelism(*flags->parallelism);
  }
  if (flags->rate_limit.has_value()) {
    scenario->mutable_backfill()->set_rate_limit(*flags->rate_limit);
  }
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(*scenario);
  if (!spec.ok()) return Fail(&*flags, flags->scenario, spec.status());
  const std::string name = spec->name.empty() ? "default" : spec->name;

  std::string data_dir = flags->data_dir;
  if (data_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "backfill-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Fail(&*flags, name, absl::InternalError("cannot create a temporary data directory"));
    }
    data_dir = pattern;
  }
  RocksDbStateStoreOptions store_options;
  store_options.path = data_dir;
  // A corrupt table file is DataLoss before the job writes anything.
  store_options.verify_checksums_on_open = true;
  std::shared_ptr<SpecFaultInjector> fault_injector;
  if (!flags->storage_faults.empty()) {
    fault_injector = std::make_shared<SpecFaultInjector>(flags->storage_faults);
    fault_injector->SetArmed(false);  // Counting starts with the job.
    store_options.fault_injector = fault_injector;
  }
  absl::StatusOr<std::unique_ptr<RocksDbStateStore>> store =
      RocksDbStateStore::Open(store_options);
  if (!store.ok()) return Fail(&*flags, name, store.status());
  if (fault_injector != nullptr) fault_injector->SetArmed(true);

  Registry registry;
  std::unique_ptr<HttpExporter> exporter;
  if (flags->metrics_port.has_value()) {
    HttpExporter::Options exporter_options;
    exporter_options.port = *flags->metrics_port;
    absl::StatusOr<std::unique_ptr<HttpExporter>> started =
        HttpExporter::Start(registry, exporter_options);
    if (!started.ok()) return Fail(&*flags, name, started.status());
    exporter = std::move(*started);
    if (!flags->json) {
      std::cout << "metrics: http://127.0.0.1:" << exporter->port() << "/metrics\n";
    }
  }
  StreamingJobOptions options = JobOptionsFromScenario(*spec);
  if (!flags->json) {
    std::cout << "scenario " << name << ": " << spec->initial_rows
              << " initial rows, parallelism " << options.parallelism
              << ", data directory " << data_dir << "\n";
  }
  ProgressDisplayOptions display_options;
  display_options.mode = DetectDisplayMode(STDOUT_FILENO);
  display_options.plain_interval_seconds = 1;
  ProgressDisplay display(std::cout, display_options);
  uint64_t last_rows = 0, last_ops = 0;
  double last_seconds = 0, rows_per_second = 0, ops_per_second = 0;
  auto observer = [&](const JobProgress& progress) {
    if (flags->json) return;
    JobProgressSample sample;
    sample.seconds = progress.seconds;
    sample.vnodes_completed = progress.vnodes_completed;
    sample.vnodes_total = progress.vnodes_total;
    sample.snapshot_rows = progress.snapshot_rows;
    sample.estimated_total_rows = progress.estimated_total_rows;
    // Rates over windows of at least half a second, kept between windows.
    const double dt = progress.seconds - last_seconds;
    if (dt > 0.5) {
      rows_per_second = (progress.snapshot_rows - last_rows) / dt;
      ops_per_second = (progress.upstream_ops - last_ops) / dt;
      last_rows = progress.snapshot_rows;
      last_ops = progress.upstream_ops;
      last_seconds = progress.seconds;
    }
    sample.snapshot_rows_per_second = rows_per_second;
    sample.upstream_ops_per_second = ops_per_second;
    sample.upstream_ops = progress.upstream_ops;
    sample.barrier_latency_p50_ms = progress.barrier_latency_p50_ms;
    sample.barrier_latency_p99_ms = progress.barrier_latency_p99_ms;
    sample.epochs = progress.epochs;
    sample.checkpoints = progress.checkpoints;
    display.Update(sample);
  };
  uint32_t recoveries = 0;
  options.on_recovery = [&](const absl::Status& error, uint32_t recovery) {
    recoveries = recovery;
    if (!flags->json) display.Finish();
    std::cerr << "backfill: recovering from the last checkpoint (recovery "
              << recovery << " of at most " << options.max_recoveries
              << ") after: " << ErrorText(error) << std::endl;
  };
  // A store whose write or sync failed refuses checkpoints until reopened
  // (RocksDB's background-error mode): recoveries reopen it.
  options.reopen_store = [&]() -> absl::StatusOr<StateStore*> {
    store->reset();  // Closes the database first: one process, one lock.
    absl::StatusOr<std::unique_ptr<RocksDbStateStore>> reopened =
        RocksDbStateStore::Open(store_options);
    if (!reopened.ok()) return reopened.status();
    *store = *std::move(reopened);
    return static_cast<StateStore*>(store->get());
  };
  absl::StatusOr<JobResult> result =
      RunStreamingJob(**store, options, &registry, observer, Clock::Real());
  if (!flags->json) display.Finish();
  // Faults are for the job; the dumps below read what it verified.
  if (fault_injector != nullptr) fault_injector->SetArmed(false);
  if (!result.ok()) return Fail(&*flags, name, result.status(), recoveries);

  if (!flags->dump_dir.empty()) {
    std::filesystem::create_directories(flags->dump_dir);
    absl::StatusOr<std::vector<Row>> upstream_rows =
        ReadCommittedRows(**store, options.upstream, spec->output_columns);
    std::vector<int> view_columns;
    for (size_t i = 0; i < spec->output_columns.size(); ++i) {
      view_columns.push_back(static_cast<int>(i));
    }
    absl::StatusOr<std::vector<Row>> view_rows =
        ReadCommittedRows(**store, ViewCatalog(options), view_columns);
    if (!upstream_rows.ok()) return Fail(&*flags, name, upstream_rows.status());
    if (!view_rows.ok()) return Fail(&*flags, name, view_rows.status());
    for (const auto& [file, rows] :
         {std::pair{"upstream.tsv", &*upstream_rows}, std::pair{"view.tsv", &*view_rows}}) {
      absl::Status status = WriteCopyDump(
          (std::filesystem::path(flags->dump_dir) / file).string(),
          spec->output_column_names, spec->output_column_types, *rows);
      if (!status.ok()) return Fail(&*flags, name, status);
    }
  }

  RunSummary summary;
  summary.scenario = name;
  summary.consistent = result->consistent;
  summary.upstream_rows = result->upstream_rows;
  summary.view_rows = result->view_rows;
  summary.snapshot_rows = result->snapshot_rows;
  summary.upstream_ops = result->upstream_ops;
  summary.epochs = result->epochs;
  summary.checkpoints = result->checkpoints;
  summary.parallelism = static_cast<int>(result->parallelism);
  summary.resumed = result->resumed;
  summary.recoveries = result->recoveries;
  summary.seconds = result->seconds;
  summary.snapshot_rows_per_second = result->snapshot_rows_per_second;
  summary.barrier_latency_p50_ms = result->barrier_latency_p50_ms;
  summary.barrier_latency_p99_ms = result->barrier_latency_p99_ms;
  if (!result->consistent) {
    std::cerr << "backfill: INCONSISTENT: " << result->mismatch << "\n";
  }
  if (!flags->json) std::cout << FormatSummaryTable(summary);
  std::cout << RunSummaryJson(summary) << std::endl;
  return static_cast<int>(result->consistent ? ExitCode::kConsistent
                                             : ExitCode::kInconsistent);
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
