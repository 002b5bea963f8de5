// bazel run -c opt //tools:backfill -- [--scenario=FILE] [--data_dir=DIR]
//     [--parallelism=N] [--kind=arrangement|no_shuffle|snapshot]
//     [--rate_limit=R|adaptive [--target_barrier_latency_ms=T]]
//     [--dump_dir=DIR] [--metrics_port=P]
//     [--store=rocksdb|shared [--object_store=DIR|s3://BUCKET[/PREFIX]]
//      [--etcd=HOST:PORT,...]]
//     [--json] [--force] [--inject_storage_faults=SPEC]      (--help: all)
//
// Runs a real backfill over RocksDB (or, with --store=shared, over the shared
// store: SST objects in an object store, versions in etcd; without --etcd a
// local 3-member etcd cluster runs for the command's life and is stopped on
// every way out, storage/shared/shared_store_backend.h) under a live upstream
// workload: creates
// (or resumes) the scenario's table, keeps writing to it, creates the view
// with N backfill actors, shows progress, keeps the upstream running a few
// checkpoints after the backfill finished, stops it and checks that the view
// equals the table. The last line of standard output is one JSON object
// (tools/result.proto). Exit codes (tools/exit_codes.h): 0 consistent,
// 1 inconsistent, 2 error, 130 interrupted.
// Storage errors are recovered from (the store is reopened, the job resumes
// from the last checkpoint; each recovery is logged on standard error); a
// corrupt data directory is a DATA_LOSS error (the job does not run on it).
// A fresh data directory whose free space is below the scenario's estimated
// size is refused before anything is written, unless --force. The first
// Ctrl-C stops the job at its next checkpoint and prints how to resume it; a
// second exits at once (resumable too, as after kill -9).
// --inject_storage_faults (test only) fails the store's file operations as
// tools/storage_fault_spec.h describes.
// A thin main: everything it does is a tested library.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "executor/runtime/demo/bulk_load.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/verifier.h"
#include "metrics/http_exporter.h"
#include "metrics/registry.h"
#include "storage/committed_rows.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_store_backend.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_macros.h"
#include "tools/command_flags.h"
#include "tools/disk_space.h"
#include "tools/exit_codes.h"
#include "tools/inspect.h"
#include "tools/interrupt.h"
#include "tools/job_metrics_recorder.h"
#include "tools/live_progress.h"
#include "tools/progress_display.h"
#include "tools/result.pb.h"
#include "tools/run_result.h"
#include "tools/scenario.h"
#include "tools/storage_fault_spec.h"
#include "tools/view_dumps.h"

ABSL_FLAG(std::string, scenario, "",
          "A text-format tools/scenario.proto file (examples in "
          "tools/scenarios/);\nempty: the built-in default scenario.");
ABSL_FLAG(std::string, data_dir, "",
          "The RocksDB data directory (--store=shared: the local SST cache "
          "and, without\n--etcd, the local cluster's data); empty: a fresh "
          "temporary one. Rerunning with\nthe same directory resumes the job "
          "from its last checkpoint.");
ABSL_FLAG(std::optional<uint32_t>, parallelism, std::nullopt,
          "Backfill actors, 1 to 32768; unset: the scenario's (default 2).");
ABSL_FLAG(std::optional<std::string>, kind, std::nullopt,
          "The backfill operator: arrangement, no_shuffle or snapshot; "
          "unset: the\nscenario's backfill.kind (default arrangement).");
ABSL_FLAG(std::optional<std::string>, rate_limit, std::nullopt,
          "Job-wide snapshot rows per second, 0 = no limit, or `adaptive`: "
          "the rate follows\na barrier-latency target (--target_barrier_latency_ms); "
          "unset: the scenario's.");
ABSL_FLAG(std::optional<uint32_t>, target_barrier_latency_ms, std::nullopt,
          "With --rate_limit=adaptive: the barrier latency (ms) the adaptive "
          "rate keeps\nthe backfill under; unset: the scenario's "
          "backfill.adaptive target.");
ABSL_FLAG(std::string, dump_dir, "",
          "If set, writes upstream.tsv and view.tsv there (PostgreSQL COPY "
          "text, sorted).");
ABSL_FLAG(
    std::optional<int>, metrics_port, std::nullopt,
    "If set, serves Prometheus /metrics on 127.0.0.1 at this port "
    "while running\n(0: any free port); its address is printed at start (on "
    "standard error with --json). A port in use is an error.");
ABSL_FLAG(bool, json, false,
          "Print only the one-line JSON result on standard output (no "
          "progress, no table).");
ABSL_FLAG(bool, force, false,
          "Run even if the initial load looks larger than the data "
          "directory's free space.");
ABSL_FLAG(bool, vnodes, false,
          "backfill inspect only: list every vnode's progress, not only the "
          "summary.");
ABSL_FLAG(std::string, store, "rocksdb",
          "The state store: rocksdb (in --data_dir) or shared (SST objects in "
          "--object_store,\nversions in etcd; --data_dir holds the local SST "
          "cache).");
ABSL_FLAG(std::string, object_store, "",
          "With --store=shared: DIR or s3://BUCKET[/PREFIX] (S3: "
          "AWS_ENDPOINT_URL,\nAWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
          "AWS_REGION from the environment);\nempty: DATA_DIR/objects.");
ABSL_FLAG(std::string, etcd, "",
          "With --store=shared: the etcd members, HOST:PORT,...; empty: a "
          "local 3-member\ncluster on free 127.0.0.1 ports for this run only "
          "(stopped at exit; the run\ncannot be resumed).");
ABSL_FLAG(std::string, inject_storage_faults, "",
          "Test only: fail the store's file operations as SPEC[;SPEC...] "
          "says\n(tools/README.md).");

namespace backfill {
namespace {

// What the command accepts where the flags' types accept more (in --help
// and in errors).
constexpr char kParallelismValues[] = "an integer in [1, 32768]";
constexpr uint32_t kMaxParallelism = 32768;
constexpr char kRateLimitValues[] =
    "an integer in [0, 18446744073709551615] (rows/s, 0 = no limit) or "
    "adaptive";
constexpr char kTargetLatencyValues[] =
    "an integer in [1, 4294967295] (ms, with --rate_limit=adaptive)";
constexpr char kKindValues[] = "arrangement, no_shuffle or snapshot";
constexpr char kMetricsPortValues[] =
    "an integer in [0, 65535] (0: any free port)";
constexpr int kMaxPort = 65535;

// The flags after validation.
struct Flags {
  std::string scenario;
  std::string data_dir;
  std::optional<uint32_t> parallelism;
  // --kind.
  std::optional<tools::BackfillKind> kind;
  // --rate_limit=N (rows/s), unset when adaptive.
  std::optional<uint64_t> rate_limit;
  // --rate_limit=adaptive, with --target_barrier_latency_ms if given.
  bool adaptive = false;
  std::optional<uint32_t> target_barrier_latency_ms;
  std::string dump_dir;
  std::optional<int> metrics_port;
  bool json = false;
  bool force = false;
  // Test only: --inject_storage_faults.
  std::vector<StorageFaultSpec> storage_faults;
  // --store=shared, with --object_store and --etcd (empty: local cluster).
  bool shared = false;
  std::string object_store;
  std::vector<std::string> etcd;
};

// --store, --object_store and --etcd into `flags`.
absl::Status ValidateStoreFlags(Flags& flags) {
  const std::string store = absl::GetFlag(FLAGS_store);
  if (store != "rocksdb" && store != "shared") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--store=", store, ": expected rocksdb or shared"));
  }
  flags.shared = store == "shared";
  flags.object_store = absl::GetFlag(FLAGS_object_store);
  const std::string etcd = absl::GetFlag(FLAGS_etcd);
  if (!flags.shared && (!flags.object_store.empty() || !etcd.empty())) {
    return absl::InvalidArgumentError(
        "--object_store and --etcd apply only with --store=shared");
  }
  if (!flags.object_store.empty()) {
    BACKFILL_RETURN_IF_ERROR(
        ParseObjectStoreLocation(flags.object_store).status());
  }
  if (!etcd.empty()) {
    BACKFILL_ASSIGN_OR_RETURN(flags.etcd, ParseEtcdEndpoints(etcd));
  }
  return absl::OkStatus();
}

// --rate_limit (a number or `adaptive`) and --target_barrier_latency_ms
// (only with adaptive, > 0) into `flags`.
absl::Status ValidateRateLimitFlags(Flags& flags) {
  const std::optional<std::string> rate = absl::GetFlag(FLAGS_rate_limit);
  flags.target_barrier_latency_ms =
      absl::GetFlag(FLAGS_target_barrier_latency_ms);
  if (rate.has_value() && *rate == "adaptive") {
    flags.adaptive = true;
  } else if (rate.has_value()) {
    uint64_t rows_per_second = 0;
    if (!absl::SimpleAtoi(*rate, &rows_per_second) ||
        absl::StartsWith(*rate, "+")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--rate_limit=", *rate, ": expected ", kRateLimitValues,
          ", or empty for unset"));
    }
    flags.rate_limit = rows_per_second;
  }
  if (flags.target_barrier_latency_ms.has_value()) {
    if (*flags.target_barrier_latency_ms == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--target_barrier_latency_ms=0: expected ", kTargetLatencyValues,
          ", or empty for unset"));
    }
    if (!flags.adaptive) {
      return absl::InvalidArgumentError(
          "--target_barrier_latency_ms applies only with "
          "--rate_limit=adaptive");
    }
  }
  return absl::OkStatus();
}

// The values the flags' types accept but the command does not: one line
// naming the flag and the accepted values.
absl::StatusOr<Flags> ValidatedFlags() {
  Flags flags;
  flags.scenario = absl::GetFlag(FLAGS_scenario);
  flags.data_dir = absl::GetFlag(FLAGS_data_dir);
  flags.dump_dir = absl::GetFlag(FLAGS_dump_dir);
  flags.json = absl::GetFlag(FLAGS_json);
  flags.force = absl::GetFlag(FLAGS_force);
  flags.parallelism = absl::GetFlag(FLAGS_parallelism);
  if (flags.parallelism.has_value() &&
      (*flags.parallelism == 0 || *flags.parallelism > kMaxParallelism)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--parallelism=", *flags.parallelism, ": expected ",
                     kParallelismValues, ", or empty for unset"));
  }
  if (const std::optional<std::string> kind = absl::GetFlag(FLAGS_kind)) {
    if (*kind == "arrangement") {
      flags.kind = tools::ARRANGEMENT;
    } else if (*kind == "no_shuffle") {
      flags.kind = tools::NO_SHUFFLE;
    } else if (*kind == "snapshot") {
      flags.kind = tools::SNAPSHOT;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--kind=", *kind, ": expected ", kKindValues, ", or empty for unset"));
    }
  }
  BACKFILL_RETURN_IF_ERROR(ValidateRateLimitFlags(flags));
  flags.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  if (flags.metrics_port.has_value() &&
      (*flags.metrics_port < 0 || *flags.metrics_port > kMaxPort)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_port=", *flags.metrics_port, ": expected ",
                     kMetricsPortValues, ", or empty for unset"));
  }
  const std::string faults = absl::GetFlag(FLAGS_inject_storage_faults);
  if (!faults.empty()) {
    absl::StatusOr<std::vector<StorageFaultSpec>> specs =
        ParseStorageFaultSpecs(faults);
    if (!specs.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--inject_storage_faults: ", specs.status().message()));
    }
    flags.storage_faults = *std::move(specs);
  }
  BACKFILL_RETURN_IF_ERROR(ValidateStoreFlags(flags));
  if (flags.shared && !flags.storage_faults.empty()) {
    return absl::InvalidArgumentError(
        "--inject_storage_faults applies only with --store=rocksdb (it fails "
        "RocksDB's file operations)");
  }
  return flags;
}

// "DATA_LOSS: open /dir: ...": the code says what kind of failure it is.
std::string ErrorText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                      status.message());
}

// Prints the result: the summary table unless --json, then the JSON line.
void PrintResult(const Flags& flags, const tools::RunResult& result) {
  if (!flags.json) std::cout << FormatSummaryTable(result);
  std::cout << RunResultJson(result) << std::endl;
}

// The adaptive mode's fields of `state`, if the job is in adaptive mode.
void SetAdaptive(const JobState& state, tools::RunResult* result) {
  if (!state.adaptive()) return;
  result->set_adaptive_target_barrier_latency_ms(
      absl::ToDoubleMilliseconds(state.adaptive_target));
  result->set_adaptive_rows_per_second(state.adaptive_rows_per_second);
}

// How far the job got, as its last barrier reported it: the fields a run
// that ended early (an error, a stop at a checkpoint) can still report.
void SetProgress(const JobProgress& progress, tools::RunResult* result) {
  result->set_snapshot_rows(progress.snapshot_rows);
  result->set_upstream_ops(progress.upstream_ops);
  result->set_epochs(progress.epochs);
  result->set_checkpoints(progress.checkpoints);
  result->set_parallelism(progress.parallelism);
  result->set_seconds(progress.seconds);
  // This run's rows over the backfill's seconds if it finished before the
  // run ended, else over the run's.
  if (progress.backfill_seconds.has_value()) {
    result->set_backfill_seconds(*progress.backfill_seconds);
  }
  const double seconds = progress.backfill_seconds.value_or(progress.seconds);
  if (seconds > 0) {
    result->set_snapshot_rows_per_second(
        static_cast<double>(progress.snapshot_rows_this_run) / seconds);
  }
  result->set_barrier_latency_p50_ms(progress.barrier_latency_p50_ms);
  result->set_barrier_latency_p99_ms(progress.barrier_latency_p99_ms);
  SetAdaptive(progress.job_state, result);
}

// How far the job that failed got: `progress` (null: it never passed a
// barrier); `hint`: what to do about it (lines after the error's, or empty).
struct FailedRun {
  uint32_t recoveries = 0;
  const JobProgress* progress = nullptr;
  std::string hint;
};

int Fail(const Flags& flags, absl::string_view scenario,
         absl::string_view data_dir, const absl::Status& status,
         const FailedRun& run = {}) {
  std::cerr << "backfill: error: " << ErrorText(status) << "\n";
  if (status.code() == absl::StatusCode::kDataLoss) {
    std::cerr << "backfill: the data directory is corrupt (data loss); the "
                 "job did not run on it: restore it from a copy, or remove it "
                 "to start the job over\n";
  }
  std::cerr << run.hint;
  tools::RunResult result;
  result.set_scenario(std::string(scenario));
  result.set_data_dir(std::string(data_dir));
  if (run.progress != nullptr) {
    SetProgress(*run.progress, &result);
  }
  result.set_recoveries(run.recoveries);
  result.set_error(ErrorText(status));
  PrintResult(flags, result);
  return static_cast<int>(ExitCode::kError);
}

// A bad command line: one line on standard error, no summary table, and the
// JSON result (with the error) as the last line of standard output.
int FailCommandLine(const absl::Status& status) {
  std::cerr << "backfill: error: " << ErrorText(status) << "\n";
  tools::RunResult result;
  result.set_error(ErrorText(status));
  std::cout << RunResultJson(result) << std::endl;
  return static_cast<int>(ExitCode::kError);
}

// The command that resumes this job. `object_store`: the shared store's
// location in use (with --store=shared).
std::string ResumeCommand(const Flags& flags, absl::string_view data_dir,
                          absl::string_view object_store) {
  std::string command = absl::StrCat("backfill --data_dir=", data_dir);
  if (!flags.scenario.empty()) {
    absl::StrAppend(&command, " --scenario=", flags.scenario);
  }
  if (flags.shared) {
    absl::StrAppend(&command, " --store=shared --object_store=", object_store,
                    " --etcd=", absl::StrJoin(flags.etcd, ","));
  }
  return command;
}

// Whether a rerun can resume the job: not on the shared store's local etcd
// cluster, whose versions stop with the run.
bool Resumable(const Flags& flags) {
  return !flags.shared || !flags.etcd.empty();
}

constexpr char kNotResumable[] =
    "the run cannot be resumed: its versions were in a local etcd cluster "
    "that stops with it (give --etcd to keep them)";

// "resume with `COMMAND`", or why the job cannot be resumed.
std::string ResumeHint(const Flags& flags, absl::string_view data_dir,
                       absl::string_view object_store) {
  if (!Resumable(flags)) return kNotResumable;
  return absl::StrCat("resume with `",
                      ResumeCommand(flags, data_dir, object_store), "`");
}

// True if `data_dir` holds nothing yet: the job would start with the
// initial load.
bool IsFresh(const std::string& data_dir) {
  std::error_code error;
  if (!std::filesystem::exists(data_dir, error)) return true;
  return std::filesystem::is_directory(data_dir, error) &&
         std::filesystem::is_empty(data_dir, error);
}

// Makes `dir` (the value of --`flag`) and its missing parents; nothing when
// `dir` is empty or exists. Errors name the flag and the directory, with
// the code of the system's error (PermissionDenied, FailedPrecondition for
// a file in the way, ...).
absl::Status CreateDirectories(absl::string_view flag, const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (!error) return absl::OkStatus();
  return absl::Status(absl::ErrnoToStatusCode(error.value()),
                      absl::StrCat("--", flag, "=", dir,
                                   ": cannot create the directory: ",
                                   error.message()));
}

// `--dump_dir`: upstream.tsv and view.tsv (tools/view_dumps.h). Their
// verification pass's verdict must be the job's: the data did not change
// since.
absl::Status WriteDumps(StateStore& store, const StreamingJobOptions& options,
                        const ScenarioSpec& spec, const std::string& dir,
                        const JobResult& job) {
  BACKFILL_ASSIGN_OR_RETURN(ViewVerdict verdict,
                            WriteViewDumps(store, options, spec, dir));
  if (verdict.consistent != job.consistent ||
      verdict.upstream_rows != job.upstream_rows ||
      verdict.view_rows != job.view_rows) {
    return absl::InternalError(absl::StrCat(
        "the dumps' verification (consistent ", verdict.consistent, ", ",
        verdict.upstream_rows, " and ", verdict.view_rows,
        " rows) disagrees with the job's (consistent ", job.consistent, ", ",
        job.upstream_rows, " and ", job.view_rows, " rows)"));
  }
  return absl::OkStatus();
}

// `backfill inspect --data_dir=DIR [--vnodes] [--json]`: the job's state in
// DIR, read-only (tools/inspect.h). Exit 0, or 2 with one error line on
// standard error and, with --json, {"error":"CODE: ..."} as the only line of
// standard output.
int Inspect() {
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const bool json = absl::GetFlag(FLAGS_json);
  const bool vnodes = absl::GetFlag(FLAGS_vnodes);
  absl::StatusOr<JobInspection> job =
      data_dir.empty() ? absl::InvalidArgumentError(
                             "backfill inspect needs --data_dir=DIR (the "
                             "job's data directory)")
                       : absl::StatusOr<JobInspection>(JobInspection{});
  // The run's flags mean nothing here: refuse them rather than ignore them.
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!job.ok()) break;
    if (!absl::EndsWith(flag->Filename(), "tools/backfill_main.cc")) continue;
    if (name == "data_dir" || name == "json" || name == "vnodes") continue;
    if (flag->CurrentValue() != flag->DefaultValue()) {
      job = absl::InvalidArgumentError(
          absl::StrCat("--", name,
                       " does not apply to `backfill inspect` (it takes "
                       "--data_dir, --vnodes and --json)"));
    }
  }
  if (job.ok()) job = InspectDataDirectory(data_dir);
  if (!job.ok()) {
    std::cerr << "backfill: error: " << ErrorText(job.status()) << "\n";
    if (json) {
      std::cout << JsonObject().Add("error", ErrorText(job.status())).ToString()
                << std::endl;
    }
    return static_cast<int>(ExitCode::kError);
  }
  if (json) {
    std::cout << InspectionJson(*job, vnodes) << std::endl;
  } else {
    std::cout << FormatInspection(*job, vnodes);
  }
  return 0;
}

int Main(int argc, char** argv) {
  CommandFlagsConfig config;
  config.program = "backfill";
  config.usage =
      "backfill [flags]: runs a backfill over RocksDB (--store=rocksdb) or "
      "the shared\nstore (--store=shared: SST objects in --object_store, "
      "versions in etcd) under a\nlive upstream workload and checks that "
      "the new view equals the table. The last\nline of standard output is "
      "one JSON object (tools/result.proto). Exit codes:\n0 consistent, 1 "
      "inconsistent, 2 error (bad flags, bad scenario, I/O, a corrupt\ndata "
      "directory), 130 interrupted (Ctrl-C: the first stops at the next "
      "checkpoint,\na second at once, with no result line; rerun with the same "
      "--data_dir (and "
      "--store, --object_store,\n--etcd) to resume; without --etcd the "
      "shared store's local etcd cluster stops\nwith the run, which cannot be "
      "resumed).\n\nbackfill inspect --data_dir=DIR "
      "[--vnodes] [--json]: a stopped or finished\njob's state, read-only: "
      "the committed epoch, per-vnode progress, rows per\ntable, the saved "
      "definition and the state in force. Exit 0, or 2 on error\n(a missing "
      "directory: NOT_FOUND; a corrupt one: DATA_LOSS naming the file).";
  config.help_files = {"tools/backfill_main.cc"};
  config.accepted_values = {
      {"parallelism", kParallelismValues},
      {"rate_limit", kRateLimitValues},
      {"target_barrier_latency_ms", kTargetLatencyValues},
      {"metrics_port", kMetricsPortValues}};
  absl::StatusOr<CommandLine> command_line =
      ParseCommandFlags(argc, argv, config, std::cout);
  if (!command_line.ok()) return FailCommandLine(command_line.status());
  if (command_line->help_shown) return 0;
  if (command_line->positional.size() == 1 &&
      command_line->positional[0] == "inspect") {
    return Inspect();
  }
  if (absl::GetFlag(FLAGS_vnodes)) {
    return FailCommandLine(absl::InvalidArgumentError(
        "--vnodes applies to `backfill inspect` only"));
  }
  if (!command_line->positional.empty()) {
    // `backfill inspect DIR`: the stray one is the argument after inspect.
    const bool inspect = command_line->positional[0] == "inspect";
    return FailCommandLine(absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument \"", command_line->positional[inspect ? 1 : 0],
        inspect ? "\" after inspect (it takes only flags: --data_dir=DIR, "
                  "--vnodes, --json)"
                : "\" (flags are --name=value; backfill --help lists them)")));
  }
  absl::StatusOr<Flags> flags = ValidatedFlags();
  if (!flags.ok()) return FailCommandLine(flags.status());

  // Validate everything before touching the data directory.
  absl::StatusOr<tools::Scenario> scenario =
      flags->scenario.empty()
          ? absl::StatusOr<tools::Scenario>(DefaultScenario())
          : LoadScenarioFile(flags->scenario);
  if (!scenario.ok())
    return Fail(*flags, flags->scenario, "", scenario.status());
  if (flags->parallelism.has_value()) {
    scenario->mutable_backfill()->set_parallelism(*flags->parallelism);
  }
  if (flags->kind.has_value()) {
    scenario->mutable_backfill()->set_kind(*flags->kind);
  }
  if (flags->rate_limit.has_value()) {
    scenario->mutable_backfill()->set_rate_limit(*flags->rate_limit);
    scenario->mutable_backfill()->clear_adaptive();
  }
  if (flags->adaptive) {
    const uint32_t target =
        flags->target_barrier_latency_ms.value_or(
            scenario->backfill().adaptive().target_barrier_latency_ms());
    if (target == 0) {
      return FailCommandLine(absl::InvalidArgumentError(
          "--rate_limit=adaptive needs --target_barrier_latency_ms=T (the "
          "scenario has no backfill.adaptive target)"));
    }
    scenario->mutable_backfill()->set_rate_limit(0);
    scenario->mutable_backfill()->mutable_adaptive()
        ->set_target_barrier_latency_ms(target);
  }
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(*scenario);
  // The scenario's name, known once its file parsed (a refused scenario's
  // result names it too, as a run's does).
  const std::string name =
      scenario->name().empty() ? "default" : scenario->name();
  if (!spec.ok()) return Fail(*flags, name, "", spec.status());

  // The metrics endpoint first: a port that cannot be had fails the run
  // before it creates or opens anything.
  Registry registry;
  absl::StatusOr<std::unique_ptr<JobMetricsRecorder>> recorder =
      JobMetricsRecorder::Create(registry, spec->job.upstream.table_id,
                                 spec->job.view_table_id, Clock::Real());
  if (!recorder.ok()) {
    return Fail(*flags, name, flags->data_dir, recorder.status());
  }
  std::unique_ptr<HttpExporter> exporter;
  if (flags->metrics_port.has_value()) {
    HttpExporter::Options exporter_options;
    exporter_options.port = *flags->metrics_port;
    absl::StatusOr<std::unique_ptr<HttpExporter>> started =
        HttpExporter::Start(registry, exporter_options);
    if (!started.ok()) {
      return Fail(*flags, name, flags->data_dir, started.status());
    }
    exporter = std::move(*started);
    // On standard error with --json (standard output is the JSON line
    // alone): --metrics_port=0 needs it said.
    (flags->json ? std::cerr : std::cout)
        << "metrics: http://127.0.0.1:" << exporter->port() << "/metrics\n";
  }
  // A fresh directory must hold the scenario: refuse before writing.
  const std::string temp_root = std::filesystem::temp_directory_path().string();
  const std::string space_dir =
      flags->data_dir.empty() ? temp_root : flags->data_dir;
  const bool fresh = flags->data_dir.empty() || IsFresh(flags->data_dir);
  if (!flags->force && fresh) {
    absl::StatusOr<uint64_t> free_bytes = FreeBytes(space_dir);
    if (!free_bytes.ok()) return Fail(*flags, name, "", free_bytes.status());
    absl::Status fits =
        CheckFits(EstimateDiskBytes(*spec), *free_bytes, space_dir);
    if (!fits.ok()) return Fail(*flags, name, flags->data_dir, fits);
  }

  std::string data_dir = flags->data_dir;
  if (data_dir.empty()) {
    std::string pattern =
        (std::filesystem::path(temp_root) / "backfill-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Fail(
          *flags, name, "",
          absl::InternalError("cannot create a temporary data directory"));
    }
    data_dir = pattern;
  }
  // RocksDB makes only the last level of its directory, and the dumps are
  // written after the job: make both directories, parents included, now.
  for (const auto& [flag, dir] : {std::pair("data_dir", data_dir),
                                  std::pair("dump_dir", flags->dump_dir)}) {
    if (absl::Status made = CreateDirectories(flag, dir); !made.ok()) {
      return Fail(*flags, name, data_dir, made);
    }
  }
  const std::string object_store =
      !flags->shared || !flags->object_store.empty()
          ? flags->object_store
          : (std::filesystem::path(data_dir) / "objects").string();
  InterruptOptions interrupt;
  interrupt.first_message = absl::StrCat(
      "\nbackfill: stopping at the next checkpoint (Ctrl-C again to exit at "
      "once; ",
      Resumable(*flags)
          ? absl::StrCat("either way `",
                         ResumeCommand(*flags, data_dir, object_store),
                         "` resumes the job")
          : std::string(kNotResumable),
      ")\n");
  interrupt.second_message =
      absl::StrCat("\nbackfill: exiting now; ",
                   ResumeHint(*flags, data_dir, object_store), "\n");
  interrupt.exit_code = static_cast<int>(ExitCode::kInterrupted);
  if (absl::Status status = InstallInterruptHandler(interrupt); !status.ok()) {
    return Fail(*flags, name, data_dir, status);
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
  // --store=shared: the object store and etcd (a local cluster without
  // --etcd, stopped when `shared` is destroyed, on every return below;
  // before std::_Exit by hand; by the kernel if the process dies).
  std::unique_ptr<SharedStoreBackend> shared;
  if (flags->shared) {
    SharedStoreBackendOptions backend_options;
    backend_options.object_store = object_store;
    backend_options.etcd_endpoints = flags->etcd;
    if (flags->etcd.empty()) {
      std::string pattern =
          (std::filesystem::path(data_dir) / "etcd-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) {
        return Fail(*flags, name, data_dir,
                    absl::InternalError(absl::StrCat(
                        "cannot create a directory for the local etcd "
                        "cluster in ",
                        data_dir)));
      }
      backend_options.local_etcd_dir = pattern;
    }
    backend_options.etcd_prefix = absl::StrCat("backfill/", name, "/");
    backend_options.cache_dir =
        (std::filesystem::path(data_dir) / "cache").string();
    absl::StatusOr<std::unique_ptr<SharedStoreBackend>> started =
        SharedStoreBackend::Start(backend_options);
    if (!started.ok()) return Fail(*flags, name, data_dir, started.status());
    shared = *std::move(started);
    if (!flags->json && shared->started_local_etcd()) {
      std::cout << "etcd: a local 3-member cluster at "
                << absl::StrJoin(shared->etcd_endpoints(), ",")
                << " for this run\n";
    }
  }
  // The store in use; `rocksdb` is it when --store=rocksdb (else null).
  std::unique_ptr<StateStore> store;
  RocksDbStateStore* rocksdb = nullptr;
  auto open_store = [&]() -> absl::Status {
    store.reset();  // Closes the database first: one process, one lock.
    rocksdb = nullptr;
    if (shared != nullptr) {
      BACKFILL_ASSIGN_OR_RETURN(
          std::unique_ptr<SharedStateStore> opened,
          SharedStateStore::Open(shared->store_options()));
      store = std::move(opened);
      return absl::OkStatus();
    }
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStateStore> opened,
                              RocksDbStateStore::Open(store_options));
    rocksdb = opened.get();
    store = std::move(opened);
    return absl::OkStatus();
  };
  if (absl::Status opened = open_store(); !opened.ok()) {
    return Fail(*flags, name, data_dir, opened);
  }
  // The phase before the backfill is "resuming" for a job whose initial
  // load completed; a load cut short is done again, and shown as the load.
  // (A store the check cannot read fails the job's own first read, with
  // its recoveries; here it only decides the label.)
  const absl::StatusOr<bool> loaded =
      InitialLoadComplete(*store, spec->job.source_offset_table_id);
  const bool resuming = loaded.ok() ? *loaded : !fresh;
  if (fault_injector != nullptr) fault_injector->SetArmed(true);

  StreamingJobOptions options = spec->job;
  // Explicit flags win over a restarted job's saved state (the scenario's
  // values only define a new job).
  options.overrides.parallelism = flags->parallelism;
  // A rate policy given explicitly replaces the saved one: a number leaves
  // adaptive mode, `adaptive` enters it without a ceiling.
  if (flags->rate_limit.has_value()) {
    options.overrides.rate_limit = JobRateLimit(*flags->rate_limit);
    options.overrides.adaptive_target = absl::ZeroDuration();
  }
  if (flags->adaptive) {
    options.overrides.rate_limit = RateLimit::Disabled();
    options.overrides.adaptive_target = spec->job.adaptive_target_barrier_latency;
  }
  if (!flags->json) {
    std::cout << "scenario " << name << ": " << spec->job.initial_rows
              << " initial rows, parallelism " << options.parallelism
              << ", data directory " << data_dir << std::endl;
  }
  // The live line: phases from now on, then the snapshot's share read
  // (tools/live_progress.h); with --json only the estimate, for the metrics.
  ProgressDisplayOptions display_options;
  display_options.mode = DetectDisplayMode(STDOUT_FILENO);
  display_options.width = TerminalWidth(STDOUT_FILENO);
  display_options.plain_interval_seconds = 1;
  LiveProgressOptions live_options;
  live_options.definition = JobDefinitionOf(options);
  live_options.backfill_kind = options.backfill_kind;
  live_options.initial_rows = options.initial_rows;
  live_options.resuming = resuming;
  const JobMetrics& job_metrics = (*recorder)->metrics();
  live_options.upstream_written_rows = [&job_metrics] {
    return job_metrics.upstream_written_rows_total.value();
  };
  LiveProgress live(flags->json ? nullptr : &std::cout, display_options,
                    live_options, Clock::Real());
  live.Start();
  uint32_t recoveries = 0;
  CheckpointStopper stopper;
  // Stops the process right after a committed checkpoint (the runtime has
  // no stop request of its own): the directory is what that checkpoint
  // left, which the next run resumes.
  auto stop_at_checkpoint = [&](const JobProgress& progress) {
    live.Finish();
    std::cerr << "backfill: stopped after checkpoint " << progress.checkpoints
              << " of this run; "
              << ResumeHint(*flags, data_dir, object_store) << std::endl;
    tools::RunResult result;
    result.set_scenario(name);
    result.set_data_dir(data_dir);
    result.set_interrupted(true);
    SetProgress(progress, &result);
    result.set_recoveries(recoveries);
    PrintResult(*flags, result);
    std::cerr.flush();
    if (shared != nullptr) shared->StopLocalEtcd();
    std::_Exit(static_cast<int>(ExitCode::kInterrupted));
  };
  std::optional<JobProgress> last_progress;  // for an error's result
  auto observer = [&](const JobProgress& progress) {
    last_progress = progress;
    (*recorder)->Observe(progress);
    // The store is not reopened while the observer runs (recoveries reopen
    // it between attempts).
    (*recorder)->ObserveSnapshotPercent(
        live.Observe(progress, *store, rocksdb).percent);
    if (rocksdb != nullptr) (*recorder)->RecordStorage(rocksdb->Stats());
    if (stopper.ShouldStop(progress.checkpoints, InterruptRequested())) {
      stop_at_checkpoint(progress);
    }
  };
  options.on_recovery = [&](const absl::Status& error, uint32_t recovery) {
    recoveries = recovery;
    (*recorder)->OnRecovery();
    live.OnRecovery();
    std::cerr << "backfill: recovering from the last checkpoint (recovery "
              << recovery << " of at most " << options.max_recoveries
              << ") after: " << ErrorText(error) << std::endl;
  };
  // A store whose write or sync failed refuses checkpoints until reopened
  // (RocksDB's background-error mode): recoveries reopen it.
  // The shared store's does too, after a failed commit.
  options.reopen_store = [&]() -> absl::StatusOr<StateStore*> {
    BACKFILL_RETURN_IF_ERROR(open_store());
    return static_cast<StateStore*>(&(*recorder)->Meter(store.get()));
  };
  // The final check reads both tables with RocksDB's independent reader;
  // the shared store's own committed iterator otherwise.
  if (!flags->shared) {
    options.committed_rows = [&](const TableCatalog& catalog, Epoch epoch) {
      return rocksdb->NewRawCommittedRowIterator(catalog, epoch);
    };
  }
  absl::StatusOr<JobResult> job =
      RunStreamingJob((*recorder)->Meter(store.get()), options, &registry,
                      observer, Clock::Real());
  live.Finish();
  if (job.ok() && InterruptRequested()) {
    // The signal came after the job's last checkpoint: no checkpoint was
    // left to stop at, and the final check ran to its verdict.
    std::cerr << "backfill: Ctrl-C came after the job's last checkpoint: the "
                 "final check ran to its end (the verdict below stands)\n";
  }
  // Faults are for the job; the dumps below read what it verified.
  if (fault_injector != nullptr) fault_injector->SetArmed(false);
  if (!job.ok()) {
    FailedRun run;
    run.recoveries = recoveries;
    if (last_progress.has_value()) run.progress = &*last_progress;
    if (absl::IsDeadlineExceeded(job.status())) {
      run.hint = absl::StrCat(
          "backfill: the run's time limit ran out before the job finished "
          "(the scenario's runtime.max_seconds: ",
          absl::FormatDuration(options.max_duration),
          "); raise it and rerun\nbackfill: ",
          ResumeHint(*flags, data_dir, object_store), "\n");
    }
    return Fail(*flags, name, data_dir, job.status(), run);
  }

  if (!flags->dump_dir.empty()) {
    const absl::Status dumped =
        WriteDumps(*store, options, *spec, flags->dump_dir, *job);
    if (!dumped.ok()) return Fail(*flags, name, data_dir, dumped);
  }

  tools::RunResult result;
  result.set_scenario(name);
  result.set_data_dir(data_dir);
  result.set_consistent(job->consistent);
  result.set_upstream_rows(job->upstream_rows);
  result.set_view_rows(job->view_rows);
  result.set_snapshot_rows(job->snapshot_rows);
  result.set_upstream_ops(job->upstream_ops);
  result.set_epochs(job->epochs);
  result.set_checkpoints(job->checkpoints);
  result.set_parallelism(job->parallelism);
  result.set_resumed(job->resumed);
  result.set_recoveries(job->recoveries);
  result.set_seconds(job->seconds);
  if (job->backfill_seconds.has_value()) {
    result.set_backfill_seconds(*job->backfill_seconds);
  }
  result.set_snapshot_rows_per_second(job->snapshot_rows_per_second);
  result.set_barrier_latency_p50_ms(job->barrier_latency_p50_ms);
  result.set_barrier_latency_p99_ms(job->barrier_latency_p99_ms);
  if (job->backfill_barriers > 0) {
    result.set_backfill_barrier_latency_p99_ms(
        job->backfill_barrier_latency_p99_ms);
  }
  result.set_rescale_upstream_blocked_seconds(
      job->rescale_upstream_blocked_seconds);
  SetAdaptive(job->job_state, &result);
  if (!job->consistent) {
    std::cerr << "backfill: INCONSISTENT: " << job->mismatch << "\n";
  }
  PrintResult(*flags, result);
  return static_cast<int>(job->consistent ? ExitCode::kConsistent
                                          : ExitCode::kInconsistent);
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
