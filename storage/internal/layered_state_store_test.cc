// LayeredStateStore over a fake layer that records what the store asks of
// it: the store's own part of the protocol, apart from any implementation.
// (Every rule of storage/state_store.h is the conformance suite's, run by
// each implementation.)
#include "storage/internal/layered_state_store.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace storage_internal {
namespace {

// Counts the pins alive; commits and reads nothing.
class PinCountingLayer final : public CommittedLayer {
 public:
  explicit PinCountingLayer(int* pins_alive_at_stop)
      : pins_alive_at_stop_(pins_alive_at_stop) {}

  std::unique_ptr<EpochPin> Pin(Epoch /*epoch*/) override {
    return std::make_unique<CountedPin>(&pins_alive_);
  }
  void StopGarbageCollection() override { *pins_alive_at_stop_ = pins_alive_; }
  absl::Status Commit(const std::vector<CommitBatch>& /*batches*/,
                      Epoch /*committed_epoch*/) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<std::string>> Get(TableId, VirtualNode,
                                                 absl::string_view,
                                                 Epoch) override {
    return std::nullopt;
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId, VirtualNode, const PkRange&, Epoch, const ScanOptions&,
      std::unique_ptr<EpochPin>) override {
    return std::unique_ptr<StateStoreIterator>(new EmptyIterator());
  }

 private:
  class CountedPin final : public EpochPin {
   public:
    explicit CountedPin(int* alive) : alive_(alive) { ++*alive_; }
    ~CountedPin() override { --*alive_; }

   private:
    int* const alive_;
  };
  class EmptyIterator final : public StateStoreIterator {
   public:
    bool Valid() const override { return false; }
    void SeekToFirst() override {}
    void Seek(absl::string_view) override {}
    void Next() override {}
    absl::string_view key() const override { return {}; }
    absl::string_view value() const override { return {}; }
    absl::Status status() const override { return absl::OkStatus(); }
  };

  int pins_alive_ = 0;
  int* const pins_alive_at_stop_;
};

// A layer that garbage-collects while it shuts down (RocksDB flushes at
// close) must see the persisted epoch pins still held: the next open
// restores them and trusts that nothing passed them.
TEST(LayeredStateStoreTest, StopsGarbageCollectionBeforeDroppingItsPins) {
  int pins_alive_at_stop = -1;
  {
    LayeredStateStore store(
        std::make_unique<PinCountingLayer>(&pins_alive_at_stop), Epoch(5));
    BACKFILL_ASSERT_OK(store.PinEpoch("owner", Epoch(3)));
    BACKFILL_ASSERT_OK(store.Checkpoint(Epoch(6)));  // Persists the pin.
  }
  // The pin in force and the persisted one (both of epoch 3).
  EXPECT_EQ(pins_alive_at_stop, 2);
}

}  // namespace
}  // namespace storage_internal
}  // namespace backfill
