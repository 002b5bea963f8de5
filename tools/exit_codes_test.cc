#include "tools/exit_codes.h"

#include "gtest/gtest.h"

namespace backfill {
namespace {

// The values are an interface (README, scripts, the crash test).
TEST(ExitCodesTest, DocumentedValues) {
  EXPECT_EQ(static_cast<int>(ExitCode::kConsistent), 0);
  EXPECT_EQ(static_cast<int>(ExitCode::kInconsistent), 1);
  EXPECT_EQ(static_cast<int>(ExitCode::kError), 2);
  EXPECT_EQ(static_cast<int>(ExitCode::kInterrupted), 130);
  EXPECT_EQ(ExitCodeForStatus(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeForStatus(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::InternalError("x")), 2);
}

}  // namespace
}  // namespace backfill
