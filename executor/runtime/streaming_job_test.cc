#include "executor/runtime/streaming_job.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/threaded_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TableCatalog Table(int vnode_count) {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"customer", DataType::kVarchar, 2, true},
                     {"price", DataType::kFloat64, 3, true},
                     {"amount", DataType::kDecimal, 4, true},
                     {"at", DataType::kTimestamp, 5, true},
                     {"qty", DataType::kInt32, 6, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = vnode_count;
  catalog.value_indices = {0, 1, 2, 3, 4, 5};
  catalog.value_encoding = ValueEncoding::kColumnAware;
  return catalog;
}

StreamingJobOptions SmallJob() {
  StreamingJobOptions options;
  options.upstream = Table(16);
  options.initial_rows = 3000;
  options.workload.ops_per_second = 4000;
  options.workload.update_primary_key = true;
  options.workload.null_fraction = 0.1;
  options.workload.key_space = 6000;
  options.workload.seed = 7;
  options.parallelism = 3;
  options.chunk_size = 64;
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.extra_checkpoints_after_finish = 3;
  options.max_duration = absl::Seconds(120);
  return options;
}

TEST(StreamingJobTest, ViewEqualsTableInMemory) {
  auto store = NewMemoryStateStore();
  Registry registry;
  int observations = 0;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, SmallJob(), &registry,
                      [&](const JobProgress&) { ++observations; }, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_GT(result.upstream_rows, 0u);
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_GE(result.snapshot_rows, 1u);
  EXPECT_GT(observations, 0);
  EXPECT_FALSE(result.resumed);
  EXPECT_EQ(result.recoveries, 0u);  // no fault injected: nothing to recover
}

// StreamingJobOptions::upstream_buffer_budget_bytes reaches the backfill
// actors: at 0 they never buffer an upstream chunk (every epoch with changes
// freezes the snapshot position), and the view still equals the table; the
// default buffers.
TEST(StreamingJobTest, UpstreamBufferBudgetReachesTheActors) {
  for (const uint64_t budget : {uint64_t{0}, kDefaultUpstreamBufferBudgetBytes}) {
    auto store = NewMemoryStateStore();
    StreamingJobOptions options = SmallJob();
    // Enough rows that the backfill lasts several epochs on a fast machine
    // (with SmallJob's 3,000 it could end before the first upstream chunk
    // arrived, and nothing was buffered).
    options.initial_rows = 30'000;
    options.workload.key_space = 60'000;
    options.upstream_buffer_budget_bytes = budget;
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result,
        RunStreamingJob(*store, options, nullptr, nullptr, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_EQ(result.recoveries, 0u);
    if (budget == 0) {
      EXPECT_EQ(result.peak_buffer_bytes, 0u);
    } else {
      EXPECT_GT(result.peak_buffer_bytes, 0u);
    }
  }
}

// StreamingJobOptions::view_op_consistency reaches the view: every 3rd
// chunk a backfill actor outputs arrives twice (a defect planted for
// tests). The checked view fails at the duplicated insert (a snapshot
// chunk) or delete (upstream changes released early); the unchecked
// one writes it again (the same rows, so the view still equals the table)
// and the job succeeds.
TEST(StreamingJobTest, ViewOpConsistencyChecksOrWritesBlind) {
  for (const OpConsistency mode :
       {OpConsistency::kConsistentOldValue, OpConsistency::kInconsistent}) {
    SCOPED_TRACE(mode == OpConsistency::kInconsistent ? "unchecked" : "checked");
    auto store = NewMemoryStateStore();
    StreamingJobOptions options = SmallJob();
    options.view_op_consistency = mode;
    options.sabotage_for_test.duplicate_every_nth_output_chunk = 3;
    options.max_recoveries = 0;
    absl::StatusOr<JobResult> result =
        RunStreamingJob(*store, options, nullptr, nullptr, Clock::Real());
    if (mode == OpConsistency::kConsistentOldValue) {
      EXPECT_THAT(result.status(),
                  StatusIs(absl::StatusCode::kFailedPrecondition,
                           HasSubstr("inconsistent ")))
          << result.status();
    } else {
      BACKFILL_ASSERT_OK(result.status());
      EXPECT_TRUE(result->consistent) << result->mismatch;
      EXPECT_EQ(result->recoveries, 0u);
    }
  }
}

// An online rescale (CONTRACT §9): 2 -> 3 -> 1 backfill actors while the
// backfill runs and the upstream keeps writing, at checkpoint barriers,
// without a recovery; the view ends equal to the table, the parallelism is
// job state (committed, kept by a restart). (The upstream's blocked time
// around a rescale is measured in hash_dispatcher_test.)
TEST(StreamingJobTest, RescalesOnlineTwoThreeOneWithoutARecovery) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.parallelism = 2;
  // Slow enough that both rescales land inside the backfill.
  options.rate_limit = RateLimit::Fixed(10000);
  options.actions = {{3, JobAction::Kind::kRescale, 0, 3},
                     {8, JobAction::Kind::kRescale, 0, 1}};
  Registry registry;
  uint64_t last_rows = 0;
  bool monotone = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, options, &registry,
                      [&](const JobProgress& progress) {
                        monotone &= progress.snapshot_rows >= last_rows;
                        last_rows = progress.snapshot_rows;
                      },
                      Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_FALSE(result.resumed);
  EXPECT_EQ(result.rescales, 2u);
  EXPECT_EQ(result.parallelism, 1u);
  EXPECT_EQ(result.job_state.parallelism, 1u);
  EXPECT_GE(result.snapshot_rows, options.initial_rows);
  EXPECT_TRUE(monotone);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::optional<SavedJob> saved,
      ReadCommittedJob(*store, options.job_state_table_id));
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->state.parallelism, 1u);
  // A restart keeps the committed parallelism; the rescales do not fire
  // again.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult again, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(again.consistent) << again.mismatch;
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.recoveries, 0u);
  EXPECT_EQ(again.rescales, 0u);
  EXPECT_EQ(again.parallelism, 1u);
}

// A rescale at a barrier that is not a checkpoint waits for the next
// checkpoint barrier (in memory: the same runtime over the reference store).
TEST(StreamingJobTest, RescalesAtTheNextCheckpointBarrier) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.rate_limit = RateLimit::Fixed(10000);
  options.checkpoint_frequency = 3;
  options.actions = {{4, JobAction::Kind::kRescale, 0, 5}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_EQ(result.rescales, 1u);
  EXPECT_EQ(result.parallelism, 5u);
  EXPECT_EQ(result.job_state.parallelism, 5u);
}

TEST(StreamingJobTest, ViewEqualsTableOnRocksDbWithActionsAndResume) {
  RocksDbStateStoreOptions store_options;
  store_options.path = std::string(std::getenv("TEST_TMPDIR")) + "/job";
  std::filesystem::remove_all(store_options.path);
  StreamingJobOptions options = SmallJob();
  options.output_columns = {1, 3, 5};  // drops the pk column
  options.rate_limit = RateLimit::Fixed(20000);
  options.actions = {{3, JobAction::Kind::kPause, 0},
                     {6, JobAction::Kind::kResume, 0},
                     {8, JobAction::Kind::kSetRateLimit, 50000}};
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_EQ(result.recoveries, 0u);
    EXPECT_EQ(result.parallelism, 3u);
  }
  // A second run of the finished job, at another parallelism given
  // explicitly, keeps the view in sync.
  options.overrides.parallelism = 2;
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_TRUE(result.resumed);
    EXPECT_EQ(result.recoveries, 0u);
    EXPECT_EQ(result.parallelism, 2u);
    EXPECT_EQ(result.job_state.parallelism, 2u);
  }
  // A third run without the override: the saved parallelism (2) wins over
  // the options' initial one.
  options.overrides = {};
  options.parallelism = 1;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_EQ(result.parallelism, 2u);
}

// Defect 1 of issue 14: pause at 3, then resume and set a rate limit at 20.
// Before, only the last action of an epoch was delivered: the Throttle
// replaced the Resume and the job stayed paused until its deadline.
TEST(StreamingJobTest, ResumeAndRateLimitAtOneEpochBothApply) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.rate_limit = RateLimit::Fixed(500);
  options.actions = {{3, JobAction::Kind::kPause, 0},
                     {20, JobAction::Kind::kResume, 0},
                     {20, JobAction::Kind::kSetRateLimit, 20000}};
  options.max_duration = absl::Seconds(30);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_FALSE(result.job_state.paused);
  EXPECT_EQ(result.job_state.rate_limit, RateLimit::Fixed(20000));
  EXPECT_GE(result.job_state.epochs_since_creation, 20u);
}

// A rate limit lifted online, then the process dies (here: the job's
// deadline ends the first run mid-backfill; the e2e tests kill -9 the
// command) and restarts with the same options: the saved rate wins over the
// options' initial one. Before, the restart crawled at the initial rate.
// Then an explicit rate limit at a restart wins over the saved one, and the
// epoch-2 action does not fire again (the epochs since creation are saved).
TEST(StreamingJobTest, RateLimitChangedOnlineSurvivesARestart) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.rate_limit = RateLimit::Fixed(100);  // 3000 rows: 30 s
  options.actions = {{2, JobAction::Kind::kSetRateLimit, 1500}};  // 2 s
  // Ends the first run mid-backfill (3000 rows take at least 2 s), well
  // after the lift's checkpoint.
  options.max_duration = absl::Milliseconds(1500);
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  options.max_duration = absl::Seconds(15);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult restarted, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(restarted.consistent) << restarted.mismatch;
  EXPECT_TRUE(restarted.resumed);
  EXPECT_EQ(restarted.recoveries, 0u);
  EXPECT_EQ(restarted.job_state.rate_limit, RateLimit::Fixed(1500));
  const uint64_t epochs = restarted.job_state.epochs_since_creation;
  EXPECT_GT(epochs, restarted.epochs);  // counted on from the first run

  options.overrides.rate_limit = RateLimit::Fixed(3000);
  options.overrides.parallelism = 1;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult again, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(again.consistent) << again.mismatch;
  EXPECT_EQ(again.recoveries, 0u);
  EXPECT_EQ(again.job_state.rate_limit, RateLimit::Fixed(3000));
  EXPECT_EQ(again.job_state.parallelism, 1u);
  EXPECT_EQ(again.parallelism, 1u);
  EXPECT_GT(again.job_state.epochs_since_creation, epochs);
}

// Defect 6 of issue 14: another job on the same store is FailedPrecondition
// naming the first difference, not DataLoss, and nothing is written.
TEST(StreamingJobTest, AnotherJobsStoreIsFailedPreconditionNamingTheDifference) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult first, RunStreamingJob(*store, SmallJob(), nullptr, {}, Clock::Real()));
  EXPECT_TRUE(first.consistent) << first.mismatch;
  EXPECT_EQ(first.recoveries, 0u);
  const Epoch committed = store->CommittedEpoch(1);
  StreamingJobOptions other = SmallJob();
  other.upstream.columns[1].type = DataType::kInt32;
  EXPECT_THAT(RunStreamingJob(*store, other, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("upstream table column 1"),
                             HasSubstr("`customer VARCHAR` (id 2) in the data directory"),
                             HasSubstr("`customer INT32` (id 2) in this job"),
                             HasSubstr("--data_dir"))));
  other = SmallJob();
  other.output_columns = {0, 2};
  EXPECT_THAT(RunStreamingJob(*store, other, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("view table column 1: `customer VARCHAR`"),
                             HasSubstr("`price FLOAT64` (id 2) in this job"))));
  EXPECT_EQ(store->CommittedEpoch(1), committed);
  // The job itself still runs on it.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult again, RunStreamingJob(*store, SmallJob(), nullptr, {}, Clock::Real()));
  EXPECT_TRUE(again.consistent) << again.mismatch;
  EXPECT_EQ(again.recoveries, 0u);
}

TEST(StreamingJobTest, RejectsBadOptions) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.parallelism = 17;
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = SmallJob();
  options.output_columns = {9};
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = SmallJob();
  options.actions = {{4, JobAction::Kind::kPause, 0},
                     {4, JobAction::Kind::kSetRateLimit, 10},
                     {4, JobAction::Kind::kResume, 0}};
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("actions[0] (pause at epoch 4)"),
                             HasSubstr("actions[2] (resume at epoch 4)"))));
  options = SmallJob();
  options.overrides.parallelism = 17;
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  options = SmallJob();
  options.job_state_table_id = options.progress_table_id;
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("used twice")));
  EXPECT_EQ(store->CommittedEpoch(1), Epoch(0));  // nothing was written
}

// Fails operations `op` on files containing `file` from the (after+1)-th on,
// `count` times (0 = for ever).
class CountingFaults final : public FaultInjector {
 public:
  CountingFaults(Operation op, std::string file, int after, int count)
      : op_(op), file_(std::move(file)), after_(after), count_(count) {}
  absl::Status Check(Operation op, absl::string_view file) override {
    MutexLock lock(&mu_);
    if (!armed_ || op != op_ || file.find(file_) == absl::string_view::npos) {
      return absl::OkStatus();
    }
    if (seen_++ < after_ || (count_ > 0 && fired_ >= count_)) return absl::OkStatus();
    ++fired_;
    return absl::InternalError(absl::StrCat("test fault on ", std::string(file)));
  }
  void Arm() {
    MutexLock lock(&mu_);
    armed_ = true;
  }
  int fired() {
    MutexLock lock(&mu_);
    return fired_;
  }

 private:
  const Operation op_;
  const std::string file_;
  const int after_;
  const int count_;
  Mutex mu_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  int seen_ ABSL_GUARDED_BY(mu_) = 0;
  int fired_ ABSL_GUARDED_BY(mu_) = 0;
};

// A RocksDB store the job can reopen after an error, as //tools:backfill
// does.
struct ReopenableStore {
  RocksDbStateStoreOptions options;
  std::unique_ptr<RocksDbStateStore> store;
  int reopens = 0;

  void Hook(StreamingJobOptions& job, std::vector<std::string>* errors) {
    job.reopen_store = [this]() -> absl::StatusOr<StateStore*> {
      ++reopens;
      store.reset();
      absl::StatusOr<std::unique_ptr<RocksDbStateStore>> reopened =
          RocksDbStateStore::Open(options);
      if (!reopened.ok()) return reopened.status();
      store = *std::move(reopened);
      return static_cast<StateStore*>(store.get());
    };
    // The final check reads with the independent reader of the store in use.
    job.committed_rows = [this](const TableCatalog& catalog, Epoch epoch) {
      return store->NewRawCommittedRowIterator(catalog, epoch);
    };
    job.on_recovery = [errors](const absl::Status& error, uint32_t) {
      errors->push_back(error.ToString());
    };
  }
};

RocksDbStateStoreOptions FaultStoreOptions(const std::string& name) {
  RocksDbStateStoreOptions options;
  options.path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  options.block_cache_bytes = 0;  // Reads reach the files.
  std::filesystem::remove_all(options.path);
  return options;
}

struct StorageFaultCase {
  const char* name;
  FaultInjector::Operation op;
  const char* file;
  int after;
  int count;
  const char* message;  // What the logged error says.
};

class StreamingJobStorageFaultTest
    : public ::testing::TestWithParam<StorageFaultCase> {};

// A failed write or sync leaves RocksDB refusing writes (and the store
// refusing checkpoints) until reopened: the job recovers by reopening the
// store, resumes from the last checkpoint and the view still equals the
// table. Reads fail inside an actor (on files from an earlier run).
TEST_P(StreamingJobStorageFaultTest, RecoversByReopeningTheStore) {
  const StorageFaultCase& fault = GetParam();
  ReopenableStore reopenable;
  reopenable.options = FaultStoreOptions(fault.name);
  StreamingJobOptions options = SmallJob();
  options.rate_limit = RateLimit::Fixed(6000);  // ~25 checkpoints
  if (fault.op == FaultInjector::Operation::kRead) {
    // Table files to read: a first run, closed (reopening flushes the log).
    {
      BACKFILL_ASSERT_OK_AND_ASSIGN(auto store,
                                    RocksDbStateStore::Open(reopenable.options));
      BACKFILL_ASSERT_OK_AND_ASSIGN(
          JobResult first, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
      EXPECT_EQ(first.recoveries, 0u);  // No fault injected yet.
    }
    { BACKFILL_ASSERT_OK(RocksDbStateStore::Open(reopenable.options).status()); }
  }
  auto injector = std::make_shared<CountingFaults>(fault.op, fault.file,
                                                   fault.after, fault.count);
  reopenable.options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(reopenable.store,
                                RocksDbStateStore::Open(reopenable.options));
  injector->Arm();
  std::vector<std::string> errors;
  reopenable.Hook(options, &errors);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*reopenable.store, options, nullptr, {}, Clock::Real()));
  EXPECT_GT(injector->fired(), 0);
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_GE(result.recoveries, 1u);
  EXPECT_EQ(result.recoveries, errors.size());
  EXPECT_GE(reopenable.reopens, 1);
  ASSERT_FALSE(errors.empty());
  EXPECT_THAT(errors[0], AllOf(HasSubstr("test fault on"), HasSubstr(fault.message)));
}

INSTANTIATE_TEST_SUITE_P(
    Faults, StreamingJobStorageFaultTest,
    ::testing::Values(
        StorageFaultCase{"WalWrite", FaultInjector::Operation::kWrite, ".log", 3, 1,
                         "checkpoint write"},
        StorageFaultCase{"WalSync", FaultInjector::Operation::kSync, ".log", 3, 1,
                         "checkpoint write"},
        StorageFaultCase{"WalWriteTwice", FaultInjector::Operation::kWrite, ".log", 3,
                         2, "checkpoint write"}),
    [](const ::testing::TestParamInfo<StorageFaultCase>& info) {
      return std::string(info.param.name);
    });

TEST(StreamingJobTest, PersistentStorageFaultFailsInBoundedTimeNamingTheOperation) {
  ReopenableStore reopenable;
  reopenable.options = FaultStoreOptions("persistent");
  auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kSync,
                                                   "", 3, /*count=*/0);
  reopenable.options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(reopenable.store,
                                RocksDbStateStore::Open(reopenable.options));
  injector->Arm();
  StreamingJobOptions options = SmallJob();
  std::vector<std::string> errors;
  reopenable.Hook(options, &errors);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(RunStreamingJob(*reopenable.store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kInternal,
                       AllOf(HasSubstr("test fault on"),
                             HasSubstr("giving up after 3 recoveries"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(errors.size(), 3u);
}

TEST(StreamingJobTest, WithoutReopenAFailedCheckpointWriteGivesUp) {
  RocksDbStateStoreOptions store_options = FaultStoreOptions("no_reopen");
  auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kWrite,
                                                   ".log", 3, 1);
  store_options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
  injector->Arm();
  StreamingJobOptions options = SmallJob();
  options.recovery_backoff = absl::Milliseconds(1);
  // The store refuses checkpoints after the failed write ("reopen the
  // store"): every recovery fails the same way.
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("reopen the store"),
                             HasSubstr("giving up after 3 recoveries"))));
}

TEST(StreamingJobTest, ReopenedStoreThatLostCheckpointsIsDataLoss) {
  RocksDbStateStoreOptions store_options = FaultStoreOptions("lost");
  auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kSync,
                                                   ".log", 2, 1);
  store_options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(store_options));
  injector->Arm();
  std::unique_ptr<StateStore> replacement;
  StreamingJobOptions options = SmallJob();
  options.reopen_store = [&]() -> absl::StatusOr<StateStore*> {
    store.reset();
    replacement = NewMemoryStateStore();  // Nothing committed survived.
    return replacement.get();
  };
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("lost acknowledged checkpoints")));
}

// A read fails inside whichever actor (or the bulk load, or the final
// check) reaches the faulty block first; the job recovers, and the graph
// tears down although upstream actors may be blocked sending to the failed
// one (each failed actor drops its input once checkpoints stopped).
TEST(StreamingJobTest, ReadFaultsAnywhereRecover) {
  RocksDbStateStoreOptions base = FaultStoreOptions("read_base");
  StreamingJobOptions options = SmallJob();
  // Tiny channels and long barrier intervals: after an actor fails, its
  // upstream soon blocks on a full channel to it.
  options.channel_capacity = 1;
  options.barrier_interval = absl::Milliseconds(50);
  options.checkpoint_frequency = 1;
  {
    // Table files to read: a finished job, closed, reopened (which flushes
    // the log into table files).
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, RocksDbStateStore::Open(base));
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_EQ(result.recoveries, 0u);  // No fault injected yet.
  }
  { BACKFILL_ASSERT_OK(RocksDbStateStore::Open(base).status()); }
  int recovered = 0;
  for (int after : {0, 10, 30, 80, 160}) {
    SCOPED_TRACE(absl::StrCat("read fault after ", after, " reads"));
    ReopenableStore reopenable;
    reopenable.options = FaultStoreOptions(absl::StrCat("read_", after));
    std::filesystem::copy(base.path, reopenable.options.path);
    auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kRead,
                                                     ".sst", after, 1);
    reopenable.options.fault_injector = injector;
    BACKFILL_ASSERT_OK_AND_ASSIGN(reopenable.store,
                                  RocksDbStateStore::Open(reopenable.options));
    injector->Arm();
    StreamingJobOptions job = options;
    std::vector<std::string> errors;
    reopenable.Hook(job, &errors);
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        JobResult result,
        RunStreamingJob(*reopenable.store, job, nullptr, {}, Clock::Real()));
    EXPECT_TRUE(result.consistent) << result.mismatch;
    EXPECT_EQ(result.recoveries, static_cast<uint32_t>(injector->fired()));
    if (!errors.empty()) {
      ++recovered;
      EXPECT_THAT(errors[0], AllOf(HasSubstr("test fault on"), HasSubstr(".sst")));
    }
  }
  EXPECT_GE(recovered, 3);
}

// The snapshot rate is the backfill's: rows ÷ the time until the backfill
// finished, not ÷ the whole run, which goes on for the finish barrier and
// the extra checkpoints (here 50 of them, every 2nd of 10 ms barriers: about
// a second; the barriers are injected up to a few percent early). Dividing by
// the run's time printed a third of the rate the progress line had shown for a
// short backfill.
TEST(StreamingJobTest, SnapshotRateDividesByTheBackfillsOwnTime) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.extra_checkpoints_after_finish = 50;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  ASSERT_TRUE(result.backfill_seconds.has_value());
  EXPECT_GT(*result.backfill_seconds, 0);
  EXPECT_LT(*result.backfill_seconds + 0.5, result.seconds);
  ASSERT_GT(result.snapshot_rows_this_run, 0u);
  EXPECT_DOUBLE_EQ(result.snapshot_rows_per_second,
                   static_cast<double>(result.snapshot_rows_this_run) /
                       *result.backfill_seconds);
  // The barriers while it read, which the backfill latencies are over: not
  // the 50 after it.
  EXPECT_GT(result.backfill_barriers, 0u);
  EXPECT_LE(result.backfill_barriers + 50, result.epochs);
  EXPECT_GT(result.backfill_barrier_latency_p99_ms, 0);

  // A second run of the finished job reads nothing: 0 rows/s, and its
  // backfill is done from its first barrier on.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult again,
      RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.snapshot_rows_this_run, 0u);
  EXPECT_EQ(again.snapshot_rows_per_second, 0);
  ASSERT_TRUE(again.backfill_seconds.has_value());
  EXPECT_LT(*again.backfill_seconds, again.seconds);
  // Only the barrier at which its actors found themselves done.
  EXPECT_EQ(again.backfill_barriers, 1u);
}

// Defect 2 of issue 14: a job started at a low rate whose limit is lifted
// online, then one transient WAL-sync fault recovered in-process: the rebuilt
// actors keep the lifted rate. Before, they crawled at the initial rate and
// the job missed its deadline.
TEST(StreamingJobTest, RateLimitLiftedOnlineSurvivesAnInProcessRecovery) {
  ReopenableStore reopenable;
  reopenable.options = FaultStoreOptions("lifted_rate");
  // Syncs of the log: the job's definition, the bulk load, then one per
  // checkpoint: the 6th is the 4th checkpoint of the backfill, after the
  // one that persisted the lift (epoch 2) and long before the end.
  auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kSync,
                                                   ".log", 5, 1);
  reopenable.options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(reopenable.store,
                                RocksDbStateStore::Open(reopenable.options));
  injector->Arm();
  StreamingJobOptions options = SmallJob();
  options.rate_limit = RateLimit::Fixed(100);  // 3000 rows: 30 s
  options.actions = {{2, JobAction::Kind::kSetRateLimit, 1500}};  // 2 s
  options.max_duration = absl::Seconds(15);
  std::vector<std::string> errors;
  reopenable.Hook(options, &errors);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*reopenable.store, options, nullptr, {}, Clock::Real()));
  EXPECT_EQ(injector->fired(), 1);
  EXPECT_EQ(result.recoveries, 1u);
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.job_state.rate_limit, RateLimit::Fixed(1500));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("test fault on"));
  // The run created the job: every snapshot row is this run's, those the
  // attempt before the recovery read included (only the last attempt's
  // were counted, which the cluster command printed as "0 snapshot rows/s"
  // once a recovery came after the snapshot had ended).
  EXPECT_GT(result.snapshot_rows, 0u);
  EXPECT_EQ(result.snapshot_rows_this_run, result.snapshot_rows);
}

// Adaptive mode across a restart: the first run (capped at 1000 rows/s by a
// fixed limit, so its deadline ends it mid-backfill) persists the mode and
// the controller's rate; the restart resumes at that saved rate (no second
// slow start) with the cap lifted explicitly, and finishes consistent.
TEST(StreamingJobTest, AdaptiveModeAndRateSurviveARestart) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.adaptive_target_barrier_latency = absl::Milliseconds(200);
  options.adaptive_min_rows_per_second = 100;
  options.rate_limit = RateLimit::Fixed(1000);  // 3000 rows: >= 3 s
  options.max_duration = absl::Milliseconds(1500);
  EXPECT_THAT(RunStreamingJob(*store, options, nullptr, {}, Clock::Real()),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> saved,
                                ReadCommittedJob(*store, options.job_state_table_id));
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->state.adaptive_target, absl::Milliseconds(200));
  const uint32_t saved_rate = saved->state.adaptive_rows_per_second;
  EXPECT_GE(saved_rate, 100u);
  EXPECT_LE(saved_rate, 1000u);

  // The restart's options say nothing about the mode: the saved one rules.
  options.adaptive_target_barrier_latency = absl::ZeroDuration();
  options.overrides.rate_limit = RateLimit::Disabled();  // lifts the cap
  options.max_duration = absl::Seconds(30);
  std::vector<RateLimit> rates;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult restarted,
      RunStreamingJob(*store, options, nullptr,
                      [&](const JobProgress& progress) {
                        rates.push_back(progress.rate_limit);
                      },
                      Clock::Real()));
  EXPECT_TRUE(restarted.consistent) << restarted.mismatch;
  EXPECT_TRUE(restarted.resumed);
  EXPECT_TRUE(restarted.job_state.adaptive());
  EXPECT_EQ(restarted.job_state.adaptive_target, absl::Milliseconds(200));
  EXPECT_EQ(restarted.job_state.rate_limit, RateLimit::Disabled());
  ASSERT_FALSE(rates.empty());
  EXPECT_EQ(rates.front(), RateLimit::Fixed(saved_rate));

  // An explicit fixed rate leaves adaptive mode.
  options.overrides.adaptive_target = absl::ZeroDuration();
  options.overrides.rate_limit = RateLimit::Fixed(5000);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult fixed, RunStreamingJob(*store, options, nullptr, {}, Clock::Real()));
  EXPECT_TRUE(fixed.consistent) << fixed.mismatch;
  EXPECT_FALSE(fixed.job_state.adaptive());
  EXPECT_EQ(fixed.job_state.EffectiveRateLimit(), RateLimit::Fixed(5000));
}

// Adaptive mode across an in-process recovery (one failed WAL sync): the
// rebuilt actors read at a controller rate again, not at the options' plain
// limit (Disabled here), and the mode is still in force at the end.
// A reschedule ends the attempt at its next checkpoint barrier with every
// actor stopped and everything it did committed: the next attempt starts
// from that checkpoint (nothing redone), at once, and no recovery happens.
// Each backfill kind (its per-vnode or per-actor positions, a snapshot
// backfill's log) goes on from the checkpoint of the reschedule's stop.
class RescheduleTest : public ::testing::TestWithParam<BackfillKind> {};

TEST_P(RescheduleTest, EndsTheAttemptAtACheckpointAndRedoesNothing) {
  auto store = NewMemoryStateStore();
  StreamingJobOptions options = SmallJob();
  options.backfill_kind = GetParam();
  // Slow enough (1.5 s for the table) that both reschedules land inside
  // the backfill, also on a loaded machine.
  options.rate_limit = RateLimit::Fixed(2000);
  options.checkpoint_frequency = 3;
  int recoveries_seen = 0;
  options.on_recovery = [&](const absl::Status& error, uint32_t) {
    ++recoveries_seen;
    ADD_FAILURE() << "unexpected recovery: " << error;
  };
  std::vector<std::string> reasons;
  options.on_reschedule = [&](const std::string& reason) {
    reasons.push_back(reason);
  };
  struct AttemptSeen {
    Epoch committed_at_start;
    EpochPair first;
    EpochPair last;
    uint64_t rows_at_end = 0;
    bool rescheduled = false;
  };
  std::vector<AttemptSeen> attempts;
  const TableId upstream = options.upstream.table_id;
  auto driver = [&](JobGraph& graph, BarrierCoordinator& coordinator) {
    AttemptSeen seen;
    seen.committed_at_start = store->CommittedEpoch(upstream);
    seen.first = coordinator.epoch();
    // The first two attempts are asked to end once their backfill went past
    // where the attempt before ended (from another thread, as a placement
    // would): they stop at the next checkpoint barrier.
    std::atomic<bool> ended{false};
    std::thread requester;
    if (attempts.size() < 2) {
      const uint64_t past = attempts.empty() ? 0 : attempts.back().rows_at_end;
      const JobProgressTracker* tracker = graph.in_force().tracker.get();
      const std::string reason = absl::StrCat("test ", attempts.size());
      requester = std::thread([&ended, &coordinator, tracker, past, reason] {
        while (!ended.load() && tracker->consumed_rows() <= past) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        coordinator.RequestReschedule(reason);
        coordinator.RequestReschedule("a second request adds nothing");
      });
    }
    const absl::Status status = RunThreaded(
        graph, coordinator, options.barrier_interval, Clock::Real());
    ended.store(true);
    if (requester.joinable()) requester.join();
    seen.last = coordinator.epoch();
    seen.rows_at_end = graph.in_force().tracker->consumed_rows();
    seen.rescheduled = coordinator.rescheduled();
    attempts.push_back(seen);
    return status;
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result, RunStreamingJobWithDriver(*store, options, nullptr, {},
                                                  Clock::Real(), driver));
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_EQ(result.upstream_rows, result.view_rows);
  EXPECT_EQ(result.recoveries, 0u);
  EXPECT_EQ(recoveries_seen, 0);
  EXPECT_EQ(result.reschedules, 2u);
  EXPECT_THAT(reasons, ::testing::ElementsAre("test 0", "test 1"));
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_TRUE(attempts[0].rescheduled);
  EXPECT_TRUE(attempts[1].rescheduled);
  EXPECT_FALSE(attempts[2].rescheduled);
  for (size_t i = 0; i < 2; ++i) {
    // Stopped at a checkpoint barrier (every third after the initial one),
    // mid-backfill.
    const uint64_t barriers =
        attempts[i].last.curr.value() - attempts[i].first.curr.value();
    EXPECT_GT(barriers, 0u) << "attempt " << i;
    EXPECT_EQ(barriers % 3, 0u) << "attempt " << i;
    EXPECT_LT(attempts[i].rows_at_end, options.initial_rows) << "attempt " << i;
    // The next attempt starts from the stop barrier's checkpoint: its first
    // barrier is the one after it, nothing of attempt i is redone.
    EXPECT_EQ(attempts[i + 1].committed_at_start, attempts[i].last.prev)
        << "attempt " << i + 1;
    EXPECT_EQ(attempts[i + 1].first.prev, attempts[i].last.prev)
        << "attempt " << i + 1;
  }
  // Each attempt went on from the progress the one before committed.
  EXPECT_GT(attempts[0].rows_at_end, 0u);
  EXPECT_GT(attempts[1].rows_at_end, attempts[0].rows_at_end);
  EXPECT_GE(attempts[2].rows_at_end, attempts[1].rows_at_end);
  // The run created the job: every row backfilled is this run's, whichever
  // attempt read it (each attempt used to count only what it read itself,
  // and a rescheduled attempt's rows twice or not at all).
  EXPECT_GT(result.snapshot_rows_this_run, 0u);
  EXPECT_EQ(result.snapshot_rows_this_run, result.snapshot_rows);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, RescheduleTest,
    ::testing::Values(BackfillKind::kArrangement, BackfillKind::kNoShuffle,
                      BackfillKind::kSnapshot),
    [](const ::testing::TestParamInfo<BackfillKind>& info) {
      return std::string(BackfillKindName(info.param));
    });

TEST(StreamingJobTest, AdaptiveModeSurvivesAnInProcessRecovery) {
  ReopenableStore reopenable;
  reopenable.options = FaultStoreOptions("adaptive_recovery");
  auto injector = std::make_shared<CountingFaults>(FaultInjector::Operation::kSync,
                                                   ".log", 5, 1);
  reopenable.options.fault_injector = injector;
  BACKFILL_ASSERT_OK_AND_ASSIGN(reopenable.store,
                                RocksDbStateStore::Open(reopenable.options));
  injector->Arm();
  StreamingJobOptions options = SmallJob();
  options.adaptive_target_barrier_latency = absl::Milliseconds(200);
  options.adaptive_min_rows_per_second = 100;
  options.max_duration = absl::Seconds(30);
  std::vector<std::string> errors;
  reopenable.Hook(options, &errors);
  const auto on_recovery = options.on_recovery;
  bool recovered = false;
  std::vector<RateLimit> after_recovery;
  options.on_recovery = [&](const absl::Status& error, uint32_t recovery) {
    recovered = true;
    on_recovery(error, recovery);
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      JobResult result,
      RunStreamingJob(*reopenable.store, options, nullptr,
                      [&](const JobProgress& progress) {
                        if (recovered && !progress.backfill_done) {
                          after_recovery.push_back(progress.rate_limit);
                        }
                      },
                      Clock::Real()));
  EXPECT_EQ(injector->fired(), 1);
  EXPECT_EQ(result.recoveries, 1u);
  EXPECT_TRUE(result.consistent) << result.mismatch;
  EXPECT_TRUE(result.job_state.adaptive());
  EXPECT_EQ(result.job_state.adaptive_target, absl::Milliseconds(200));
  ASSERT_FALSE(after_recovery.empty());
  for (const RateLimit& rate : after_recovery) {
    EXPECT_TRUE(rate.is_fixed()) << rate;
    EXPECT_GE(rate.rows_per_second(), 100u);
  }
}

}  // namespace
}  // namespace backfill
