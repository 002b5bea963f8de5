// The conformance suite of StateStore: every rule of storage/state_store.h,
// run against any implementation. An implementation's test instantiates it
// with a factory of fresh, empty stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Memory, StateStoreConformanceTest,
//       ::testing::Values(StateStoreFactory{
//           "memory", [] { return absl::StatusOr<std::unique_ptr<StateStore>>(
//                              NewMemoryStateStore()); }}),
//       StateStoreFactoryName);
//
// The suite uses threads (WaitCommitted): tag the test `concurrent`.
#ifndef STORAGE_STATE_STORE_CONFORMANCE_H_
#define STORAGE_STATE_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "storage/state_store.h"

namespace backfill {

struct StateStoreFactory {
  // A gtest-friendly name ([A-Za-z0-9_]).
  std::string name;
  // Returns a new, empty store each time.
  std::function<absl::StatusOr<std::unique_ptr<StateStore>>()> open;
};

// For INSTANTIATE_TEST_SUITE_P's name generator.
std::string StateStoreFactoryName(
    const ::testing::TestParamInfo<StateStoreFactory>& info);

class StateStoreConformanceTest
    : public ::testing::TestWithParam<StateStoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  std::unique_ptr<StateStore> store_;
};

}  // namespace backfill

#endif  // STORAGE_STATE_STORE_CONFORMANCE_H_
