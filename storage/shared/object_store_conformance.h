// The conformance suite of ObjectStore: every rule of
// storage/shared/object_store.h, run against any implementation. An
// implementation's test instantiates it with a factory of fresh, empty stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Local, ObjectStoreConformanceTest,
//       ::testing::Values(ObjectStoreFactory{"local", [] {
//         return LocalDirectoryObjectStore::Open({.root = NewTempDir()}); }}),
//       ObjectStoreFactoryName);
//
// The suite uses threads: tag the test `concurrent`.
#ifndef STORAGE_SHARED_OBJECT_STORE_CONFORMANCE_H_
#define STORAGE_SHARED_OBJECT_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "storage/shared/object_store.h"

namespace backfill {

struct ObjectStoreFactory {
  // A gtest-friendly name ([A-Za-z0-9_]).
  std::string name;
  // Returns a new, empty store each time (its own directory, bucket or key
  // prefix).
  std::function<absl::StatusOr<std::unique_ptr<ObjectStore>>()> open;
};

// For INSTANTIATE_TEST_SUITE_P's name generator.
std::string ObjectStoreFactoryName(
    const ::testing::TestParamInfo<ObjectStoreFactory>& info);

class ObjectStoreConformanceTest
    : public ::testing::TestWithParam<ObjectStoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  std::unique_ptr<ObjectStore> store_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_OBJECT_STORE_CONFORMANCE_H_
