#include "storage/memory_state_store.h"

#include "gtest/gtest.h"
#include "storage/state_store_conformance.h"

namespace backfill {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Memory, StateStoreConformanceTest,
    ::testing::Values(StateStoreFactory{
        "Memory",
        [] {
          return absl::StatusOr<std::unique_ptr<StateStore>>(
              NewMemoryStateStore());
        }}),
    StateStoreFactoryName);

}  // namespace
}  // namespace backfill
