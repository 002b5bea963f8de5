// The model-based test (storage/state_store_model.h) on the memory and
// RocksDB stores.
#include "storage/state_store_model.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/model_", ::getpid(), "_",
                      counter.fetch_add(1));
}

INSTANTIATE_TEST_SUITE_P(
    Implementations, StateStoreModelTest,
    ::testing::Values(
        StateStoreModelFactory{"Memory", [] { return NewMemoryStateStore(); },
                               40, 3000},
        StateStoreModelFactory{"RocksDb",
                               []() -> std::unique_ptr<StateStore> {
                                 RocksDbStateStoreOptions options;
                                 options.path = NewTestDirectory();
                                 options.sync_on_checkpoint = false;
                                 // Tiny memtables: flushes and compactions (and
                                 // GC) happen.
                                 options.write_buffer_bytes = 64 << 10;
                                 auto store = RocksDbStateStore::Open(options);
                                 EXPECT_THAT(store, IsOk());
                                 if (!store.ok()) return nullptr;
                                 return *std::move(store);
                               },
                               25, 3000}),
    StateStoreModelFactoryName);

}  // namespace
}  // namespace backfill
