// HttpTransport: how S3ObjectStore talks HTTP. The production transport is
// libcurl (internal/curl_http_transport.h), which signs every request with
// AWS SigV4; tests pass a scripted fake to S3ObjectStore::Create.
//
//   HttpRequest request{.method = "GET", .url = "http://127.0.0.1:7480/b/k"};
//   BACKFILL_ASSIGN_OR_RETURN(HttpResponse response, transport.Send(request));
#ifndef STORAGE_SHARED_HTTP_TRANSPORT_H_
#define STORAGE_SHARED_HTTP_TRANSPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

struct HttpRequest {
  // "GET", "HEAD", "PUT" or "DELETE".
  std::string method = "";
  // The full URL, query included, already percent-encoded in canonical form.
  std::string url = "";
  // Extra headers, sent as given (name: value).
  std::vector<std::pair<std::string, std::string>> headers = {};
  // The body of a PUT (may be empty). Must stay valid during Send.
  absl::string_view body = {};
};

struct HttpResponse {
  int status = 0;
  // Header names in lower case, values trimmed, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header named `name` (lower case), or nullptr.
  const std::string* FindHeader(absl::string_view name) const {
    for (const auto& [header, value] : headers) {
      if (header == name) return &value;
    }
    return nullptr;
  }
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;

  // Sends `request` once (no retries) and returns the response, whatever
  // its status. Errors: Unavailable or DeadlineExceeded when no response
  // arrived (connection refused or reset, timeout): the request may or may
  // not have been applied; InvalidArgument for a request that cannot be
  // sent (bad URL). Thread-safe.
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_HTTP_TRANSPORT_H_
