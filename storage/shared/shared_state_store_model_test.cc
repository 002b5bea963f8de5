// The model-based test (storage/state_store_model.h) on the shared store
// over a real 3-member etcd cluster and a local-directory object store:
// with the default compaction trigger and version checkpoints, and
// compacting after almost every checkpoint (a trigger of 2 SSTs) with a
// version checkpoint every 5 versions, so that reads meet compacted
// versions and the GC horizon often.
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "storage/state_store_model.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;

std::function<std::unique_ptr<StateStore>()> Open(
    size_t compaction_trigger_ssts, uint64_t version_checkpoint_deltas) {
  return [=]() -> std::unique_ptr<StateStore> {
    absl::StatusOr<SharedStateStoreOptions> options =
        SharedStoreFixture::Options(SharedStoreFixture::UniqueName("model"));
    EXPECT_THAT(options, IsOk());
    if (!options.ok()) return nullptr;
    options->compaction_trigger_ssts = compaction_trigger_ssts;
    options->version_checkpoint_deltas = version_checkpoint_deltas;
    auto store = SharedStateStore::Open(*options);
    EXPECT_THAT(store, IsOk());
    if (!store.ok()) return nullptr;
    return *std::move(store);
  };
}

INSTANTIATE_TEST_SUITE_P(
    Shared, StateStoreModelTest,
    ::testing::Values(StateStoreModelFactory{"SharedEtcd", Open(8, 100), 10,
                                             3000},
                      StateStoreModelFactory{"SharedEtcdCompactingOften",
                                             Open(2, 5), 10, 3000}),
    StateStoreModelFactoryName);

}  // namespace
}  // namespace backfill
