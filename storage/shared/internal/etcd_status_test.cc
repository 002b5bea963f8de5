#include "storage/shared/internal/etcd_status.h"

#include "gtest/gtest.h"

namespace backfill::shared_internal {
namespace {

TEST(EtcdCallCodeTest, AServerSideDeadlineIsADeadline) {
  // What etcd 3.4.23 answered a Txn on a member without quorum.
  EXPECT_EQ(
      EtcdCallCode(absl::StatusCode::kUnknown, "context deadline exceeded"),
      absl::StatusCode::kDeadlineExceeded);
}

TEST(EtcdCallCodeTest, EverythingElseKeepsItsCode) {
  EXPECT_EQ(EtcdCallCode(absl::StatusCode::kUnknown, "some other error"),
            absl::StatusCode::kUnknown);
  EXPECT_EQ(EtcdCallCode(absl::StatusCode::kUnknown,
                         "context deadline exceeded (and more)"),
            absl::StatusCode::kUnknown);
  EXPECT_EQ(EtcdCallCode(absl::StatusCode::kUnavailable,
                         "etcdserver: request timed out"),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(EtcdCallCode(absl::StatusCode::kFailedPrecondition,
                         "context deadline exceeded"),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(EtcdCallCode(absl::StatusCode::kOk, ""), absl::StatusCode::kOk);
}

}  // namespace
}  // namespace backfill::shared_internal
