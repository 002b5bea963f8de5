// SHA-256 of S3 payloads (the x-amz-content-sha256 header of SigV4), over
// OpenSSL's libcrypto.
#ifndef STORAGE_SHARED_INTERNAL_SHA256_H_
#define STORAGE_SHARED_INTERNAL_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace backfill::shared_internal {

// The SHA-256 digest of `data` as 64 lower-case hex digits.
std::string Sha256Hex(absl::string_view data);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_SHA256_H_
