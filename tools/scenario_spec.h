// ScenarioSpec: a validated scenario with every default applied, in our own
// types (no protobuf): the job's StreamingJobOptions (the scenario converts
// into them once, here) and what the command's displays and dumps need.
//
//   BACKFILL_ASSIGN_OR_RETURN(tools::Scenario proto, LoadScenarioFile(path));
//   BACKFILL_ASSIGN_OR_RETURN(ScenarioSpec spec, ScenarioSpecFromProto(proto));
//   RunStreamingJob(store, spec.job, &registry, observer, Clock::Real());
//
// Built by ScenarioSpecFromProto (tools/scenario.h); every field below is
// within the documented range (ValidateStreamingJobOptions accepts `job`)
// when it comes from there.
#ifndef TOOLS_SCENARIO_SPEC_H_
#define TOOLS_SCENARIO_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "executor/runtime/streaming_job_options.h"
#include "serde/column_type.h"
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

struct ScenarioSpec {
  std::string name;

  // The job the scenario defines, every default applied, in the runtime's
  // one options type: the upstream table (column ids 1..n, every column in
  // the value), the output columns (explicit, distinct, non-empty), the
  // initial rows, the workload (seeded with the scenario's seed), the
  // backfill's parallelism, chunk size and rate limit, the barrier cadence,
  // the timeline (sorted by at_epoch, stable: file order within an epoch),
  // and the table ids: the scenario's view and progress ids,
  // kSourceOffsetTableId and kJobStateTableId. The command sets
  // `job.overrides` from explicit flags; nothing else is copied from here.
  StreamingJobOptions job;

  // Derived, for displays and dumps. The view as the scenario describes it
  // (see ScenarioViewCatalog in tools/scenario.h): the output columns, then
  // the pk columns missing from them; the same pk and distribution as the
  // table.
  TableCatalog view;
  // For each view column, its index in the table (the backfill's output
  // mapping); the first `job.output_columns.size()` are the output columns.
  std::vector<int> view_input_columns;
  // Names and types of job.output_columns (the dumps' header).
  std::vector<std::string> output_column_names;
  std::vector<ColumnType> output_column_types;
};

}  // namespace backfill

#endif  // TOOLS_SCENARIO_SPEC_H_
