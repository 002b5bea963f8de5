// The libcurl HttpTransport of S3ObjectStore: SigV4 signing by libcurl
// (CURLOPT_AWS_SIGV4, curl >= 7.75), a pool of easy handles so connections
// are reused. The only target that depends on libcurl.
#ifndef STORAGE_SHARED_INTERNAL_CURL_HTTP_TRANSPORT_H_
#define STORAGE_SHARED_INTERNAL_CURL_HTTP_TRANSPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/shared/http_transport.h"

namespace backfill::shared_internal {

struct CurlHttpTransportOptions {
  // SigV4 scope: "aws:amz:<region>:s3". Required.
  std::string region = "";
  // Credentials; both required.
  std::string access_key = "";
  std::string secret_key = "";
  // Per request: connecting, and the whole exchange. Default 5 s and 60 s;
  // rounded to milliseconds, >= 1 ms.
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(60);
};

// Initialises libcurl once per process (thread-safe). Errors: Internal if
// libcurl cannot be initialised.
absl::StatusOr<std::unique_ptr<HttpTransport>> NewCurlHttpTransport(
    const CurlHttpTransportOptions& options);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_CURL_HTTP_TRANSPORT_H_
