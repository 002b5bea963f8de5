// ScenarioSpec: a validated scenario with every default applied, in our own
// types (no protobuf): what the backfill runtime and the main read.
//
//   BACKFILL_ASSIGN_OR_RETURN(tools::Scenario proto, LoadScenarioFile(path));
//   BACKFILL_ASSIGN_OR_RETURN(ScenarioSpec spec, ScenarioSpecFromProto(proto));
//   for (const ScenarioAction& action : spec.actions) { ... }
//
// Built by ScenarioSpecFromProto (tools/scenario.h); every field below is
// within the documented range when it comes from there.
#ifndef TOOLS_SCENARIO_SPEC_H_
#define TOOLS_SCENARIO_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "serde/data_type.h"
#include "storage/table_catalog.h"
#include "storage/table_key.h"

namespace backfill {

// The runtime's source offset table id for scenario runs
// (JobOptionsFromScenario): outside the ids scenarios use by default (1-3);
// ValidateScenario rejects a scenario naming it for one of its tables.
inline constexpr TableId kSourceOffsetTableId = 0x7fff0001;
// The runtime's job-state table id for scenario runs (the job's definition
// and its mutations in force; executor/runtime/job_state_table.h): the same
// for every scenario, so that a data directory holding another scenario's
// job is recognised; ValidateScenario rejects a scenario naming it.
inline constexpr TableId kJobStateTableId = 0x7fff0002;

// The upstream DML generator's parameters (Scenario.workload).
struct WorkloadSpec {
  // Operations per second, >= 0; 0 = no upstream changes.
  double ops_per_second = 0;
  // Relative weights, each >= 0; their sum is > 0 when ops_per_second > 0.
  double insert_weight = 0;
  double update_weight = 0;
  double delete_weight = 0;
  // Updates may change the primary key (move the row to another vnode).
  bool update_primary_key = false;
  // Total operations; 0 = until the run ends.
  uint64_t max_ops = 0;
  // Share of NULLs in nullable columns (pk included), in [0, 1].
  double null_fraction = 0;
  // Distinct keys drawn from; >= max(initial_rows, 1).
  uint64_t key_space = 1024;
};

enum class ScenarioActionKind { kPause, kResume, kSetRateLimit, kStopUpstream };

// One mutation of the timeline (Scenario.actions).
struct ScenarioAction {
  // Counted from the view's creation; >= 1.
  uint64_t at_epoch = 1;
  ScenarioActionKind kind = ScenarioActionKind::kPause;
  // kSetRateLimit only: snapshot rows/s for the whole job; 0 = no limit.
  uint64_t rate_limit = 0;
};

struct ScenarioSpec {
  std::string name;
  // Rows inserted before the view is created.
  uint64_t initial_rows = 0;
  uint64_t seed = 0;

  // The upstream table (column ids 1..n, value_indices = all columns).
  TableCatalog table;
  // The view (see ScenarioViewCatalog in tools/scenario.h): the output
  // columns, then the pk columns missing from them; the same pk and
  // distribution as `table`.
  TableCatalog view;
  // For each view column, its index in `table` (the backfill's output
  // mapping); the first `output_columns.size()` are the output columns.
  std::vector<int> view_input_columns;
  // Indices into `table` of the columns the view keeps (the dumps' columns),
  // distinct, non-empty.
  std::vector<int> output_columns;
  std::vector<std::string> output_column_names;
  std::vector<DataType> output_column_types;
  TableId progress_table_id = 3;

  WorkloadSpec workload;

  // Backfill actors, in [1, table.vnode_count].
  int parallelism = 2;
  // Snapshot rows per chunk, >= 1.
  int chunk_size = 256;
  // Snapshot rows/s for the whole job; 0 = no limit.
  uint64_t rate_limit = 0;

  // Barrier interval, > 0.
  absl::Duration barrier_interval = absl::Milliseconds(100);
  // Every Nth barrier is a checkpoint, >= 1.
  int checkpoint_frequency = 1;
  // Safety timeout of the whole run, > 0.
  absl::Duration max_duration = absl::Seconds(600);
  // Checkpoints the upstream keeps running for after the backfill finished.
  int extra_checkpoints_after_finish = 3;

  // The timeline, sorted by at_epoch (stable: file order within an epoch).
  std::vector<ScenarioAction> actions;
};

}  // namespace backfill

#endif  // TOOLS_SCENARIO_SPEC_H_
