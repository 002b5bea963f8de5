#include "tools/inspect.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/backfill/snapshot_backfill_executor.h"
#include "executor/runtime/demo/bulk_load.h"
#include "executor/runtime/demo/workload.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/streaming_job_options.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario_spec.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

constexpr TableId kUpstream = 1;
constexpr TableId kView = 2;
constexpr TableId kProgress = 3;
constexpr TableId kJobState = 4;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/inspect_", ::getpid(),
                      "_", counter.fetch_add(1));
}

TableCatalog Upstream(int vnode_count) {
  TableCatalog catalog;
  catalog.table_id = kUpstream;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 0, false},
                     {"note", DataType::kVarchar, 1, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = vnode_count;
  catalog.value_indices = {0, 1};
  return catalog;
}

JobDefinition Definition() {
  JobDefinition definition;
  definition.upstream = Upstream(4);
  definition.view = Upstream(4);
  definition.view.table_id = kView;
  definition.view.name = "orders_view";
  definition.output_columns = {1, 0};
  definition.progress_table_id = kProgress;
  definition.source_offset_table_id = 5;
  return definition;
}

// Writes `definition` and `state` as `store`'s job in table `job_table` at
// epoch 1, sealed: the table returned must live until a checkpoint of
// epoch 1 has synced it.
absl::StatusOr<std::unique_ptr<JobStateTable>> SaveJob(
    StateStore& store, TableId job_table, const JobDefinition& definition,
    const JobState& state = {}) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<JobStateTable> job,
                            JobStateTable::Create(store, job_table));
  BACKFILL_RETURN_IF_ERROR(
      job->InitEpoch(EpochPair{Epoch(1), Epoch(0)}).status());
  BACKFILL_RETURN_IF_ERROR(job->Write(definition, state));
  BACKFILL_RETURN_IF_ERROR(job->Commit(EpochPair{Epoch(2), Epoch(1)}));
  return job;
}

// A job caught mid-backfill, written by hand: vnode 0 finished at 17 after
// 5 rows, vnode 1 in progress at 42 after 9, vnodes 2 and 3 not started;
// 3 upstream rows, an empty view; paused, 500 rows/s, parallelism 3.
void WriteJob(StateStore& store) {
  const JobDefinition definition = Definition();
  const EpochPair first{Epoch(1), Epoch(0)};
  const EpochPair next{Epoch(2), Epoch(1)};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto job,
                                JobStateTable::Create(store, kJobState));
  BACKFILL_ASSERT_OK(job->InitEpoch(first).status());
  JobState state;
  state.paused = true;
  state.rate_limit = RateLimit::Fixed(500);
  state.parallelism = 3;
  state.epochs_since_creation = 12;
  BACKFILL_ASSERT_OK(job->Write(definition, state));
  BACKFILL_ASSERT_OK(job->Commit(next));

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto progress, StateTable::Create(BackfillProgressCatalog(
                                            definition.upstream, kProgress),
                                        store, VnodeBitmap::All(4)));
  BACKFILL_ASSERT_OK(progress->InitEpoch(first));
  BACKFILL_ASSERT_OK(
      progress->Insert(Row{int16_t{0}, int64_t{17}, true, int64_t{5}}));
  BACKFILL_ASSERT_OK(
      progress->Insert(Row{int16_t{1}, int64_t{42}, false, int64_t{9}}));
  BACKFILL_ASSERT_OK(progress->Commit(next));

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto upstream,
      StateTable::Create(definition.upstream, store, VnodeBitmap::All(4)));
  BACKFILL_ASSERT_OK(upstream->InitEpoch(first));
  for (int64_t id : {3, 17, 42}) {
    BACKFILL_ASSERT_OK(upstream->Insert(Row{id, std::string("x")}));
  }
  BACKFILL_ASSERT_OK(upstream->Commit(next));
  BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(1)));
}

// Committed rows of table `table_id` in each of its `vnode_count` vnodes.
std::vector<uint64_t> RowsPerVnode(StateStore& store, TableId table_id,
                                   int vnode_count) {
  std::vector<uint64_t> rows(vnode_count, 0);
  const Epoch committed = store.CommittedEpoch(table_id);
  for (int vnode = 0; vnode < vnode_count; ++vnode) {
    auto it = store.NewIterator(table_id, static_cast<VirtualNode>(vnode),
                                PkRange::All(), committed);
    EXPECT_TRUE(it.ok()) << it.status();
    if (!it.ok()) continue;
    for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) ++rows[vnode];
    EXPECT_TRUE((*it)->status().ok()) << (*it)->status();
  }
  return rows;
}

TEST(InspectStoreTest, ReportsProgressRowsAndTheStateInForce) {
  auto store = NewMemoryStateStore();
  WriteJob(*store);
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job,
                                InspectStore(*store, kJobState));
  EXPECT_EQ(job.committed_epoch, 1u);
  ASSERT_TRUE(job.job_found);
  EXPECT_TRUE(job.job.state.paused);
  EXPECT_EQ(job.job.state.rate_limit, RateLimit::Fixed(500));
  EXPECT_EQ(job.job.state.parallelism, 3u);
  EXPECT_EQ(job.job.state.epochs_since_creation, 12u);
  EXPECT_EQ(job.vnodes_finished, 1u);
  EXPECT_EQ(job.vnodes_in_progress, 1u);
  EXPECT_EQ(job.vnodes_not_started, 2u);
  EXPECT_EQ(job.snapshot_rows, 14u);
  EXPECT_EQ(job.upstream_rows, 3u);
  EXPECT_EQ(job.view_rows, 0u);
  EXPECT_EQ(job.progress_rows, 2u);
  // Each vnode weighs its committed upstream rows: the three ids are one
  // each in vnodes 0, 2 and 3. Vnode 0 finished with 5 rows read from its 1
  // (the hand-written progress is not the data's): 0.2 "bytes" per row, so
  // vnodes 2 and 3 count 5 rows each and vnode 1 its 9 read: 5 + 9 + 5 + 5.
  // The share stays below 100 while vnodes are unfinished.
  EXPECT_EQ(RowsPerVnode(*store, kUpstream, 4),
            (std::vector<uint64_t>{1, 0, 1, 1}));
  EXPECT_EQ(job.estimated_snapshot_rows, 24u);
  EXPECT_LT(job.snapshot_percent, 100);
  ASSERT_EQ(job.vnodes.size(), 4u);
  EXPECT_EQ(job.vnodes[0].state, VnodeInspection::State::kFinished);
  EXPECT_EQ(job.vnodes[1].state, VnodeInspection::State::kInProgress);
  EXPECT_EQ(job.vnodes[1].position, "(42)");
  EXPECT_EQ(job.vnodes[1].rows, 9u);
  EXPECT_EQ(job.vnodes[2].state, VnodeInspection::State::kNotStarted);
  EXPECT_EQ(job.vnodes[2].position, "");

  const std::string text = FormatInspection(job, /*list_vnodes=*/false);
  EXPECT_THAT(text, HasSubstr("committed epoch 1\n"));
  EXPECT_THAT(text, HasSubstr("orders (table 1) -> orders_view (table 2), "
                              "columns note, id"));
  EXPECT_THAT(text, HasSubstr("paused, rate limit 500 rows/s, parallelism 3"));
  EXPECT_THAT(text, HasSubstr("12 epochs since creation"));
  EXPECT_THAT(text, HasSubstr("1 finished, 1 in progress, 2 not started\n"));
  EXPECT_THAT(text, HasSubstr("vnode 1 at (42) (9 rows)"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("vnode 3:")));
  EXPECT_THAT(FormatInspection(job, /*list_vnodes=*/true),
              HasSubstr("  vnode 0: finished at (17), 5 rows\n"
                        "  vnode 1: in_progress at (42), 9 rows\n"
                        "  vnode 2: not_started\n"
                        "  vnode 3: not_started\n"));

  const std::string json = InspectionJson(job, /*list_vnodes=*/false);
  EXPECT_THAT(json, HasSubstr("\"committed_epoch\":1,"));
  EXPECT_THAT(json, HasSubstr("\"progress_kind\":\"per_vnode\","));
  EXPECT_THAT(json, HasSubstr("\"vnodes_finished\":1,\"vnodes_in_progress\":1,"
                              "\"vnodes_not_started\":2,"));
  EXPECT_THAT(json, HasSubstr("\"paused\":true,\"rate_limit\":500,"
                              "\"adaptive_target_ms\":null,"
                              "\"adaptive_rows_per_second\":null,"
                              "\"parallelism\":3,"));
  EXPECT_THAT(json,
              HasSubstr("\"epochs_since_creation\":12,\"epoch_pins\":{}}"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"vnodes\":")));
  EXPECT_THAT(InspectionJson(job, /*list_vnodes=*/true),
              HasSubstr(",\"vnodes\":[{\"vnode\":0,\"state\":\"finished\","
                        "\"position\":\"(17)\",\"rows\":5},{\"vnode\":1,"));

  // A job in adaptive mode says so; its fixed limit is the controller's
  // ceiling.
  job.job.state.adaptive_target = absl::Milliseconds(40);
  job.job.state.adaptive_rows_per_second = 53312;
  EXPECT_THAT(FormatInspection(job, /*list_vnodes=*/false),
              HasSubstr("paused, rate limit 500 rows/s, adaptive: target 40.0 "
                        "ms, 53312 rows/s in force, parallelism 3"));
  EXPECT_THAT(InspectionJson(job, /*list_vnodes=*/false),
              HasSubstr("\"rate_limit\":500,\"adaptive_target_ms\":40,"
                        "\"adaptive_rows_per_second\":53312,"
                        "\"parallelism\":3,"));
}

// A snapshot backfill keeps one progress row per actor: actor 1 (vnodes 0
// and 1) is reading vnode 1 after 7 rows, actor 2 (vnodes 2 and 3) read
// both and replays its log; actor 1's read epoch is pinned.
TEST(InspectStoreTest, ReportsASnapshotBackfillsActors) {
  constexpr TableId kSnapshotMeta = 6;
  auto store = NewMemoryStateStore();
  WriteJob(*store);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto meta, StateTable::Create(SnapshotMetaCatalog(kSnapshotMeta), *store,
                                    VnodeBitmap::All(1)));
  BACKFILL_ASSERT_OK(meta->InitEpoch(EpochPair{Epoch(2), Epoch(1)}));
  VnodeBitmap first(4), second(4);
  first.Set(0);
  first.Set(1);
  second.Set(2);
  second.Set(3);
  BACKFILL_ASSERT_OK(meta->Insert(Row{int32_t{1}, first.Serialize(), int64_t{1},
                                      int16_t{0}, int32_t{1}, std::string("pk"),
                                      int64_t{1}, int64_t{7}, int64_t{100}}));
  BACKFILL_ASSERT_OK(meta->Insert(
      Row{int32_t{2}, second.Serialize(), int64_t{1}, int16_t{1}, int32_t{2},
          Datum{}, int64_t{1}, int64_t{5}, int64_t{0}}));
  BACKFILL_ASSERT_OK(meta->Commit(EpochPair{Epoch(3), Epoch(2)}));
  BACKFILL_ASSERT_OK(
      store->PinEpoch("snapshot_backfill/table 6/actor 1", Epoch(1)));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));

  BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job,
                                InspectStore(*store, kJobState, kSnapshotMeta));
  EXPECT_EQ(job.progress_kind, "snapshot");
  ASSERT_EQ(job.vnodes.size(), 4u);
  EXPECT_EQ(job.vnodes[0].state, VnodeInspection::State::kFinished);
  EXPECT_EQ(job.vnodes[1].state, VnodeInspection::State::kInProgress);
  EXPECT_EQ(job.vnodes[2].state, VnodeInspection::State::kFinished);
  EXPECT_EQ(job.vnodes[3].state, VnodeInspection::State::kFinished);
  EXPECT_EQ(job.vnodes_finished, 3u);
  EXPECT_EQ(job.snapshot_rows, 12u);
  EXPECT_EQ(job.progress_rows, 2u);
  EXPECT_GT(job.snapshot_percent, 0);
  EXPECT_LT(job.snapshot_percent, 100);
  ASSERT_EQ(job.snapshot_actors.size(), 2u);
  EXPECT_EQ(job.snapshot_actors[0].phase, "snapshot");
  EXPECT_EQ(job.snapshot_actors[0].vnodes_read, 1u);
  EXPECT_EQ(job.snapshot_actors[0].log_bytes, 100u);
  EXPECT_EQ(job.snapshot_actors[1].phase, "replay");
  EXPECT_EQ(job.snapshot_actors[1].vnodes_read, 2u);
  EXPECT_EQ(job.epoch_pins.at("snapshot_backfill/table 6/actor 1"), 1u);

  const std::string text = FormatInspection(job, false);
  EXPECT_THAT(text, HasSubstr("snapshot actor  1: snapshot at epoch 1, 1 of 2 "
                              "vnodes read, 7 rows sent, 100 log bytes"));
  EXPECT_THAT(text, HasSubstr("epoch pin       snapshot_backfill/table 6/"
                              "actor 1 at epoch 1"));
  EXPECT_THAT(text, HasSubstr("in progress     vnode 1\n"));
  EXPECT_THAT(FormatInspection(job, true),
              HasSubstr("  vnode 0: finished\n  vnode 1: in_progress\n"));
  const std::string json = InspectionJson(job, false);
  EXPECT_THAT(json, HasSubstr("\"progress_kind\":\"snapshot\""));
  EXPECT_THAT(json,
              HasSubstr("\"epoch_pins\":{\"snapshot_backfill/table 6/actor "
                        "1\":1}"));
  EXPECT_THAT(json, HasSubstr("\"snapshot_actors\":[{\"actor_id\":1,"
                              "\"phase\":\"snapshot\",\"snapshot_epoch\":1,"
                              "\"vnodes\":2,\"vnodes_read\":1,"
                              "\"snapshot_rows\":7,\"log_bytes\":100}"));
  EXPECT_EQ(json.back(), '}');
}

TEST(InspectStoreTest, AStoreWithoutAJobReportsOnlyTheEpoch) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job,
                                InspectStore(*store, kJobState));
  EXPECT_FALSE(job.job_found);
  EXPECT_EQ(job.committed_epoch, 0u);
  EXPECT_THAT(FormatInspection(job, false), HasSubstr("none saved"));
  EXPECT_THAT(
      InspectionJson(job, false),
      HasSubstr(
          "\"job_found\":false,\"progress_kind\":\"none\",\"vnode_count\":0,"));
}

TEST(InspectStoreTest, ACorruptProgressRowIsDataLoss) {
  auto store = NewMemoryStateStore();
  const JobDefinition definition = Definition();
  const EpochPair first{Epoch(1), Epoch(0)};
  const EpochPair next{Epoch(2), Epoch(1)};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto job,
                                SaveJob(*store, kJobState, definition));
  // A negative row count: the bytes decode, the progress does not.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto progress, StateTable::Create(BackfillProgressCatalog(
                                            definition.upstream, kProgress),
                                        *store, VnodeBitmap::All(4)));
  BACKFILL_ASSERT_OK(progress->InitEpoch(first));
  BACKFILL_ASSERT_OK(
      progress->Insert(Row{int16_t{2}, int64_t{7}, false, int64_t{-1}}));
  BACKFILL_ASSERT_OK(progress->Commit(next));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  EXPECT_THAT(
      InspectStore(*store, kJobState),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("progress table 3")));
}

// Every file under `dir` with its bytes.
std::map<std::string, std::string> DirectoryBytes(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[entry.path().lexically_relative(dir).string()] = bytes.str();
  }
  return files;
}

// A real job run to completion in a RocksDB directory, then flushed into
// table files (so that there is one to corrupt).
JobResult RunSmallJob(const std::string& dir) {
  RocksDbStateStoreOptions store_options;
  store_options.path = dir;
  auto store = RocksDbStateStore::Open(store_options);
  EXPECT_TRUE(store.ok()) << store.status();
  StreamingJobOptions options;
  options.upstream = Upstream(16);
  options.initial_rows = 2000;
  options.workload.ops_per_second = 500;
  options.workload.key_space = 4000;
  options.parallelism = 2;
  options.chunk_size = 64;
  options.barrier_interval = absl::Milliseconds(20);
  options.extra_checkpoints_after_finish = 2;
  options.max_duration = absl::Seconds(60);
  options.view_table_id = kView;
  options.progress_table_id = kProgress;
  options.source_offset_table_id = kSourceOffsetTableId;
  options.job_state_table_id = kJobStateTableId;
  absl::StatusOr<JobResult> result =
      RunStreamingJob(**store, options, nullptr, {}, Clock::Real());
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE((*store)->Compact().ok());
  return result.ok() ? *result : JobResult{};
}

TEST(InspectDataDirectoryTest, AFinishedJobAndNotAByteWritten) {
  const std::string dir = NewTestDirectory();
  const JobResult result = RunSmallJob(dir);
  ASSERT_TRUE(result.consistent);
  const auto before = DirectoryBytes(dir);
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job, InspectDataDirectory(dir));
  EXPECT_EQ(DirectoryBytes(dir), before);
  EXPECT_EQ(job.data_dir, dir);
  EXPECT_GT(job.committed_epoch, 0u);
  ASSERT_TRUE(job.job_found);
  EXPECT_EQ(job.vnodes_finished, 16u);
  EXPECT_EQ(job.vnodes_in_progress + job.vnodes_not_started, 0u);
  EXPECT_EQ(job.upstream_rows, result.upstream_rows);
  EXPECT_EQ(job.view_rows, result.view_rows);
  EXPECT_EQ(job.snapshot_rows, result.snapshot_rows);
  EXPECT_EQ(job.snapshot_percent, 100);
  EXPECT_EQ(job.estimated_snapshot_rows, job.snapshot_rows);
  EXPECT_THAT(FormatInspection(job, false),
              HasSubstr(absl::StrCat("snapshot        100.0% read (",
                                     job.snapshot_rows, " of ~")));
  EXPECT_EQ(job.job.state.parallelism, 2u);
  EXPECT_FALSE(job.job.state.paused);
  EXPECT_GT(job.job.state.epochs_since_creation, 0u);
  EXPECT_EQ(job.job.definition.upstream.name, "orders");
}

// The snapshot share comes from the upstream's exact committed rows per
// vnode, not from RocksDB's approximate vnode sizes: those of rows still in
// the write-ahead log (replayed into a memtable of random skiplist heights
// at every open) differ from one open to the next, and so did the share
// printed for the same directory.
TEST(InspectDataDirectoryTest, TheSnapshotShareIsTheSameAtEveryOpen) {
  constexpr int kVnodes = 16;
  constexpr int64_t kRows = 6000;
  const std::string dir = NewTestDirectory();
  std::vector<uint64_t> vnode_rows;
  {
    RocksDbStateStoreOptions options;
    options.path = dir;
    // Nothing flushed: every row stays in the write-ahead log.
    options.write_buffer_bytes = 64 << 20;
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    JobDefinition definition = Definition();
    definition.upstream = Upstream(kVnodes);
    definition.view = Upstream(kVnodes);
    definition.view.table_id = kView;
    definition.view.name = "orders_view";
    const EpochPair first{Epoch(1), Epoch(0)};
    const EpochPair next{Epoch(2), Epoch(1)};
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto job, SaveJob(*store, kJobStateTableId, definition));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto upstream, StateTable::Create(definition.upstream, *store,
                                          VnodeBitmap::All(kVnodes)));
    BACKFILL_ASSERT_OK(upstream->InitEpoch(first));
    for (int64_t id = 0; id < kRows; ++id) {
      BACKFILL_ASSERT_OK(upstream->Insert(Row{id, std::string(id % 97, 'n')}));
    }
    BACKFILL_ASSERT_OK(upstream->Commit(next));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    // Their writers go: the next checkpoint is the progress table's alone.
    job.reset();
    upstream.reset();
    vnode_rows = RowsPerVnode(*store, kUpstream, kVnodes);
    ASSERT_GT(vnode_rows[0], 4u);
    ASSERT_GT(vnode_rows[1], 4u);
    // Vnode 0 read whole, vnode 1 half-way, the rest not started.
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto progress, StateTable::Create(BackfillProgressCatalog(
                                              definition.upstream, kProgress),
                                          *store, VnodeBitmap::All(kVnodes)));
    const EpochPair third{Epoch(3), Epoch(2)};
    BACKFILL_ASSERT_OK(progress->InitEpoch(next));
    BACKFILL_ASSERT_OK(
        progress->Insert(Row{int16_t{0}, int64_t{kRows}, true,
                             static_cast<int64_t>(vnode_rows[0])}));
    BACKFILL_ASSERT_OK(
        progress->Insert(Row{int16_t{1}, int64_t{kRows / 2}, false,
                             static_cast<int64_t>(vnode_rows[1] / 2)}));
    BACKFILL_ASSERT_OK(progress->Commit(third));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
    EXPECT_EQ(store->Stats().sst_files, 0u) << "the rows were flushed";
  }
  // The exact counts imply every unfinished vnode holds its committed rows
  // and the finished one what it read: the estimate is the table's rows.
  const uint64_t read = vnode_rows[0] + vnode_rows[1] / 2;
  const double percent = 100.0 * read / kRows;
  std::string first_text;
  for (int open = 0; open < 5; ++open) {
    SCOPED_TRACE(absl::StrCat("open ", open));
    BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job, InspectDataDirectory(dir));
    ASSERT_TRUE(job.job_found);
    // The whole report, not only the share, is the same at every open.
    if (open == 0) first_text = FormatInspection(job, /*list_vnodes=*/true);
    EXPECT_EQ(FormatInspection(job, /*list_vnodes=*/true), first_text);
    EXPECT_EQ(job.upstream_rows, static_cast<uint64_t>(kRows));
    EXPECT_EQ(job.snapshot_rows, read);
    EXPECT_EQ(job.estimated_snapshot_rows, static_cast<uint64_t>(kRows));
    EXPECT_DOUBLE_EQ(job.snapshot_percent, percent);
    EXPECT_THAT(FormatInspection(job, false),
                HasSubstr(absl::StrCat(
                    "snapshot        ", absl::StrFormat("%.1f%%", percent),
                    " read (", read, " of ~", kRows, " rows)\n")));
  }
}

// A bulk load cut short (the job's definition saved, some rows loaded, no
// completion marker) says so; once LoadInitialRows has finished it, it does
// not.
TEST(InspectDataDirectoryTest, AnIncompleteInitialLoadIsReported) {
  const std::string dir = NewTestDirectory();
  const JobDefinition definition = Definition();
  StreamingJobOptions load;
  load.upstream = definition.upstream;
  load.source_offset_table_id = definition.source_offset_table_id;
  load.initial_rows = 400;
  RocksDbStateStoreOptions options;
  options.path = dir;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    const EpochPair first{Epoch(1), Epoch(0)};
    const EpochPair next{Epoch(2), Epoch(1)};
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto job, SaveJob(*store, kJobStateTableId, definition));
    // The first 150 of the load's rows, as a killed load leaves them.
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto upstream,
        StateTable::Create(definition.upstream, *store, VnodeBitmap::All(4)));
    BACKFILL_ASSERT_OK(upstream->InitEpoch(first));
    for (uint64_t key = 0; key < 150; ++key) {
      BACKFILL_ASSERT_OK(
          upstream->Insert(WorkloadRow(load.upstream, load.workload.seed, key,
                                       0, load.workload.null_fraction)));
    }
    BACKFILL_ASSERT_OK(upstream->Commit(next));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    EXPECT_THAT(InitialLoadComplete(*store, definition.source_offset_table_id),
                ::backfill::testing::IsOkAndHolds(false));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(JobInspection job, InspectDataDirectory(dir));
  ASSERT_TRUE(job.job_found);
  EXPECT_FALSE(job.initial_load_complete);
  EXPECT_EQ(job.upstream_rows, 150u);
  EXPECT_THAT(FormatInspection(job, false),
              HasSubstr("live, 0 epochs since creation\n"
                        "initial load    incomplete: the upstream table has "
                        "150 rows so far; rerun the job to finish the load\n"));
  EXPECT_THAT(InspectionJson(job, false),
              HasSubstr("\"initial_load_complete\":false,"));

  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(bool loaded, LoadInitialRows(*store, load));
    EXPECT_TRUE(loaded);
    EXPECT_THAT(InitialLoadComplete(*store, definition.source_offset_table_id),
                ::backfill::testing::IsOkAndHolds(true));
    // The same notion: a rerun finds the load complete and loads nothing.
    BACKFILL_ASSERT_OK_AND_ASSIGN(loaded, LoadInitialRows(*store, load));
    EXPECT_FALSE(loaded);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(job, InspectDataDirectory(dir));
  EXPECT_TRUE(job.initial_load_complete);
  EXPECT_EQ(job.upstream_rows, 400u);
  EXPECT_THAT(FormatInspection(job, false),
              ::testing::Not(HasSubstr("initial load")));
  EXPECT_THAT(InspectionJson(job, false),
              HasSubstr("\"initial_load_complete\":true,"));
}

TEST(InspectDataDirectoryTest, AMissingDirectoryIsNotFound) {
  const std::string dir = NewTestDirectory();
  EXPECT_THAT(InspectDataDirectory(dir),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("no data directory at " + dir)));
  EXPECT_FALSE(std::filesystem::exists(dir));
  std::filesystem::create_directories(dir);
  EXPECT_THAT(
      InspectDataDirectory(dir),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("no state store there")));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::ofstream(dir + "/file") << "x";
  EXPECT_THAT(InspectDataDirectory(dir + "/file"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not a directory")));
}

TEST(InspectDataDirectoryTest, ACorruptTableFileIsDataLossNamingIt) {
  const std::string dir = NewTestDirectory();
  RunSmallJob(dir);
  std::string sst;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst" && entry.file_size() > 4096) {
      sst = entry.path().string();
    }
  }
  ASSERT_FALSE(sst.empty()) << "no table file in " << dir;
  {
    std::fstream file(sst, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  EXPECT_THAT(
      InspectDataDirectory(dir),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr(std::filesystem::path(sst).filename().string())));
}

}  // namespace
}  // namespace backfill
