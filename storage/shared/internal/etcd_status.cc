#include "storage/shared/internal/etcd_status.h"

namespace backfill::shared_internal {

absl::StatusCode EtcdCallCode(absl::StatusCode code,
                              absl::string_view message) {
  if (code == absl::StatusCode::kUnknown &&
      message == "context deadline exceeded") {
    return absl::StatusCode::kDeadlineExceeded;
  }
  return code;
}

}  // namespace backfill::shared_internal
