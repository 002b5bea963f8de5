// How EtcdClient reads the status of one etcd gRPC call.
//
//   const absl::StatusCode code = EtcdCallCode(
//       static_cast<absl::StatusCode>(status.error_code()),
//       status.error_message());
#ifndef STORAGE_SHARED_INTERNAL_ETCD_STATUS_H_
#define STORAGE_SHARED_INTERNAL_ETCD_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace backfill::shared_internal {

// The code of an etcd answer (`code`, `message`) as the client acts on it:
// `code`, except that UNKNOWN with Go's context text "context deadline
// exceeded" is DEADLINE_EXCEEDED. etcd 3.4 answers so when the deadline the
// client's call carried expires inside the server before raft answers (a
// member that lost its quorum, for one): its gRPC layer maps only some of
// its errors to codes, and sends the rest as UNKNOWN with their text. The
// request may or may not have been applied, exactly as when the deadline
// expires on the client's side.
absl::StatusCode EtcdCallCode(absl::StatusCode code, absl::string_view message);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_ETCD_STATUS_H_
