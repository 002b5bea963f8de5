#include "tools/job_options.h"

#include <cstdint>

namespace backfill {

StreamingJobOptions JobOptionsFromScenario(const ScenarioSpec& spec) {
  StreamingJobOptions options;
  options.upstream = spec.table;
  options.output_columns = spec.output_columns;
  options.initial_rows = spec.initial_rows;
  options.workload.seed = spec.seed;
  options.workload.ops_per_second = spec.workload.ops_per_second;
  options.workload.insert_weight = spec.workload.insert_weight;
  options.workload.update_weight = spec.workload.update_weight;
  options.workload.delete_weight = spec.workload.delete_weight;
  options.workload.update_primary_key = spec.workload.update_primary_key;
  options.workload.max_ops = spec.workload.max_ops;
  options.workload.null_fraction = spec.workload.null_fraction;
  options.workload.key_space = spec.workload.key_space;
  options.parallelism = static_cast<uint32_t>(spec.parallelism);
  options.chunk_size = static_cast<uint32_t>(spec.chunk_size);
  options.rate_limit = JobRateLimit(spec.rate_limit);
  options.barrier_interval = spec.barrier_interval;
  options.checkpoint_frequency =
      static_cast<uint32_t>(spec.checkpoint_frequency);
  options.extra_checkpoints_after_finish =
      static_cast<uint32_t>(spec.extra_checkpoints_after_finish);
  options.max_duration = spec.max_duration;
  for (const ScenarioAction& action : spec.actions) {
    JobAction job_action;
    job_action.at_epoch = action.at_epoch;
    job_action.rate_limit = action.rate_limit;
    switch (action.kind) {
      case ScenarioActionKind::kPause:
        job_action.kind = JobAction::Kind::kPause;
        break;
      case ScenarioActionKind::kResume:
        job_action.kind = JobAction::Kind::kResume;
        break;
      case ScenarioActionKind::kSetRateLimit:
        job_action.kind = JobAction::Kind::kSetRateLimit;
        break;
      case ScenarioActionKind::kStopUpstream:
        job_action.kind = JobAction::Kind::kStopUpstream;
        break;
    }
    options.actions.push_back(job_action);
  }
  options.view_table_id = spec.view.table_id;
  options.progress_table_id = spec.progress_table_id;
  options.source_offset_table_id = kSourceOffsetTableId;
  options.job_state_table_id = kJobStateTableId;
  return options;
}

}  // namespace backfill
