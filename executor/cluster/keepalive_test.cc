// A peer that vanishes without closing its connections (its machine lost
// power, its network is partitioned: BlackholeProxy) is noticed through the
// keepalive pings (grpc_keepalive.h), as a peer that closed them is: the
// worker's control stream ends, so the worker can register with whichever
// coordinator leads next, and the coordinator drops the worker. Without
// the pings the stream stays open: the second test shows the hang they fix.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "executor/cluster/blackhole_proxy.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/grpc_keepalive.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/testing/shared_store_fixture.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Fast, so the test is short (the default: 2 s and 10 s), with room for a
// loaded machine.
constexpr Keepalive kFast{absl::Milliseconds(200), absl::Seconds(3)};
// Far more than kFast's interval + timeout, far less than forever.
constexpr absl::Duration kNoticeWithin = absl::Seconds(30);

struct Peers {
  std::unique_ptr<SharedStateStore> committer;
  std::unique_ptr<SharedStateStore> worker_store;
  std::unique_ptr<CheckpointCoordinator> coordinator;
  std::unique_ptr<BlackholeProxy> proxy;
  std::unique_ptr<CheckpointWorker> worker;
};

// A coordinator and one worker registered through a proxy, both ends with
// `keepalive`.
void Start(const std::string& name, const Keepalive& keepalive, Peers& s) {
  const std::string unique = SharedStoreFixture::UniqueName(name);
  s.committer = SharedStoreFixture::Open(unique);
  s.worker_store = SharedStoreFixture::Open(unique);
  ASSERT_TRUE(s.committer != nullptr && s.worker_store != nullptr);
  absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> coordinator =
      CheckpointCoordinator::Start(
          {.store = s.committer.get(), .keepalive = keepalive});
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  s.coordinator = *std::move(coordinator);
  s.proxy = std::make_unique<BlackholeProxy>(s.coordinator->address());
  BACKFILL_ASSERT_OK(s.proxy->status());
  absl::StatusOr<std::unique_ptr<CheckpointWorker>> worker =
      CheckpointWorker::Connect({.coordinator_address = s.proxy->address(),
                                 .worker_id = "a",
                                 .store = s.worker_store.get(),
                                 .keepalive = keepalive});
  ASSERT_TRUE(worker.ok()) << worker.status();
  s.worker = *std::move(worker);
  ASSERT_THAT(s.coordinator->LiveWorkers(), ElementsAre("a"));
}

// Whether the coordinator's live workers are none by `deadline`.
bool NoLiveWorkersBy(const CheckpointCoordinator& coordinator,
                     absl::Time deadline) {
  while (!coordinator.LiveWorkers().empty()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return true;
}

TEST(KeepaliveTest, BothEndsNoticeAPeerThatVanishedWithoutClosing) {
  Peers s;
  ASSERT_NO_FATAL_FAILURE(Start("keepalive-vanished", kFast, s));
  // Idle for several intervals first: pings on a healthy connection with no
  // call traffic must not be taken for misbehaviour (too_many_pings).
  absl::SleepFor(absl::Seconds(2));
  EXPECT_THAT(s.worker->status(), IsOk());
  EXPECT_THAT(s.coordinator->LiveWorkers(), ElementsAre("a"));

  s.proxy->Blackhole();
  const absl::Time start = absl::Now();
  const absl::Status ended = s.worker->WaitUntilEnded(start + kNoticeWithin);
  EXPECT_FALSE(absl::IsDeadlineExceeded(ended)) << ended;
  EXPECT_FALSE(ended.ok());
  EXPECT_TRUE(NoLiveWorkersBy(*s.coordinator, start + kNoticeWithin))
      << "the coordinator still counts the vanished worker";
  s.worker.reset();
  s.proxy->Close();
}

TEST(KeepaliveTest, WithoutKeepaliveTheStreamWaitsForAVanishedPeer) {
  Peers s;
  ASSERT_NO_FATAL_FAILURE(Start("keepalive-off", Keepalive::Off(), s));
  s.proxy->Blackhole();
  // Longer than kFast's interval + timeout: still open on both ends.
  EXPECT_THAT(s.worker->WaitUntilEnded(absl::Now() + absl::Seconds(5)),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(s.coordinator->LiveWorkers(), ElementsAre("a"));
  // The peer's process ends after all: its connections close, and both
  // ends see it at once.
  s.proxy->Close();
  EXPECT_FALSE(absl::IsDeadlineExceeded(
      s.worker->WaitUntilEnded(absl::Now() + kNoticeWithin)));
  EXPECT_TRUE(NoLiveWorkersBy(*s.coordinator, absl::Now() + kNoticeWithin));
  EXPECT_THAT(s.coordinator->LiveWorkers(), IsEmpty());
}

}  // namespace
}  // namespace backfill
