#include "executor/backfill/progress_reporter.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

EpochPair At(uint64_t curr) { return EpochPair{Epoch(curr), Epoch(curr - 1)}; }

std::unique_ptr<JobProgressTracker> TwoActors() {
  absl::StatusOr<std::unique_ptr<JobProgressTracker>> tracker =
      JobProgressTracker::Create({{7, 100}, {8, 156}});
  EXPECT_TRUE(tracker.ok());
  return *std::move(tracker);
}

TEST(ProgressReporterTest, UpdatesMustBeMonotone) {
  auto tracker = TwoActors();
  ProgressReporter reporter(7, *tracker);
  EXPECT_THAT(reporter.Update(At(2), Epoch(1), 10), IsOk());
  EXPECT_THAT(reporter.Update(At(3), Epoch(2), 10), IsOk());  // Equal rows: ok.
  EXPECT_THAT(reporter.Update(At(4), Epoch(3), 9),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("consumed rows went backwards: actor 7, 9 "
                                 "after 10")));
  EXPECT_THAT(reporter.Update(At(4), Epoch(1), 20),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("consumed epoch went backwards")));
  // A rejected update changes nothing.
  EXPECT_EQ(tracker->consumed_rows(), 10u);
  EXPECT_THAT(reporter.Update(At(4), Epoch(3), 25), IsOk());
  EXPECT_EQ(tracker->consumed_rows(), 25u);
  std::optional<ActorProgress> progress = tracker->GetActorProgress(7);
  ASSERT_TRUE(progress.has_value());
  EXPECT_EQ(progress->state, ActorProgress::State::kConsumingUpstream);
  EXPECT_EQ(progress->consumed_epoch, Epoch(3));
  EXPECT_EQ(progress->last_epoch, At(4));
  EXPECT_EQ(progress->num_vnodes, 100u);
}

TEST(ProgressReporterTest, FinishIsIdempotentAndFinal) {
  auto tracker = TwoActors();
  ProgressReporter reporter(7, *tracker);
  ASSERT_THAT(reporter.Update(At(2), Epoch(1), 10), IsOk());
  EXPECT_THAT(reporter.Finish(At(3), 5),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_FALSE(reporter.is_finished());
  EXPECT_THAT(reporter.Finish(At(3), 12), IsOk());
  EXPECT_TRUE(reporter.is_finished());
  EXPECT_THAT(reporter.Finish(At(4), 12), IsOk());  // No second event.
  EXPECT_THAT(reporter.Update(At(5), Epoch(4), 12),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Update after Finish: actor 7")));
  EXPECT_EQ(tracker->num_done(), 1u);
  EXPECT_EQ(tracker->GetActorProgress(7)->state, ActorProgress::State::kDone);
  EXPECT_EQ(tracker->GetActorProgress(7)->consumed_rows, 12u);
}

TEST(JobProgressTrackerTest, DoneWhenEveryActorFinished) {
  auto tracker = TwoActors();
  EXPECT_EQ(tracker->num_actors(), 2u);
  EXPECT_EQ(tracker->total_vnodes(), 256u);
  EXPECT_EQ(tracker->GetActorProgress(7)->state, ActorProgress::State::kInit);
  EXPECT_FALSE(tracker->GetActorProgress(9).has_value());
  ProgressReporter first(7, *tracker), second(8, *tracker);
  ASSERT_THAT(first.Update(At(2), Epoch(1), 30), IsOk());
  ASSERT_THAT(second.Update(At(2), Epoch(1), 12), IsOk());
  EXPECT_EQ(tracker->consumed_rows(), 42u);
  EXPECT_DOUBLE_EQ(tracker->PercentEstimate(100), 42.0);
  EXPECT_EQ(tracker->ProgressString(100), "42.00% (42/100)");
  EXPECT_DOUBLE_EQ(tracker->PercentEstimate(10), 99.99);  // Capped.
  EXPECT_DOUBLE_EQ(tracker->PercentEstimate(0), 99.99);
  ASSERT_THAT(first.Finish(At(3), 30), IsOk());
  EXPECT_FALSE(tracker->IsDone());
  ASSERT_THAT(second.Finish(At(3), 20), IsOk());
  EXPECT_TRUE(tracker->IsDone());
  EXPECT_EQ(tracker->consumed_rows(), 50u);
  EXPECT_DOUBLE_EQ(tracker->PercentEstimate(1000), 100.0);
  EXPECT_EQ(tracker->ProgressString(1000), "100%");
}

// The rows each actor's persisted progress held when it started go with
// every event; the tracker sums them over the actors that reported.
TEST(JobProgressTrackerTest, PersistedRowsAreSummedOverTheActors) {
  auto tracker = TwoActors();
  ProgressReporter first(7, *tracker), second(8, *tracker);
  first.SetPersistedRows(30);
  second.SetPersistedRows(5);
  EXPECT_EQ(tracker->persisted_rows(), 0u);  // nobody reported yet
  ASSERT_THAT(first.Update(At(2), Epoch(1), 90), IsOk());
  EXPECT_EQ(tracker->persisted_rows(), 30u);
  EXPECT_EQ(tracker->GetActorProgress(7)->persisted_rows, 30u);
  ASSERT_THAT(second.Finish(At(2), 5), IsOk());
  EXPECT_EQ(tracker->persisted_rows(), 35u);
  ASSERT_THAT(first.Update(At(3), Epoch(2), 120), IsOk());  // counted once
  EXPECT_EQ(tracker->persisted_rows(), 35u);
  EXPECT_EQ(tracker->consumed_rows(), 125u);
}

TEST(JobProgressTrackerTest, Errors) {
  EXPECT_THAT(
      JobProgressTracker::Create({{7, 1}, {7, 2}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("actor 7")));
  auto tracker = TwoActors();
  ProgressReporter stranger(9, *tracker);
  EXPECT_THAT(stranger.Update(At(2), Epoch(1), 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("actor 9")));
  EXPECT_THAT(
      tracker->Report(ProgressEvent{.actor = 7, .epoch = At(2), .done = true}),
      IsOk());
  EXPECT_THAT(
      tracker->Report(ProgressEvent{.actor = 7, .epoch = At(3), .done = true}),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("after Done")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto empty, JobProgressTracker::Create({}));
  EXPECT_TRUE(empty->IsDone());
}

TEST(JobProgressTrackerTest, ActorsReportConcurrently) {
  constexpr int kNumActors = 8;
  std::vector<TrackedActor> actors;
  for (int i = 0; i < kNumActors; ++i) {
    actors.push_back({static_cast<ActorId>(i), 32});
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto tracker,
                                JobProgressTracker::Create(actors));
  std::vector<std::thread> threads;
  for (int i = 0; i < kNumActors; ++i) {
    threads.emplace_back([&tracker, i] {
      ProgressReporter reporter(static_cast<ActorId>(i), *tracker);
      for (uint64_t epoch = 2; epoch < 100; ++epoch) {
        ASSERT_THAT(reporter.Update(At(epoch), Epoch(epoch - 1), epoch),
                    IsOk());
        (void)tracker->IsDone();
      }
      ASSERT_THAT(reporter.Finish(At(100), 100), IsOk());
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(tracker->IsDone());
  EXPECT_EQ(tracker->consumed_rows(), 100u * kNumActors);
}

}  // namespace
}  // namespace backfill
