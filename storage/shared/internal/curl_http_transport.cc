#include "storage/shared/internal/curl_http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill::shared_internal {
namespace {

// No response came back: the request may or may not have been applied.
bool IsNoResponse(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

size_t AppendHeader(char* data, size_t size, size_t count, void* out) {
  auto* headers =
      static_cast<std::vector<std::pair<std::string, std::string>>*>(out);
  absl::string_view line(data, size * count);
  if (absl::StartsWith(line, "HTTP/")) {
    headers->clear();  // a new response (after 100 Continue or a redirect)
  } else if (size_t colon = line.find(':'); colon != absl::string_view::npos) {
    headers->emplace_back(
        absl::AsciiStrToLower(line.substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * count;
}

class CurlHttpTransport final : public HttpTransport {
 public:
  explicit CurlHttpTransport(const CurlHttpTransportOptions& options)
      : options_(options),
        sigv4_(absl::StrCat("aws:amz:", options.region, ":s3")) {}

  ~CurlHttpTransport() override {
    for (CURL* handle : idle_) curl_easy_cleanup(handle);
  }

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    CURL* handle = Acquire();
    if (handle == nullptr)
      return absl::ResourceExhaustedError("curl_easy_init failed");
    absl::Cleanup release = [this, handle] { Release(handle); };

    curl_slist* headers = nullptr;
    absl::Cleanup free_headers = [&headers] { curl_slist_free_all(headers); };
    for (const auto& [name, value] : request.headers) {
      headers =
          curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
    }
    // No "Expect:" override to skip 100-continue: libcurl 7.88's SigV4 would
    // sign the removal directive as an empty header and RGW would refuse
    // the signature.

    HttpResponse response;
    curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(
        handle, CURLOPT_CONNECTTIMEOUT_MS,
        std::max<long>(1, absl::ToInt64Milliseconds(options_.connect_timeout)));
    curl_easy_setopt(
        handle, CURLOPT_TIMEOUT_MS,
        std::max<long>(1, absl::ToInt64Milliseconds(options_.request_timeout)));
    curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4_.c_str());
    curl_easy_setopt(handle, CURLOPT_USERNAME, options_.access_key.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, options_.secret_key.c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &AppendBody);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &AppendHeader);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &response.headers);
    if (request.method == "GET") {
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "HEAD") {
      curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
    } else if (request.method == "PUT") {
      // The body as POSTFIELDS under method PUT: libcurl's SigV4 then hashes
      // exactly these bytes (it does not hash a streamed upload).
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    } else if (request.method == "DELETE") {
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported HTTP method ", request.method));
    }
    char error_buffer[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);

    CURLcode code = curl_easy_perform(handle);
    if (code != CURLE_OK) {
      std::string message = absl::StrCat(
          request.method, " ", request.url, ": ", curl_easy_strerror(code),
          error_buffer[0] != '\0' ? absl::StrCat(" (", error_buffer, ")") : "");
      if (code == CURLE_OPERATION_TIMEDOUT) {
        return absl::DeadlineExceededError(message);
      }
      if (IsNoResponse(code)) return absl::UnavailableError(message);
      return absl::InvalidArgumentError(message);
    }
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    return response;
  }

 private:
  CURL* Acquire() {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    return curl_easy_init();
  }

  void Release(CURL* handle) {
    // Keeps the connection cache; clears every option for the next request.
    curl_easy_reset(handle);
    MutexLock lock(&mu_);
    idle_.push_back(handle);
  }

  const CurlHttpTransportOptions options_;
  const std::string sigv4_;
  Mutex mu_;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<HttpTransport>> NewCurlHttpTransport(
    const CurlHttpTransportOptions& options) {
  // curl_global_init is not thread-safe: once per process, never cleaned up
  // (other libraries in the process may use libcurl too).
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat("curl_global_init: ", curl_easy_strerror(init)));
  }
  if (options.region.empty() || options.access_key.empty() ||
      options.secret_key.empty()) {
    return absl::InvalidArgumentError(
        "CurlHttpTransportOptions: region, access_key and secret_key are "
        "required");
  }
  return std::unique_ptr<HttpTransport>(new CurlHttpTransport(options));
}

}  // namespace backfill::shared_internal
