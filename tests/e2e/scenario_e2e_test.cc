// Every example scenario of tools/scenarios, run in-process over RocksDB,
// with each backfill kind it allows (backfill.kind; issue 20): the view
// equals the table after the backfill and after further checkpoints
// (RunStreamingJob checks it after keeping the upstream running for the
// scenario's extra checkpoints), and the two COPY dumps the command's
// --dump_dir writes (tools/view_dumps.h, the text of every type) are equal
// byte for byte. A scenario with a `rescale` action allows neither
// NO_SHUFFLE nor SNAPSHOT: those combinations must be InvalidArgument. The default demo is
// shrunk to keep the test fast; its full size runs from the README's
// command.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "executor/runtime/streaming_job.h"
#include "executor/runtime/verifier.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"
#include "tools/view_dumps.h"

namespace backfill {
namespace {

class ScenarioE2eTest
    : public ::testing::TestWithParam<std::tuple<std::string, tools::BackfillKind>> {
 protected:
  const std::string& name() const { return std::get<0>(GetParam()); }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_P(ScenarioE2eTest, ViewEqualsTable) {
  const std::string file = "tools/scenarios/" + name() + ".textproto";
  BACKFILL_ASSERT_OK_AND_ASSIGN(tools::Scenario scenario,
                                LoadScenarioFile(file));
  scenario.mutable_backfill()->set_kind(std::get<1>(GetParam()));
  bool rescaled = false;
  for (const tools::Action& action : scenario.actions()) {
    rescaled |= action.has_rescale();
  }
  if (rescaled && scenario.backfill().kind() != tools::ARRANGEMENT) {
    EXPECT_THAT(ScenarioSpecFromProto(scenario).status(),
                testing::StatusIs(absl::StatusCode::kInvalidArgument));
    return;
  }
  if (name() == "default") {
    scenario.set_initial_rows(30000);
    scenario.mutable_workload()->set_ops_per_second(3000);
    scenario.mutable_workload()->set_key_space(120000);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec,
                                ScenarioSpecFromProto(scenario));
  RocksDbStateStoreOptions store_options;
  store_options.path =
      std::string(std::getenv("TEST_TMPDIR")) + "/" + name() + "_" +
      tools::BackfillKind_Name(scenario.backfill().kind());
  std::filesystem::remove_all(store_options.path);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                RocksDbStateStore::Open(store_options));
  // The final check reads both tables with the store's independent reader.
  spec.job.committed_rows = [&](const TableCatalog& catalog, Epoch epoch) {
    return store->NewRawCommittedRowIterator(catalog, epoch);
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, spec.job, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  // No fault was injected: a recovery would be one from the job's own bug.
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GT(result.upstream_rows, 0u);
  // Every rescale action ran online (no recovery), the last one in force.
  uint32_t rescales = 0;
  uint32_t parallelism = spec.job.parallelism;
  for (const JobAction& action : spec.job.actions) {
    if (action.kind != JobAction::Kind::kRescale ||
        action.parallelism == parallelism) {
      continue;
    }
    ++rescales;
    parallelism = action.parallelism;
  }
  EXPECT_EQ(result.rescales, rescales);
  EXPECT_EQ(result.parallelism, parallelism);

  // Byte-equal dumps (a header line, then one line per row, sorted).
  const std::string dump_dir = store_options.path + ".dump";
  std::filesystem::create_directories(dump_dir);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      ViewVerdict verdict, WriteViewDumps(*store, spec.job, spec, dump_dir));
  EXPECT_TRUE(verdict.consistent);
  const std::string upstream_dump = ReadFile(dump_dir + "/upstream.tsv");
  EXPECT_EQ(static_cast<uint64_t>(
                std::count(upstream_dump.begin(), upstream_dump.end(), '\n')),
            result.upstream_rows + 1);
  EXPECT_TRUE(upstream_dump == ReadFile(dump_dir + "/view.tsv"))
      << "view.tsv != upstream.tsv in " << dump_dir;
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ScenarioE2eTest,
    ::testing::Combine(::testing::Values("default", "wide_composite_pk",
                                         "heavy_churn", "rate_limited",
                                         "column_pruned", "singleton",
                                         "new_types", "nested_key"),
                       ::testing::Values(tools::ARRANGEMENT,
                                         tools::NO_SHUFFLE, tools::SNAPSHOT)));

}  // namespace
}  // namespace backfill
