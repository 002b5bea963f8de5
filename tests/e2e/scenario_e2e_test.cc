// Every example scenario of tools/scenarios, run in-process over RocksDB: the
// view equals the table after the backfill and after further checkpoints
// (RunStreamingJob checks it after keeping the upstream running for the
// scenario's extra checkpoints). The default demo is shrunk to keep the test
// fast; its full size runs from the README's command.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "executor/runtime/streaming_job.h"
#include "gtest/gtest.h"
#include "storage/rocksdb_state_store.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

StreamingJobOptions JobOptions(const ScenarioSpec& spec) {
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
  options.rate_limit = spec.rate_limit == 0
                           ? RateLimit::Disabled()
                           : RateLimit::Fixed(static_cast<uint32_t>(spec.rate_limit));
  options.barrier_interval = spec.barrier_interval;
  options.checkpoint_frequency = static_cast<uint32_t>(spec.checkpoint_frequency);
  options.extra_checkpoints_after_finish =
      static_cast<uint32_t>(spec.extra_checkpoints_after_finish);
  options.max_duration = spec.max_duration;
  for (const ScenarioAction& action : spec.actions) {
    JobAction job_action;
    job_action.at_epoch = action.at_epoch;
    job_action.rate_limit = action.rate_limit;
    job_action.kind = action.kind == ScenarioActionKind::kPause    ? JobAction::Kind::kPause
                      : action.kind == ScenarioActionKind::kResume ? JobAction::Kind::kResume
                      : action.kind == ScenarioActionKind::kSetRateLimit
                          ? JobAction::Kind::kSetRateLimit
                          : JobAction::Kind::kStopUpstream;
    options.actions.push_back(job_action);
  }
  options.view_table_id = spec.view.table_id;
  options.progress_table_id = spec.progress_table_id;
  options.source_offset_table_id = 0x7fff0001;
  return options;
}

class ScenarioE2eTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioE2eTest, ViewEqualsTable) {
  const std::string file = "tools/scenarios/" + GetParam() + ".textproto";
  BACKFILL_ASSERT_OK_AND_ASSIGN(tools::Scenario scenario, LoadScenarioFile(file));
  if (GetParam() == "default") {
    scenario.set_initial_rows(30000);
    scenario.mutable_workload()->set_ops_per_second(3000);
    scenario.mutable_workload()->set_key_space(120000);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec, ScenarioSpecFromProto(scenario));
  RocksDbStateStoreOptions store_options;
  store_options.path = std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
  std::filesystem::remove_all(store_options.path);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, JobOptions(spec), nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GT(result.upstream_rows, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ScenarioE2eTest,
    ::testing::Values("default", "wide_composite_pk", "heavy_churn", "rate_limited",
                      "column_pruned", "singleton"));

}  // namespace
}  // namespace backfill
