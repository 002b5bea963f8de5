// Scenarios of `//tools:backfill`: loading text-format files, the built-in
// default, defaults, validation, and conversion to our own types.
//
//   BACKFILL_ASSIGN_OR_RETURN(tools::Scenario scenario,
//                             LoadScenarioFile("tools/scenarios/x.textproto"));
//   scenario.mutable_backfill()->set_parallelism(4);   // a flag override
//   BACKFILL_ASSIGN_OR_RETURN(ScenarioSpec spec,
//                             ScenarioSpecFromProto(scenario));
//
// The schema is tools/scenario.proto (issue 7). Only this header mentions
// protobuf types; the runtime reads the StreamingJobOptions that
// ScenarioSpecFromProto makes (ScenarioSpec::job, tools/scenario_spec.h).
#ifndef TOOLS_SCENARIO_H_
#define TOOLS_SCENARIO_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"
#include "storage/table_catalog.h"
#include "storage/table_key.h"
#include "tools/scenario.pb.h"
#include "tools/scenario_spec.h"

namespace backfill {

// Defaults of the "0 = X" fields (tools/scenario.proto).
inline constexpr uint32_t kDefaultScenarioParallelism = 2;
// The runtime's default (executor/runtime/streaming_job_options.h).
inline constexpr uint32_t kDefaultScenarioChunkSize = kDefaultChunkSize;
inline constexpr uint32_t kDefaultScenarioVnodeCount = 256;
inline constexpr uint32_t kDefaultScenarioBarrierIntervalMs = 100;
inline constexpr uint32_t kDefaultScenarioCheckpointFrequency = 1;
inline constexpr uint32_t kDefaultScenarioMaxSeconds = 600;
inline constexpr uint32_t kDefaultScenarioExtraCheckpoints = 3;
// workload.batch_interval_ms when absent: the source's changes go out in
// chunks of about 10 ms each (WorkloadOptions::batch_interval).
inline constexpr uint32_t kDefaultScenarioBatchIntervalMs = 10;
// key_space when 4 × initial_rows is 0.
inline constexpr uint64_t kMinDefaultKeySpace = 1024;
inline constexpr TableId kDefaultUpstreamTableId = 1;
inline constexpr TableId kDefaultViewTableId = 2;
inline constexpr TableId kDefaultProgressTableId = 3;

// Parses text-format `text`; `source` names it in errors. Does not validate
// or apply defaults. Errors: InvalidArgument "<source>:<line>:<column>:
// <parser message>" (1-based) for the first syntax error or unknown field.
absl::StatusOr<tools::Scenario> ParseScenario(absl::string_view text,
                                              absl::string_view source);

// Reads and parses the file at `path` (ParseScenario with source = path).
// Errors: NotFound / PermissionDenied / Internal when it cannot be read
// (message names the path), ParseScenario's errors.
absl::StatusOr<tools::Scenario> LoadScenarioFile(absl::string_view path);

// The built-in demo (tools/scenarios/default.textproto says the same):
// 1,000,000 rows of a 6-column table (INT64 id pk, VARCHAR, FLOAT64,
// DECIMAL, TIMESTAMP, nullable INT32), parallelism 2, ~20k upstream ops/s of
// mixed inserts/updates/deletes, barriers every 100 ms, a checkpoint every 2.
tools::Scenario DefaultScenario();

// `scenario` with every "0 = X" default of tools/scenario.proto made
// explicit: parallelism, chunk_size, vnode_count, barrier_interval_ms,
// checkpoint_frequency, max_seconds, extra_checkpoints_after_finish,
// key_space, table ids, table name, distribution_key (the whole pk unless
// singleton), output_columns (all columns). Idempotent; never fails (invalid
// input stays invalid).
tools::Scenario WithDefaults(tools::Scenario scenario);

// OK iff the scenario (before or after WithDefaults) is consistent;
// otherwise InvalidArgument naming the field and the value, e.g.
// "table.primary_key[1].column = 7 is out of range (3 columns)".
absl::Status ValidateScenario(const tools::Scenario& scenario);

// The DataType of a scenario column type. REQUIRES: not UNSPECIFIED, known
// (the types added by issue 21 included).
DataType ScenarioDataType(tools::DataType type);
// The whole type of a scenario column: its DataType and, for STRUCT, LIST
// and MAP, the parts in `column.nested` (a STRUCT's field ids are 1, 2, ...
// in order). REQUIRES: the column passed ValidateScenario.
ColumnType ScenarioColumnType(const tools::Column& column);
// The OrderType of a key column (NULLS_DEFAULT: PostgreSQL's default for the
// direction). REQUIRES: `key.nulls()` is known.
OrderType ScenarioOrderType(const tools::KeyColumn& key);

// Conversions below REQUIRE ValidateScenario(scenario).ok(); defaults are
// applied internally.

// The upstream table: columns with ids 1..n, pk and order types, distribution
// key (empty for a singleton), vnode count, value encoding, every column in
// the value.
TableCatalog ScenarioTableCatalog(const tools::Scenario& scenario,
                                  TableId table_id);

// The view's columns as indices into the upstream table: the output columns
// in order, then the pk columns missing from them, in pk order (hidden
// columns: the view needs the upstream pk as its own key).
std::vector<int> ScenarioViewInputColumns(const tools::Scenario& scenario);

// The view table over ScenarioViewInputColumns: the same column names, types
// and nullability (ids 1..m), the upstream pk and distribution key re-indexed,
// the same vnode count and encoding. Name: "<table name>_view".
TableCatalog ScenarioViewCatalog(const tools::Scenario& scenario,
                                 TableId table_id);

// Validates, applies defaults and converts. Errors: ValidateScenario's.
absl::StatusOr<ScenarioSpec> ScenarioSpecFromProto(
    const tools::Scenario& scenario);

}  // namespace backfill

#endif  // TOOLS_SCENARIO_H_
