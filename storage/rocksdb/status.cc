#include "storage/rocksdb/status.h"

#include "absl/strings/str_cat.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

absl::StatusCode CodeOf(const rocksdb::Status& status) {
  switch (status.code()) {
    case rocksdb::Status::kNotFound:
      return absl::StatusCode::kNotFound;
    case rocksdb::Status::kCorruption:
      return absl::StatusCode::kDataLoss;
    case rocksdb::Status::kNotSupported:
      return absl::StatusCode::kUnimplemented;
    case rocksdb::Status::kInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
    case rocksdb::Status::kIOError:
      // A failed disk operation: the store is no longer trustworthy for
      // writes until reopened.
      return status.subcode() == rocksdb::Status::kNoSpace
                 ? absl::StatusCode::kResourceExhausted
                 : absl::StatusCode::kInternal;
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kTryAgain:
    case rocksdb::Status::kShutdownInProgress:
      return absl::StatusCode::kUnavailable;
    case rocksdb::Status::kAborted:
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status FromRocksDb(const rocksdb::Status& status,
                         absl::string_view operation) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(CodeOf(status),
                      absl::StrCat(operation, ": rocksdb ", status.ToString()));
}

}  // namespace rocksdb_internal
}  // namespace backfill
