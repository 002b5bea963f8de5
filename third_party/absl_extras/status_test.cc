#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointee;

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  BACKFILL_ASSIGN_OR_RETURN(int half, Half(x));
  BACKFILL_ASSIGN_OR_RETURN(half, Half(half));
  return half;
}

absl::Status CheckQuarter(int x, int* calls) {
  ++*calls;
  BACKFILL_RETURN_IF_ERROR(Quarter(x));
  BACKFILL_RETURN_IF_ERROR(absl::OkStatus());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeBox(int x) {
  if (x < 0) return absl::OutOfRangeError("negative");
  return std::make_unique<int>(x);
}

absl::StatusOr<int> Unbox(int x) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(x));
  return *box;
}

TEST(StatusMacrosTest, AssignOrReturnPropagatesErrorAndValue) {
  EXPECT_THAT(Quarter(8), IsOkAndHolds(2));
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("odd: 3")));
  EXPECT_THAT(Quarter(5), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("odd: 5")));
}

TEST(StatusMacrosTest, ReturnIfErrorAcceptsStatusAndStatusOr) {
  int calls = 0;
  EXPECT_THAT(CheckQuarter(4, &calls), IsOk());
  EXPECT_THAT(CheckQuarter(2, &calls),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(calls, 2);
}

TEST(StatusMacrosTest, AssignOrReturnMovesOnlyTypes) {
  EXPECT_THAT(Unbox(7), IsOkAndHolds(7));
  EXPECT_THAT(Unbox(-1), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(MakeBox(3), IsOkAndHolds(Pointee(Eq(3))));
}

TEST(StatusMatchersTest, MatchersDescribeMismatches) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::InternalError("x"), Not(IsOk()));
  EXPECT_THAT(Half(3), Not(IsOkAndHolds(1)));
  EXPECT_THAT(Half(4), Not(IsOkAndHolds(1)));
  EXPECT_THAT(absl::DataLossError("bad byte at offset 3"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("offset 3")));
  EXPECT_THAT(absl::DataLossError("x"),
              Not(StatusIs(absl::StatusCode::kInternal)));
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(IsOkAndHolds(1), Half(3),
                                             &listener));
  EXPECT_THAT(listener.str(), HasSubstr("odd: 3"));
}

TEST(StatusMatchersTest, AssertOkAndAssign) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(int value, Half(10));
  EXPECT_EQ(value, 5);
  BACKFILL_ASSERT_OK(absl::OkStatus());
}

}  // namespace
}  // namespace backfill
