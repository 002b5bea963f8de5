// JobOptionsFromScenario: a validated scenario (tools/scenario_spec.h) as the
// runtime's StreamingJobOptions, so the command and the end-to-end tests run
// a scenario the same way.
//
//   BACKFILL_ASSIGN_OR_RETURN(ScenarioSpec spec, ScenarioSpecFromProto(s));
//   StreamingJobOptions options = JobOptionsFromScenario(spec);
//   RunStreamingJob(store, options, &registry, observer, Clock::Real());
#ifndef TOOLS_JOB_OPTIONS_H_
#define TOOLS_JOB_OPTIONS_H_

#include "executor/runtime/streaming_job_options.h"
#include "tools/scenario_spec.h"

namespace backfill {

// The source's offset table id is kSourceOffsetTableId (scenario_spec.h).

StreamingJobOptions JobOptionsFromScenario(const ScenarioSpec& spec);

}  // namespace backfill

#endif  // TOOLS_JOB_OPTIONS_H_
