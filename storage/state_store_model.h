// The model-based test of StateStore: random traces of writes, seals,
// checkpoints, instance crashes, local reads, reads at epochs and scans over
// several tables and instances (replicated ones included), checked against
// a std::map model. An implementation's test instantiates it with a factory
// of fresh, empty stores and the trace counts:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Implementations, StateStoreModelTest,
//       ::testing::Values(StateStoreModelFactory{
//           "Memory", [] { return NewMemoryStateStore(); }, 40, 3000}),
//       StateStoreModelFactoryName);
//
// Each trace is seeded (seeds 1..num_seeds, named in failures). A committed
// read below the committed epoch may be refused with FailedPrecondition (a
// historical read below a store's GC horizon); nothing else is tolerated.
#ifndef STORAGE_STATE_STORE_MODEL_H_
#define STORAGE_STATE_STORE_MODEL_H_

#include <functional>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "storage/state_store.h"

namespace backfill {

struct StateStoreModelFactory {
  // A gtest-friendly name ([A-Za-z0-9_]).
  std::string name;
  // A new, empty store each time; null fails the trace.
  std::function<std::unique_ptr<StateStore>()> open;
  // Traces (seeds 1..num_seeds) and operations per trace.
  int num_seeds = 0;
  int num_ops = 0;
};

// For INSTANTIATE_TEST_SUITE_P's name generator.
std::string StateStoreModelFactoryName(
    const ::testing::TestParamInfo<StateStoreModelFactory>& info);

class StateStoreModelTest
    : public ::testing::TestWithParam<StateStoreModelFactory> {};

}  // namespace backfill

#endif  // STORAGE_STATE_STORE_MODEL_H_
