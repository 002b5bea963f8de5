#include "storage/rocksdb/status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(FromRocksDbTest, OkIsOk) {
  EXPECT_THAT(FromRocksDb(rocksdb::Status::OK(), "anything"), IsOk());
}

TEST(FromRocksDbTest, MapsEveryCode) {
  struct Case {
    rocksdb::Status status;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {rocksdb::Status::NotFound("x"), absl::StatusCode::kNotFound},
      {rocksdb::Status::Corruption("x"), absl::StatusCode::kDataLoss},
      {rocksdb::Status::NotSupported("x"), absl::StatusCode::kUnimplemented},
      {rocksdb::Status::InvalidArgument("x"),
       absl::StatusCode::kInvalidArgument},
      {rocksdb::Status::IOError("x"), absl::StatusCode::kInternal},
      {rocksdb::Status::NoSpace("x"), absl::StatusCode::kResourceExhausted},
      {rocksdb::Status::Busy("x"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TimedOut("x"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TryAgain("x"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::ShutdownInProgress("x"),
       absl::StatusCode::kUnavailable},
      {rocksdb::Status::Aborted("x"), absl::StatusCode::kAborted},
      {rocksdb::Status::Incomplete("x"), absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.status.ToString());
    EXPECT_THAT(FromRocksDb(c.status, "op"), StatusIs(c.code));
  }
}

TEST(FromRocksDbTest, MessageNamesTheOperationAndRocksDbStatus) {
  EXPECT_THAT(
      FromRocksDb(rocksdb::Status::Corruption("bad block"), "scan of table 3"),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("scan of table 3: rocksdb "),
                     HasSubstr("Corruption: bad block"))));
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
