// Fuzzes scenario files: the input is text-format tools::Scenario, as
// `//tools:backfill --scenario=<file>` reads it. Properties:
//  1. ParseScenario fails with InvalidArgument or gives a scenario;
//     WithDefaults is idempotent, and ValidateScenario gives the same answer
//     before and after it.
//  2. ScenarioSpecFromProto fails (InvalidArgument) iff ValidateScenario
//     does; a spec it returns has every field in its documented range
//     (tools/scenario_spec.h), and its job options pass the runtime's own
//     checks (ValidateStreamingJobOptions, RunStreamingJob's) with valid
//     tables.
//  3. The workload those options describe is well-defined at its extremes:
//     the rows of keys 0, initial_rows - 1, key_space - 1 and of the ops at
//     offsets 0 and max_ops - 1 are valid rows of the table, and the ops due
//     over the run's whole duration are computed without overflow. (Nothing is
//     allocated per row or per key: huge counts cost nothing here.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/runtime/streaming_job_options.h"
#include "executor/runtime/demo/workload.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "serde/memcmp_codec.h"
#include "serde/row.h"
#include "serde/schema.h"
#include "storage/table_catalog.h"
#include "third_party/fuzzing/fuzz_check.h"
#include "tools/scenario.h"
#include "tools/scenario.pb.h"
#include "tools/scenario_spec.h"

namespace backfill {
namespace {

void CheckSpec(const ScenarioSpec& spec) {
  const StreamingJobOptions& job = spec.job;
  FuzzCheck(ValidateTableCatalog(job.upstream).ok(), "job.upstream is valid");
  FuzzCheck(ValidateTableCatalog(spec.view).ok(), "spec.view is valid");
  FuzzCheck(!job.output_columns.empty(), "output_columns is not empty");
  FuzzCheck(spec.output_column_names.size() == job.output_columns.size() &&
                spec.output_column_types.size() == job.output_columns.size(),
            "output column names and types match output_columns");
  for (size_t i = 0; i < job.output_columns.size(); ++i) {
    const int column = job.output_columns[i];
    FuzzCheck(
        column >= 0 && column < static_cast<int>(job.upstream.columns.size()),
        "output column in range");
    for (size_t j = 0; j < i; ++j) {
      FuzzCheck(job.output_columns[j] != column,
                "output columns are distinct");
    }
  }
  FuzzCheck(spec.view_input_columns.size() == spec.view.columns.size(),
            "one view input column per view column");
  for (int column : spec.view_input_columns) {
    FuzzCheck(
        column >= 0 && column < static_cast<int>(job.upstream.columns.size()),
        "view input column in range");
  }
  FuzzCheck(job.parallelism >= 1 &&
                job.parallelism <=
                    static_cast<uint32_t>(job.upstream.vnode_count),
            "parallelism in [1, vnode_count]");
  FuzzCheck(job.chunk_size >= 1, "chunk_size >= 1");
  FuzzCheck(job.barrier_interval > absl::ZeroDuration(),
            "barrier_interval > 0");
  FuzzCheck(job.checkpoint_frequency >= 1, "checkpoint_frequency >= 1");
  FuzzCheck(job.max_duration > absl::ZeroDuration(), "max_duration > 0");
  const WorkloadOptions& w = job.workload;
  FuzzCheck(w.ops_per_second >= 0 && w.insert_weight >= 0 &&
                w.update_weight >= 0 && w.delete_weight >= 0,
            "workload rates and weights >= 0");
  FuzzCheck(w.ops_per_second == 0 ||
                w.insert_weight + w.update_weight + w.delete_weight > 0,
            "some weight > 0 when there are ops");
  FuzzCheck(w.null_fraction >= 0 && w.null_fraction <= 1,
            "null_fraction in [0, 1]");
  FuzzCheck(w.key_space >= job.initial_rows && w.key_space >= 1,
            "key_space >= max(initial_rows, 1)");
  for (size_t i = 0; i < job.actions.size(); ++i) {
    FuzzCheck(job.actions[i].at_epoch >= 1, "actions at epoch >= 1");
    FuzzCheck(
        i == 0 || job.actions[i - 1].at_epoch <= job.actions[i].at_epoch,
        "actions sorted by epoch");
  }
  FuzzCheck(spec.view.table_id == job.view_table_id, "the view's table id");
}

// A workload row for `key` is a valid row of the table with an encodable pk.
void CheckRow(const StreamingJobOptions& options, uint64_t key,
              uint64_t version) {
  const TableCatalog& table = options.upstream;
  const Row row = WorkloadRow(table, options.workload.seed, key, version,
                              options.workload.null_fraction);
  absl::Status status = ValidateRow(table.columns, row);
  FuzzCheck(status.ok(), "a workload row is a valid row", status);
  absl::StatusOr<KeySerde> pk_serde =
      KeySerde::CreateFromColumnTypes(table.PkColumnTypes(), table.pk_orders);
  FuzzCheck(pk_serde.ok(), "the pk has a key layout", pk_serde.status());
  const std::string pk = pk_serde->Serialize(ProjectRow(row, table.pk_indices));
  absl::StatusOr<Row> decoded = pk_serde->Deserialize(pk);
  FuzzCheck(decoded.ok() && RowsEqual(*decoded, ProjectRow(row, table.pk_indices)),
            "the pk decodes to itself", decoded.status());
}

void CheckOptions(const StreamingJobOptions& options) {
  // RunStreamingJob's checks, and what they imply.
  {
    const absl::Status status = ValidateStreamingJobOptions(options);
    FuzzCheck(status.ok(), "RunStreamingJob accepts the options", status);
  }
  FuzzCheck(ValidateTableCatalog(options.upstream).ok(),
            "options.upstream valid");
  FuzzCheck(options.parallelism >= 1 &&
                options.parallelism <=
                    static_cast<uint32_t>(options.upstream.vnode_count),
            "options.parallelism in [1, vnode count]");
  for (int column : options.output_columns) {
    FuzzCheck(column >= 0 &&
                  column < static_cast<int>(options.upstream.columns.size()),
              "options.output_columns in range");
  }
  FuzzCheck(ValidateTableCatalog(ViewCatalog(options)).ok(),
            "the view is valid");
  FuzzCheck(options.chunk_size >= 1, "options.chunk_size >= 1");
  FuzzCheck(options.checkpoint_frequency >= 1,
            "options.checkpoint_frequency >= 1");
  FuzzCheck(options.workload.key_space >= 1, "options.workload.key_space >= 1");
  FuzzCheck(ValidateJobActions(options.actions).ok(),
            "the actions compose (no pause and resume at one epoch)");
  FuzzCheck(!options.rate_limit.is_paused(), "the job-wide rate limit is not Pause");
  {
    const TableId ids[] = {options.upstream.table_id, options.view_table_id,
                           options.progress_table_id,
                           options.source_offset_table_id,
                           options.job_state_table_id};
    for (size_t i = 0; i < std::size(ids); ++i) {
      for (size_t j = i + 1; j < std::size(ids); ++j) {
        FuzzCheck(ids[i] != ids[j], "the five table ids differ");
      }
    }
  }

  // The workload at its extremes.
  const uint64_t key_space = options.workload.key_space;
  for (uint64_t key : {uint64_t{0}, key_space - 1, key_space / 2}) {
    CheckRow(options, key, 0);
    CheckRow(options, key, std::numeric_limits<uint64_t>::max());
  }
  if (options.initial_rows > 0) CheckRow(options, options.initial_rows - 1, 0);
  std::vector<uint64_t> offsets = {0, 1, std::numeric_limits<uint64_t>::max()};
  if (options.workload.max_ops > 0) {
    offsets.push_back(options.workload.max_ops - 1);
  }
  // The source's pacing over the whole run (up to max_duration).
  for (double seconds :
       {0.0, 0.1, absl::ToDoubleSeconds(options.max_duration)}) {
    (void)WorkloadOpsDue(options.workload.ops_per_second, seconds);
  }
  for (uint64_t offset : offsets) {
    const WorkloadOp op = NextWorkloadOp(options.workload, offset);
    FuzzCheck(op.key < key_space && op.target_key < key_space,
              "workload keys are in [0, key_space)");
    CheckRow(options, op.key, op.version);
    CheckRow(options, op.target_key, op.version);
  }
}

// Field-by-field equality, NaN equal to NaN. (Comparing serialized bytes
// would log a protobuf error for every name that is not UTF-8.)
bool SameScenario(const tools::Scenario& a, const tools::Scenario& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  return differencer.Compare(a, b);
}

void FuzzOne(absl::string_view text) {
  absl::StatusOr<tools::Scenario> parsed = ParseScenario(text, "fuzz");
  if (!parsed.ok()) {
    FuzzCheck(parsed.status().code() == absl::StatusCode::kInvalidArgument,
              "a bad scenario file is InvalidArgument", parsed.status());
    return;
  }
  const absl::Status valid = ValidateScenario(*parsed);
  if (!valid.ok()) {
    FuzzCheck(valid.code() == absl::StatusCode::kInvalidArgument,
              "an invalid scenario is InvalidArgument", valid);
  }
  const tools::Scenario defaulted = WithDefaults(*parsed);
  FuzzCheck(SameScenario(WithDefaults(defaulted), defaulted),
            "WithDefaults is idempotent");
  const absl::Status valid_defaulted = ValidateScenario(defaulted);
  FuzzCheck(valid_defaulted.ok() == valid.ok(),
            "validation agrees before and after WithDefaults", valid_defaulted);

  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(*parsed);
  FuzzCheck(spec.ok() == valid.ok(), "ScenarioSpecFromProto fails iff invalid",
            spec.status());
  if (!spec.ok()) return;
  CheckSpec(*spec);
  CheckOptions(spec->job);
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
