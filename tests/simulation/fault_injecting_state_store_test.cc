#include "tests/simulation/fault_injecting_state_store.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace simulation {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(FaultInjectingStateStoreTest, FailsTheNthCallOnceAndNothingChanges) {
  auto inner = NewMemoryStateStore();
  auto plan = std::make_shared<FaultPlan>();
  FaultInjectingStateStore store(*inner, plan);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local, store.NewLocalStateStore(7, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(1), Epoch(0)}));
  plan->Arm(FaultOp::kInsert, 2);
  BACKFILL_EXPECT_OK(local->Insert(0, "a", "1"));
  EXPECT_THAT(local->Insert(0, "b", "2"),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("injected fault #1: Insert of table 7")));
  EXPECT_TRUE(plan->TakeFired());
  EXPECT_FALSE(plan->armed());
  BACKFILL_EXPECT_OK(local->Insert(0, "c", "3"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto b, local->Get(0, "b"));
  EXPECT_FALSE(b.has_value());
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto c, local->Get(0, "c"));
  EXPECT_TRUE(c.has_value());
}

TEST(FaultInjectingStateStoreTest, IteratorMoveFaultIsStickyAndInvalidates) {
  auto inner = NewMemoryStateStore();
  auto plan = std::make_shared<FaultPlan>();
  FaultInjectingStateStore store(*inner, plan);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local, store.NewLocalStateStore(7, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(1), Epoch(0)}));
  BACKFILL_ASSERT_OK(local->Insert(0, "a", "1"));
  BACKFILL_ASSERT_OK(local->Insert(0, "b", "2"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, local->NewIterator(0, PkRange{}));
  plan->Arm(FaultOp::kIteratorMove, 2);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST(FaultInjectingStateStoreTest, CheckpointBeforeAndAfterCommit) {
  auto inner = NewMemoryStateStore();
  auto plan = std::make_shared<FaultPlan>();
  FaultInjectingStateStore store(*inner, plan);
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto local, store.NewLocalStateStore(7, {}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair{Epoch(1), Epoch(0)}));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
  plan->Arm(FaultOp::kCheckpoint, 1);
  EXPECT_THAT(store.Checkpoint(Epoch(1)),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(store.CommittedEpoch(7), Epoch(0));  // not committed
  plan->Arm(FaultOp::kCheckpointAfterCommit, 1);
  EXPECT_THAT(
      store.Checkpoint(Epoch(2)),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("after commit")));
  EXPECT_EQ(store.CommittedEpoch(7), Epoch(2));  // committed anyway
}

}  // namespace
}  // namespace simulation
}  // namespace backfill
