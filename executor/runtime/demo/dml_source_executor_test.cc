#include "executor/runtime/demo/dml_source_executor.h"

#include <memory>
#include <optional>
#include <utility>

#include "executor/barrier.h"
#include "executor/channel.h"
#include "executor/stream_chunk.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

// t(id INT64, v INT64): pk id, one vnode.
TableCatalog Catalog() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kInt64, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 1;
  catalog.value_indices = {0, 1};
  return catalog;
}

// A source at 1000 ops/s (one op per millisecond) on a simulated clock,
// past its first barrier.
class DmlSourceBatchingTest : public ::testing::Test {
 protected:
  void Start(WorkloadOptions workload) {
    workload.ops_per_second = 1000;
    workload.insert_weight = 1;
    workload.update_weight = 0;
    workload.delete_weight = 0;
    workload.key_space = 1'000'000;
    auto [tx, rx] = MakeChannel({.capacity = 4});
    barriers_.emplace(std::move(tx));
    auto table = StateTable::Create(Catalog(), *store_, VnodeBitmap::All(1));
    auto offsets = StateTable::Create(DmlSourceExecutor::OffsetTableCatalog(9),
                                      *store_, VnodeBitmap::All(1));
    ASSERT_TRUE(table.ok() && offsets.ok());
    ExecutorInfo info;
    info.identity = "DmlSource";
    source_ = std::make_unique<DmlSourceExecutor>(
        std::move(rx), std::move(*table), std::move(*offsets), workload,
        nullptr, info);
    Barrier first;
    first.epoch = EpochPair::ForInitial(Epoch(1));
    first.kind = BarrierKind::kInitial;
    BACKFILL_ASSERT_OK(barriers_->Send(Message(first), clock_));
    ASSERT_TRUE(Poll().is_ready());  // the first barrier
    start_ = clock_.Now();
  }

  PollResult Poll() {
    cx_.ResetWakeDeadline();
    return source_->PollNext(cx_);
  }
  // Polls at `at` (after the start): the rows of the chunk it emits, or
  // nullopt if it waits (then wake_deadline() says until when).
  std::optional<size_t> PollAt(absl::Duration at) {
    clock_.SetTime(start_ + at);
    PollResult result = Poll();
    if (!result.is_ready()) return std::nullopt;
    const auto* chunk = std::get_if<StreamChunk>(&result.message());
    EXPECT_NE(chunk, nullptr);
    return chunk != nullptr ? chunk->cardinality() : 0;
  }
  absl::Duration WakeIn() const { return cx_.wake_deadline() - start_; }

  std::unique_ptr<StateStore> store_ = NewMemoryStateStore();
  SimulatedClock clock_;
  PollContext cx_{std::make_shared<BlockingWaker>(), clock_};
  std::optional<ChannelSender> barriers_;
  std::unique_ptr<DmlSourceExecutor> source_;
  absl::Time start_;
};

TEST_F(DmlSourceBatchingTest, WithoutAnIntervalEachChangeGoesWhenDue) {
  Start({});
  EXPECT_EQ(PollAt(absl::Milliseconds(1)), 1u);
  EXPECT_EQ(PollAt(absl::Milliseconds(1)), std::nullopt);
  EXPECT_EQ(WakeIn(), absl::Milliseconds(2));  // the next op's due time
  EXPECT_EQ(PollAt(absl::Milliseconds(2)), 1u);
}

TEST_F(DmlSourceBatchingTest, AnIntervalGathersTheChangesThatFellDue) {
  WorkloadOptions workload;
  workload.batch_interval = absl::Milliseconds(10);
  Start(workload);
  EXPECT_EQ(PollAt(absl::Milliseconds(3)), std::nullopt);
  EXPECT_EQ(WakeIn(), absl::Milliseconds(10));
  EXPECT_EQ(PollAt(absl::Milliseconds(10)), 10u);
  EXPECT_EQ(source_->offset(), 10u);
  // The next batch counts from the last emission.
  EXPECT_EQ(PollAt(absl::Milliseconds(15)), std::nullopt);
  EXPECT_EQ(WakeIn(), absl::Milliseconds(20));
  EXPECT_EQ(PollAt(absl::Milliseconds(21)), 11u);
  EXPECT_EQ(PollAt(absl::Milliseconds(22)), std::nullopt);
  EXPECT_EQ(WakeIn(), absl::Milliseconds(31));
}

TEST_F(DmlSourceBatchingTest, AFullChunkGoesAtOnce) {
  WorkloadOptions workload;
  workload.batch_interval = absl::Milliseconds(10);
  workload.max_chunk_rows = 4;
  Start(workload);
  EXPECT_EQ(PollAt(absl::Milliseconds(3)), std::nullopt);
  EXPECT_EQ(PollAt(absl::Milliseconds(5)), 4u);
  EXPECT_EQ(PollAt(absl::Milliseconds(5)), std::nullopt);  // 1 due, waits
}

TEST_F(DmlSourceBatchingTest, TheLastChangesOfABoundedWorkloadGoAtOnce) {
  WorkloadOptions workload;
  workload.batch_interval = absl::Milliseconds(10);
  workload.max_ops = 3;
  Start(workload);
  EXPECT_EQ(PollAt(absl::Milliseconds(2)), std::nullopt);
  EXPECT_EQ(PollAt(absl::Milliseconds(3)), 3u);
  EXPECT_EQ(PollAt(absl::Milliseconds(30)), std::nullopt);  // done
}

}  // namespace
}  // namespace backfill
