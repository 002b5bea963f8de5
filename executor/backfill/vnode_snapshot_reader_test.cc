#include "executor/backfill/vnode_snapshot_reader.h"

#include <algorithm>
#include <map>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

// t(k INT64 DESC, v VARCHAR), dist key k, 4 vnodes; S2 = (v, k).
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

class VnodeSnapshotReaderTest : public ::testing::Test {
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
};

TEST_F(VnodeSnapshotReaderTest, ReadsVnodesInOrderEachInPkOrder) {
  VnodeSnapshotReader reader(*replica_, {{2, std::nullopt}, {0, std::nullopt}});
  std::vector<std::pair<VirtualNode, int64_t>> read;
  for (reader.SeekToFirst(); reader.Valid(); reader.Next()) {
    ASSERT_EQ(reader.row().size(), 2u);  // S2 = (v, k)
    read.emplace_back(reader.vnode(), std::get<int64_t>(reader.row()[1]));
  }
  BACKFILL_ASSERT_OK(reader.status());
  std::vector<std::pair<VirtualNode, int64_t>> expected;
  for (VirtualNode vnode : {2, 0}) {
    for (int64_t k : by_vnode_[vnode]) expected.emplace_back(vnode, k);
  }
  EXPECT_EQ(read, expected);
  EXPECT_EQ(reader.num_vnodes_exhausted(), 2);
}

// Batches of ReadColumns give the rows Next would, in S2 columns, and never
// span two vnodes.
TEST_F(VnodeSnapshotReaderTest, ReadColumnsReadsOneVnodeABatch) {
  for (const size_t batch : {size_t{1}, size_t{3}, size_t{64}}) {
    SCOPED_TRACE(batch);
    VnodeSnapshotReader reader(
        *replica_, {{2, std::nullopt}, {0, std::nullopt}, {3, std::nullopt}});
    std::vector<std::pair<VirtualNode, int64_t>> read;
    for (reader.SeekToFirst(); reader.Valid();) {
      const VirtualNode vnode = reader.vnode();
      std::vector<std::vector<Datum>> columns(2);  // S2 = (v, k)
      const size_t n = reader.ReadColumns(batch, absl::MakeSpan(columns));
      ASSERT_GE(n, 1u);
      ASSERT_LE(n, batch);
      ASSERT_EQ(columns[0].size(), n);
      ASSERT_EQ(columns[1].size(), n);
      for (size_t r = 0; r < n; ++r) {
        const int64_t k = std::get<int64_t>(columns[1][r]);
        ASSERT_EQ(columns[0][r], Datum(std::string("v") + std::to_string(k)));
        read.emplace_back(vnode, k);
      }
    }
    BACKFILL_ASSERT_OK(reader.status());
    std::vector<std::pair<VirtualNode, int64_t>> expected;
    for (VirtualNode vnode : {2, 0, 3}) {
      for (int64_t k : by_vnode_[vnode]) expected.emplace_back(vnode, k);
    }
    EXPECT_EQ(read, expected);
    EXPECT_EQ(reader.num_vnodes_exhausted(), 3);
  }
}

TEST_F(VnodeSnapshotReaderTest, StartsStrictlyAfterThePosition) {
  const std::vector<int64_t>& keys = by_vnode_[1];
  ASSERT_GE(keys.size(), 3u);
  VnodeSnapshotReader reader(*replica_, {{1, Row{keys[1]}}});
  std::vector<int64_t> read;
  for (reader.SeekToFirst(); reader.Valid(); reader.Next()) {
    read.push_back(std::get<int64_t>(reader.row()[1]));
  }
  EXPECT_EQ(read, std::vector<int64_t>(keys.begin() + 2, keys.end()));
}

TEST_F(VnodeSnapshotReaderTest, SkipsExhaustedAndEmptyPositions) {
  const std::vector<int64_t>& keys = by_vnode_[3];
  VnodeSnapshotReader reader(
      *replica_, {{3, Row{keys.back()}}, {1, Row{}}, {0, std::nullopt}});
  reader.SeekToFirst();
  ASSERT_TRUE(reader.Valid());
  EXPECT_EQ(reader.vnode(), 0);
  EXPECT_EQ(reader.num_vnodes_exhausted(), 2);
  VnodeSnapshotReader empty(*replica_, {});
  empty.SeekToFirst();
  EXPECT_FALSE(empty.Valid());
  BACKFILL_EXPECT_OK(empty.status());
}

TEST_F(VnodeSnapshotReaderTest, UnownedVnodeIsAnErrorNamingIt) {
  auto replica = ReplicatedStateTable::Create(
      Catalog(), *store_, VnodeBitmap::FromRange(4, 0, 2), {2, 1});
  ASSERT_TRUE(replica.ok());
  BACKFILL_ASSERT_OK((*replica)->InitEpoch(EpochPair{Epoch(2), Epoch(1)}));
  VnodeSnapshotReader reader(**replica, {{0, std::nullopt}, {3, std::nullopt}});
  reader.SeekToFirst();
  while (reader.Valid()) reader.Next();
  EXPECT_THAT(reader.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        HasSubstr("vnode 3")));
}

// LevelDB's positioning rule: nothing is read before SeekToFirst(), and
// SeekToFirst() starts again from the first vnode.
TEST_F(VnodeSnapshotReaderTest, NotPositionedUntilSeekToFirst) {
  VnodeSnapshotReader reader(*replica_, {{2, std::nullopt}, {0, std::nullopt}});
  EXPECT_FALSE(reader.Valid());
  BACKFILL_EXPECT_OK(reader.status());
  EXPECT_EQ(reader.num_vnodes_exhausted(), 0);
  reader.SeekToFirst();
  ASSERT_TRUE(reader.Valid());
  EXPECT_EQ(reader.vnode(), 2);
  EXPECT_EQ(std::get<int64_t>(reader.row()[1]), by_vnode_[2].front());
  while (reader.Valid() && reader.vnode() == 2) reader.Next();
  ASSERT_TRUE(reader.Valid());
  EXPECT_EQ(reader.vnode(), 0);
  reader.SeekToFirst();
  ASSERT_TRUE(reader.Valid());
  EXPECT_EQ(reader.vnode(), 2);
  EXPECT_EQ(std::get<int64_t>(reader.row()[1]), by_vnode_[2].front());
}

}  // namespace
}  // namespace backfill
