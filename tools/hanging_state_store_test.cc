#include "tools/hanging_state_store.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/state_store_conformance.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

// Owns the store it wraps (base-from-member: the inner store first).
struct InnerHolder {
  std::unique_ptr<StateStore> owned_inner = NewMemoryStateStore();
};
class OwningHangingStateStore : private InnerHolder, public HangingStateStore {
 public:
  OwningHangingStateStore() : HangingStateStore(owned_inner.get()) {}
};

// Unarmed, the decorator is a StateStore like any other.
INSTANTIATE_TEST_SUITE_P(
    Hanging, StateStoreConformanceTest,
    ::testing::Values(StateStoreFactory{
        "HangingMemory",
        [] {
          return absl::StatusOr<std::unique_ptr<StateStore>>(
              std::make_unique<OwningHangingStateStore>());
        }}),
    StateStoreFactoryName);

// Armed, a table instance's call blocks (the caller's thread, nothing else)
// until the switch is released, and then completes as it would have.
TEST(HangingStateStoreTest, ArmedCallsBlockUntilReleased) {
  OwningHangingStateStore store;
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<LocalStateStore> local,
                                store.NewLocalStateStore(7, {}));
  BACKFILL_ASSERT_OK(local->Init({Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(local->Insert(VirtualNode(0), "a", "1"));

  ActorHang::Arm();
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    EXPECT_TRUE(local->Insert(VirtualNode(0), "b", "2").ok());
    returned.store(true);
  });
  // The call is blocked, and stays blocked while armed.
  for (int i = 0; i < 500 && ActorHang::blocked() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(ActorHang::blocked(), 1);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(returned.load());
  // The store itself answers (only its table instances hang).
  EXPECT_EQ(store.CommittedEpoch(7), Epoch(0));

  ActorHang::Release();
  caller.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(ActorHang::blocked(), 0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<std::string> b,
                                local->Get(VirtualNode(0), "b"));
  EXPECT_EQ(b, "2");
}

}  // namespace
}  // namespace backfill
