// The one conversion of a rocksdb::Status into an absl::Status. Every RocksDB
// call of the package reports its errors through it, so the mapping of codes
// (and the context in messages) is the same everywhere.
//
//   BACKFILL_RETURN_IF_ERROR(FromRocksDb(db.Write(options, &batch),
//                                        "checkpoint write of epoch 7"));
#ifndef STORAGE_ROCKSDB_STATUS_H_
#define STORAGE_ROCKSDB_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rocksdb/status.h"

namespace backfill {
namespace rocksdb_internal {

// OK for an OK `status`; otherwise "<operation>: rocksdb <status>" with:
//   NotFound -> NotFound, Corruption -> DataLoss,
//   NotSupported -> Unimplemented, InvalidArgument -> InvalidArgument,
//   IOError with subcode NoSpace (a full disk) -> ResourceExhausted,
//   any other IOError -> Internal, Busy / TimedOut / TryAgain /
//   ShutdownInProgress -> Unavailable, Aborted -> Aborted, the rest ->
//   Internal.
// `operation` says what was being done ("checkpoint write of epoch 7").
absl::Status FromRocksDb(const rocksdb::Status& status,
                         absl::string_view operation);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_STATUS_H_
