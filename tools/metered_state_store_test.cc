#include "tools/metered_state_store.h"

#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "storage/memory_state_store.h"
#include "storage/state_store_conformance.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

// Owns the store it meters (base-from-member: the target is built first).
struct TargetHolder {
  std::unique_ptr<StateStore> owned_target = NewMemoryStateStore();
};
class OwningMeteredStateStore : private TargetHolder, public MeteredStateStore {
 public:
  OwningMeteredStateStore()
      : MeteredStateStore(owned_target.get(), MeteredStateStoreOptions{},
                          Clock::Real()) {}
};

// The decorator is a StateStore like any other.
INSTANTIATE_TEST_SUITE_P(
    Metered, StateStoreConformanceTest,
    ::testing::Values(StateStoreFactory{
        "MeteredMemory",
        [] {
          return absl::StatusOr<std::unique_ptr<StateStore>>(
              std::make_unique<OwningMeteredStateStore>());
        }}),
    StateStoreFactoryName);

constexpr TableId kUpstream = 10;
constexpr TableId kView = 12;
constexpr TableId kOther = 11;

TEST(MeteredStateStoreTest, CountsWritesToTheCountedTablesAndTimesCheckpoints) {
  Registry registry;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CounterFamily * writes,
      registry.AddCounterFamily("writes_total", "w", {"table"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HistogramFamily * durations,
      registry.AddHistogramFamily("checkpoint_seconds", "c", {}, {0.1, 1, 10}));
  MeteredStateStoreOptions options;
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter view_writes,
                                writes->WithLabels({"view"}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(Counter upstream_writes,
                                writes->WithLabels({"upstream"}));
  options.counted_tables = {{kView, view_writes}, {kUpstream, upstream_writes}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(options.checkpoint_duration,
                                durations->WithLabels({}));
  SimulatedClock clock;
  std::unique_ptr<StateStore> memory = NewMemoryStateStore();
  // Each checkpoint "takes" 2 s of simulated time (listeners run inside it).
  memory->AddCommitListener(
      [&](Epoch) { clock.AdvanceTime(absl::Seconds(2)); });
  MeteredStateStore store(memory.get(), options, clock);

  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto view, store.NewLocalStateStore(kView, LocalOptions{}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto other, store.NewLocalStateStore(kOther, LocalOptions{}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto upstream, store.NewLocalStateStore(kUpstream, LocalOptions{}));
  LocalOptions replicated_options;
  replicated_options.replicated = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto replicated, store.NewLocalStateStore(kView, replicated_options));
  const EpochPair first = EpochPair::ForInitial(Epoch(2));
  for (LocalStateStore* local :
       {view.get(), other.get(), replicated.get(), upstream.get()}) {
    BACKFILL_ASSERT_OK(local->Init(first));
  }
  BACKFILL_ASSERT_OK(view->Insert(VirtualNode(0), "a", "1"));
  BACKFILL_ASSERT_OK(view->Insert(VirtualNode(1), "b", "2"));
  BACKFILL_ASSERT_OK(view->Delete(VirtualNode(0), "a"));
  BACKFILL_ASSERT_OK(other->Insert(VirtualNode(0), "x", "1"));
  BACKFILL_ASSERT_OK(replicated->Insert(VirtualNode(0), "y", "1"));
  BACKFILL_ASSERT_OK(upstream->Insert(VirtualNode(0), "u", "1"));
  EXPECT_EQ(view_writes.value(), 3u);
  EXPECT_EQ(upstream_writes.value(), 1u);
  // A failed write is not counted.
  EXPECT_FALSE(view->Insert(VirtualNode(kMaxVnodeCount), "c", "3").ok());
  EXPECT_EQ(view_writes.value(), 3u);

  const EpochPair next{Epoch(3), Epoch(2)};
  for (LocalStateStore* local :
       {view.get(), other.get(), replicated.get(), upstream.get()}) {
    BACKFILL_ASSERT_OK(local->Seal(next));
  }
  BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(2)));
  EXPECT_EQ(options.checkpoint_duration.count(), 1u);
  EXPECT_EQ(options.checkpoint_duration.sum(), 2.0);
  // A failed checkpoint is timed too.
  EXPECT_FALSE(store.Checkpoint(Epoch(1)).ok());
  EXPECT_EQ(options.checkpoint_duration.count(), 2u);
  EXPECT_EQ(store.CommittedEpoch(kView), Epoch(2));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::optional<std::string> b,
      store.Get(TableKey{kView, VirtualNode(1), "b"}, Epoch(2)));
  EXPECT_EQ(b, std::optional<std::string>("2"));
}

TEST(MeteredStateStoreTest, SetTargetForwardsToTheNewStore) {
  std::unique_ptr<StateStore> first = NewMemoryStateStore();
  std::unique_ptr<StateStore> second = NewMemoryStateStore();
  MeteredStateStore store(first.get(), MeteredStateStoreOptions{},
                          Clock::Real());
  EXPECT_EQ(store.target(), first.get());
  store.set_target(second.get());
  EXPECT_EQ(store.target(), second.get());
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto local, store.NewLocalStateStore(kView, LocalOptions{}));
  BACKFILL_ASSERT_OK(local->Init(EpochPair::ForInitial(Epoch(2))));
  BACKFILL_ASSERT_OK(local->Seal(EpochPair{Epoch(3), Epoch(2)}));
  BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(2)));
  EXPECT_EQ(second->CommittedEpoch(kView), Epoch(2));
  EXPECT_EQ(first->CommittedEpoch(kView), Epoch(0));
}

}  // namespace
}  // namespace backfill
