#include "executor/backfill/snapshot_chunk_reader.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "executor/backfill/backfill_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ratelimit/monitored_rate_limiter.h"
#include "ratelimit/rate_limit.h"
#include "storage/memory_state_store.h"
#include "storage/replicated_state_table.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::testing::IsEmpty;

// t(k INT64 DESC, v VARCHAR), dist key k, 4 vnodes, 40 rows; S2 = (v, k).
TableCatalog Catalog() {
  TableCatalog catalog;
  catalog.table_id = 5;
  catalog.name = "t";
  catalog.columns = {{"k", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {0, 1};
  return catalog;
}

std::map<VirtualNode, VnodeProgress> AllNotStarted() {
  std::map<VirtualNode, VnodeProgress> loaded;
  for (VirtualNode vnode = 0; vnode < 4; ++vnode) {
    loaded.emplace(vnode, NotStarted{});
  }
  return loaded;
}

// The k column (S2 index 1) of every row of `data`.
std::vector<int64_t> Keys(const DataChunk& data) {
  std::vector<int64_t> keys;
  for (size_t i = 0; i < data.capacity(); ++i) {
    keys.push_back(std::get<int64_t>(data.RowAt(i)[1]));
  }
  return keys;
}

class SnapshotChunkReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const EpochPair first = EpochPair::ForInitial(Epoch(1));
    auto upstream = StateTable::Create(Catalog(), *store_, VnodeBitmap::All(4));
    ASSERT_TRUE(upstream.ok());
    BACKFILL_ASSERT_OK((*upstream)->InitEpoch(first));
    for (int64_t k = 0; k < 40; ++k) {
      const Row row = {k, std::string("v") + std::to_string(k)};
      BACKFILL_ASSERT_OK((*upstream)->Insert(row));
      by_vnode_[(*upstream)->ComputeVnode(row)].push_back(k);
    }
    BACKFILL_ASSERT_OK((*upstream)->Commit(first.Next(Epoch(2))));
    BACKFILL_ASSERT_OK(store_->Checkpoint(Epoch(1)));
    auto replica = ReplicatedStateTable::Create(Catalog(), *store_,
                                                VnodeBitmap::All(4), {2, 1});
    ASSERT_TRUE(replica.ok());
    replica_ = std::move(*replica);
    BACKFILL_ASSERT_OK(replica_->InitEpoch(first.Next(Epoch(2))));
    for (auto& [vnode, keys] : by_vnode_) {
      std::sort(keys.rbegin(), keys.rend());  // DESC pk order
    }
  }

  std::unique_ptr<StateStore> store_ = NewMemoryStateStore();
  std::unique_ptr<ReplicatedStateTable> replica_;
  std::map<VirtualNode, std::vector<int64_t>> by_vnode_;
  SimulatedClock clock_;
};

// Vnode by vnode: full chunks of one vnode, then the vnode's last rows as
// soon as its scan ends (the vnode is reported finished), the last vnode's
// with kExhausted; one scan and one builder at most, each vnode opened once.
TEST_F(SnapshotChunkReaderTest, VnodeByVnodeEachEndingWithItsLastRows) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/4);
  EXPECT_EQ(snapshot.chunk_capacity(), 4u);
  std::map<VirtualNode, std::vector<int64_t>> read;
  std::vector<VirtualNode> finished;
  while (true) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead result, snapshot.Read(1000));
    for (VirtualNode vnode : result.finished_vnodes) finished.push_back(vnode);
    EXPECT_LE(snapshot.stats().open_scans, 1);
    if (result.chunk.has_value()) {
      const size_t rows = result.chunk->data.capacity();
      EXPECT_LE(rows, 4u);
      if (rows < 4) {
        ASSERT_FALSE(result.finished_vnodes.empty())
            << "a partial chunk only at the end of its vnode";
        EXPECT_EQ(result.finished_vnodes.back(), result.chunk->vnode);
      }
      std::vector<int64_t>& keys = read[result.chunk->vnode];
      for (int64_t k : Keys(result.chunk->data)) keys.push_back(k);
    }
    if (result.outcome == SnapshotRead::kExhausted) break;
    ASSERT_EQ(result.outcome, SnapshotRead::kChunk);
  }
  EXPECT_EQ(read, by_vnode_);
  EXPECT_EQ(finished, (std::vector<VirtualNode>{0, 1, 2, 3}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<VnodeChunk> none, snapshot.Flush());
  EXPECT_THAT(none, IsEmpty());
  const SnapshotChunkReader::Stats stats = snapshot.stats();
  EXPECT_EQ(stats.scans_opened, 4u);
  EXPECT_EQ(stats.vnodes_finished, 4u);
  EXPECT_EQ(stats.peak_open_scans, 1);
  EXPECT_EQ(stats.peak_live_builders, 1);
  EXPECT_EQ(stats.open_scans, 0);
  EXPECT_EQ(stats.live_builders, 0);
}

TEST_F(SnapshotChunkReaderTest, StartsAfterPositionsAndSkipsCompletedVnodes) {
  const std::vector<int64_t>& keys = by_vnode_[1];
  ASSERT_GE(keys.size(), 3u);
  std::map<VirtualNode, VnodeProgress> loaded = AllNotStarted();
  loaded[0] = Completed{Row{by_vnode_[0].back()}, 10};
  loaded[1] = InProgress{Row{keys[1]}, 2};
  loaded[2] = Completed{Row{by_vnode_[2].back()}, 10};
  loaded[3] = Completed{Row{by_vnode_[3].back()}, 10};
  BackfillState state(std::move(loaded));
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/256);
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead result, snapshot.Read(1000));
  EXPECT_EQ(result.outcome, SnapshotRead::kExhausted);
  ASSERT_TRUE(result.chunk.has_value());
  EXPECT_EQ(result.chunk->vnode, 1);
  EXPECT_EQ(Keys(result.chunk->data),
            std::vector<int64_t>(keys.begin() + 2, keys.end()));
  EXPECT_EQ(result.finished_vnodes, (std::vector<VirtualNode>{1}));
  EXPECT_EQ(snapshot.stats().scans_opened, 1u);  // Completed: never opened
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<VnodeChunk> rest, snapshot.Flush());
  EXPECT_THAT(rest, IsEmpty());
}

// Empty vnodes (every one read up to its last key): one Read opens at most
// max_vnode_scans_per_read scans, however many vnodes are empty.
TEST_F(SnapshotChunkReaderTest, OpensABoundedNumberOfScansPerRead) {
  std::map<VirtualNode, VnodeProgress> loaded;
  for (const auto& [vnode, keys] : by_vnode_) {
    loaded[vnode] = InProgress{Row{keys.back()}, keys.size()};
  }
  BackfillState state(std::move(loaded));
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/4,
                               /*max_vnode_scans_per_read=*/1);
  std::vector<VirtualNode> finished;
  for (int i = 0; i < 3; ++i) {
    BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead result, snapshot.Read(1000));
    EXPECT_EQ(result.outcome, SnapshotRead::kRowLimit);
    EXPECT_FALSE(result.chunk.has_value());
    EXPECT_EQ(snapshot.stats().scans_opened, static_cast<uint64_t>(i + 1));
    for (VirtualNode vnode : result.finished_vnodes) finished.push_back(vnode);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead last, snapshot.Read(1000));
  EXPECT_EQ(last.outcome, SnapshotRead::kExhausted);
  for (VirtualNode vnode : last.finished_vnodes) finished.push_back(vnode);
  EXPECT_EQ(finished, (std::vector<VirtualNode>{0, 1, 2, 3}));
  EXPECT_EQ(snapshot.stats().scans_opened, 4u);
  EXPECT_EQ(snapshot.stats().peak_live_builders, 0);
}

TEST_F(SnapshotChunkReaderTest, StopsAtTheRowLimit) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/256);
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead result, snapshot.Read(3));
  EXPECT_EQ(result.outcome, SnapshotRead::kRowLimit);
  EXPECT_FALSE(result.chunk.has_value());
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<VnodeChunk> rest, snapshot.Flush());
  size_t rows = 0;
  for (const VnodeChunk& chunk : rest) rows += chunk.data.capacity();
  EXPECT_EQ(rows, 3u);
}

// Flush closes the reader: the next Read reopens it at the positions the
// state has then.
TEST_F(SnapshotChunkReaderTest, ReadAfterFlushStartsAtTheNewPositions) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/2);
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead first, snapshot.Read(1000));
  ASSERT_EQ(first.outcome, SnapshotRead::kChunk);
  const VirtualNode vnode = first.chunk->vnode;
  const std::vector<int64_t> sent = Keys(first.chunk->data);
  BACKFILL_ASSERT_OK(state.UpdateProgress(vnode, Row{sent.back()}, 2));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<VnodeChunk> rest, snapshot.Flush());
  EXPECT_THAT(rest, IsEmpty());
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead second, snapshot.Read(1000));
  ASSERT_EQ(second.outcome, SnapshotRead::kChunk);
  EXPECT_EQ(second.chunk->vnode, vnode);
  EXPECT_EQ(Keys(second.chunk->data),
            std::vector<int64_t>(by_vnode_[vnode].begin() + 2,
                                 by_vnode_[vnode].begin() + 4));
}

TEST_F(SnapshotChunkReaderTest, RateLimitedReadsBlockUntilPermitsAreDue) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Fixed(3), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/256);
  EXPECT_EQ(snapshot.chunk_capacity(), 3u);  // min(rate, chunk_size)
  // The bucket starts empty: nothing is read, and Read says when to retry.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead blocked, snapshot.Read(1000));
  EXPECT_EQ(blocked.outcome, SnapshotRead::kBlocked);
  EXPECT_GT(blocked.retry_at, clock_.Now());
  EXPECT_LT(blocked.retry_at, absl::InfiniteFuture());
  EXPECT_FALSE(snapshot.AcquirePermitsNow());
  clock_.AdvanceTime(blocked.retry_at - clock_.Now());
  // One batch (3 permits): the first chunk of 3 rows.
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead chunk, snapshot.Read(1000));
  ASSERT_EQ(chunk.outcome, SnapshotRead::kChunk);
  EXPECT_EQ(chunk.chunk->data.capacity(), 3u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead again, snapshot.Read(1000));
  EXPECT_EQ(again.outcome, SnapshotRead::kBlocked);
}

TEST_F(SnapshotChunkReaderTest, AcquirePermitsNowKeepsTheBatchForRead) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Fixed(2), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/256);
  EXPECT_FALSE(snapshot.AcquirePermitsNow());
  clock_.AdvanceTime(absl::Seconds(1));
  EXPECT_TRUE(snapshot.AcquirePermitsNow());
  EXPECT_TRUE(snapshot.AcquirePermitsNow());  // the batch is still held
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead chunk, snapshot.Read(1000));
  ASSERT_EQ(chunk.outcome, SnapshotRead::kChunk);
  EXPECT_EQ(chunk.chunk->data.capacity(), 2u);
  EXPECT_FALSE(snapshot.AcquirePermitsNow());
}

TEST_F(SnapshotChunkReaderTest, ResizeFollowsTheLimit) {
  BackfillState state(AllNotStarted());
  MonitoredRateLimiter limiter(clock_, RateLimit::Disabled(), {}, {});
  SnapshotChunkReader snapshot(*replica_, state, limiter, /*chunk_size=*/8);
  EXPECT_EQ(snapshot.chunk_capacity(), 8u);
  limiter.Update(RateLimit::Fixed(5));
  snapshot.Resize();
  EXPECT_EQ(snapshot.chunk_capacity(), 5u);
  clock_.AdvanceTime(absl::Seconds(1));
  BACKFILL_ASSERT_OK_AND_ASSIGN(SnapshotRead chunk, snapshot.Read(1000));
  ASSERT_EQ(chunk.outcome, SnapshotRead::kChunk);
  EXPECT_EQ(chunk.chunk->data.capacity(), 5u);
}

}  // namespace
}  // namespace backfill
