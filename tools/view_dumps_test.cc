#include "tools/view_dumps.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "executor/runtime/streaming_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/committed_rows.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"

namespace backfill {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

// A small job whose view keeps two of the three columns, out of table order.
constexpr char kScenario[] = R"pb(
  name: "dumps"
  table {
    columns { name: "id" type: INT64 }
    columns { name: "v" type: VARCHAR nullable: true }
    columns { name: "w" type: FLOAT64 nullable: true }
    primary_key { column: 0 }
    vnode_count: 8
  }
  initial_rows: 300
  seed: 4
  workload {
    ops_per_second: 2000
    insert_weight: 1
    update_weight: 1
    delete_weight: 1
    null_fraction: 0.2
  }
  backfill { parallelism: 2 chunk_size: 32 output_columns: 2 output_columns: 1 }
  runtime { barrier_interval_ms: 10 checkpoint_frequency: 2 }
)pb";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ViewDumpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BACKFILL_ASSERT_OK_AND_ASSIGN(tools::Scenario scenario,
                                  ParseScenario(kScenario, "dumps"));
    BACKFILL_ASSERT_OK_AND_ASSIGN(spec_, ScenarioSpecFromProto(scenario));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        job_, RunStreamingJob(*store_, spec_.job, nullptr, {}, Clock::Real()));
    ASSERT_TRUE(job_.consistent) << job_.mismatch;
    ASSERT_GT(job_.upstream_rows, 0u);
  }

  // A fresh directory under TEST_TMPDIR.
  static std::string Dir(const std::string& name) {
    const std::string dir =
        std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
  }

  std::unique_ptr<StateStore> store_ = NewMemoryStateStore();
  ScenarioSpec spec_;
  JobResult job_;
};

// The job's verdict again, and two byte-equal files: the output columns'
// names as the header, then one line per row, sorted.
TEST_F(ViewDumpsTest, AConsistentViewGivesEqualFilesAndTheJobsVerdict) {
  const std::string dir = Dir("consistent");
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                WriteViewDumps(*store_, spec_.job, spec_, dir));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.upstream_rows, job_.upstream_rows);
  EXPECT_EQ(verdict.view_rows, job_.view_rows);
  const std::string upstream = ReadFile(dir + "/upstream.tsv");
  EXPECT_EQ(upstream, ReadFile(dir + "/view.tsv"));
  const std::vector<std::string> lines =
      absl::StrSplit(upstream, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), job_.upstream_rows + 1);
  EXPECT_EQ(lines[0], "w\tv");
  EXPECT_TRUE(std::is_sorted(lines.begin() + 1, lines.end()));
}

// The view's reader hides the view's first row: the pass says so, and the
// files differ by that row (each side went to its own file).
TEST_F(ViewDumpsTest, AMissingViewRowShowsInTheVerdictAndTheFiles) {
  const std::string dir = Dir("missing_row");
  StreamingJobOptions job = spec_.job;
  const TableId view_table = job.view_table_id;
  job.committed_rows = [&](const TableCatalog& catalog, Epoch epoch)
      -> absl::StatusOr<std::unique_ptr<CommittedRowIterator>> {
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<CommittedRowIterator> it,
        NewStoreCommittedRowIterator(*store_, catalog, epoch));
    if (catalog.table_id != view_table) return it;
    // SeekToFirst, then one Next: the view without its first row.
    class SkipFirst final : public CommittedRowIterator {
     public:
      explicit SkipFirst(std::unique_ptr<CommittedRowIterator> inner)
          : inner_(std::move(inner)) {}
      bool Valid() const override { return inner_->Valid(); }
      void SeekToFirst() override {
        inner_->SeekToFirst();
        if (inner_->Valid()) inner_->Next();
      }
      void Next() override { inner_->Next(); }
      VirtualNode vnode() const override { return inner_->vnode(); }
      absl::string_view pk() const override { return inner_->pk(); }
      const Row& row() const override { return inner_->row(); }
      absl::Status status() const override { return inner_->status(); }

     private:
      std::unique_ptr<CommittedRowIterator> inner_;
    };
    return std::make_unique<SkipFirst>(std::move(it));
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                WriteViewDumps(*store_, job, spec_, dir));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_EQ(verdict.upstream_rows, job_.upstream_rows);
  EXPECT_EQ(verdict.view_rows + 1, job_.view_rows);
  const std::vector<std::string> upstream =
      absl::StrSplit(ReadFile(dir + "/upstream.tsv"), '\n', absl::SkipEmpty());
  const std::vector<std::string> view =
      absl::StrSplit(ReadFile(dir + "/view.tsv"), '\n', absl::SkipEmpty());
  EXPECT_EQ(upstream.size(), job_.upstream_rows + 1);
  EXPECT_EQ(view.size(), job_.upstream_rows);
}

TEST_F(ViewDumpsTest, AMissingDirectoryIsNotFoundNamingTheFile) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/no_such_directory";
  std::filesystem::remove_all(dir);
  EXPECT_THAT(
      WriteViewDumps(*store_, spec_.job, spec_, dir).status(),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir + "/upstream.tsv")));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace backfill
