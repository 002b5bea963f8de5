// Percent-encoding for S3 request URLs in SigV4's canonical form.
#ifndef STORAGE_SHARED_INTERNAL_URI_ENCODE_H_
#define STORAGE_SHARED_INTERNAL_URI_ENCODE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace backfill::shared_internal {

// Percent-encodes every byte but [A-Za-z0-9-._~] with upper-case hex, as
// SigV4's canonical query string requires ('/' becomes %2F). Sending the
// query already canonical keeps the signature right whether or not the
// signer re-encodes it.
std::string UriEncode(absl::string_view text);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_URI_ENCODE_H_
