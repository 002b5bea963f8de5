// The libcurl transport against a local HTTP server (civetweb on a free
// loopback port): what reaches the wire, and a SigV4 signature checked
// independently (the canonical request rebuilt from what the server
// received, HMAC-SHA256 with OpenSSL), as S3 and RGW check it.
#include "storage/shared/internal/curl_http_transport.h"

#include <civetweb.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/internal/sha256.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill::shared_internal {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

struct Received {
  std::string method;
  std::string path;
  std::string query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A one-handler HTTP server that records each request and answers with
// `status` and `body` (and a Content-Length).
class RecordingServer {
 public:
  RecordingServer() {
    static const bool initialized = [] {
      mg_init_library(0);
      return true;
    }();
    (void)initialized;
    const char* configuration[] = {"listening_ports", "127.0.0.1:0",
                                   "num_threads", "2", nullptr};
    mg_callbacks callbacks;
    std::memset(&callbacks, 0, sizeof(callbacks));
    callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
    context_ = mg_start(&callbacks, this, configuration);
    if (context_ == nullptr) return;
    mg_set_request_handler(context_, "/", &RecordingServer::Handle, this);
    mg_server_port ports[1];
    if (mg_get_server_ports(context_, 1, ports) == 1) port_ = ports[0].port;
  }
  ~RecordingServer() {
    if (context_ != nullptr) mg_stop(context_);
  }

  int port() const { return port_; }
  std::string url(absl::string_view path_and_query) const {
    return absl::StrCat("http://127.0.0.1:", port_, path_and_query);
  }
  void Respond(int status, std::string body) {
    MutexLock lock(&mu_);
    status_ = status;
    body_ = std::move(body);
  }
  Received last() {
    MutexLock lock(&mu_);
    return last_;
  }

 private:
  static int Handle(mg_connection* connection, void* self_pointer) {
    auto* self = static_cast<RecordingServer*>(self_pointer);
    const mg_request_info* info = mg_get_request_info(connection);
    Received received;
    received.method = info->request_method;
    received.path =
        info->local_uri_raw != nullptr ? info->local_uri_raw : info->local_uri;
    received.query = info->query_string != nullptr ? info->query_string : "";
    for (int i = 0; i < info->num_headers; ++i) {
      received.headers[absl::AsciiStrToLower(info->http_headers[i].name)] =
          info->http_headers[i].value;
    }
    char buffer[4096];
    for (int n; (n = mg_read(connection, buffer, sizeof(buffer))) > 0;) {
      received.body.append(buffer, n);
    }
    int status;
    std::string body;
    {
      MutexLock lock(&self->mu_);
      self->last_ = std::move(received);
      status = self->status_;
      body = self->body_;
    }
    mg_printf(connection,
              "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nX-Test: yes\r\n\r\n",
              status, body.size());
    if (std::strcmp(info->request_method, "HEAD") != 0) {
      mg_write(connection, body.data(), body.size());
    }
    return status;
  }

  mg_context* context_ = nullptr;
  int port_ = 0;
  Mutex mu_;
  int status_ ABSL_GUARDED_BY(mu_) = 200;
  std::string body_ ABSL_GUARDED_BY(mu_);
  Received last_ ABSL_GUARDED_BY(mu_);
};

std::string Hmac(absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
       &length);
  return std::string(reinterpret_cast<char*>(out), length);
}

// The SigV4 signature S3 expects for `request` as received, per the AWS
// documentation ("Create a signed AWS API request"), from its own
// Authorization header's date, scope and signed-header list.
std::string ExpectedSignature(const Received& request, absl::string_view secret,
                              std::string* error) {
  auto authorization = request.headers.find("authorization");
  auto amz_date = request.headers.find("x-amz-date");
  auto payload_hash = request.headers.find("x-amz-content-sha256");
  if (authorization == request.headers.end() ||
      amz_date == request.headers.end() ||
      payload_hash == request.headers.end()) {
    *error = "missing authorization, x-amz-date or x-amz-content-sha256";
    return "";
  }
  absl::string_view auth = authorization->second;
  auto field = [&](absl::string_view name) -> std::string {
    size_t at = auth.find(name);
    if (at == absl::string_view::npos) return "";
    absl::string_view rest = auth.substr(at + name.size());
    return std::string(rest.substr(0, rest.find(',')));
  };
  std::vector<std::string> credential =
      absl::StrSplit(field("Credential="), '/');
  std::string signed_headers = field("SignedHeaders=");
  if (credential.size() != 5) {
    *error = absl::StrCat("bad Credential in ", auth);
    return "";
  }
  std::vector<std::string> query_parts =
      absl::StrSplit(request.query, '&', absl::SkipEmpty());
  std::sort(query_parts.begin(), query_parts.end());
  std::string canonical_headers;
  for (absl::string_view name : absl::StrSplit(signed_headers, ';')) {
    auto header = request.headers.find(std::string(name));
    if (header == request.headers.end()) {
      *error = absl::StrCat("signed header not received: ", name);
      return "";
    }
    absl::StrAppend(&canonical_headers, name, ":",
                    absl::StripAsciiWhitespace(header->second), "\n");
  }
  const std::string canonical_request = absl::StrJoin(
      {request.method, request.path, absl::StrJoin(query_parts, "&"),
       canonical_headers, signed_headers, payload_hash->second},
      "\n");
  const std::string scope = absl::StrJoin(
      {credential[1], credential[2], credential[3], credential[4]}, "/");
  const std::string string_to_sign =
      absl::StrJoin({std::string("AWS4-HMAC-SHA256"), amz_date->second, scope,
                     Sha256Hex(canonical_request)},
                    "\n");
  std::string key = Hmac(absl::StrCat("AWS4", secret), credential[1]);
  key = Hmac(key, credential[2]);
  key = Hmac(key, credential[3]);
  key = Hmac(key, credential[4]);
  return absl::BytesToHexString(Hmac(key, string_to_sign));
}

std::string ReceivedSignature(const Received& request) {
  auto authorization = request.headers.find("authorization");
  if (authorization == request.headers.end()) return "";
  size_t at = authorization->second.find("Signature=");
  return at == std::string::npos ? "" : authorization->second.substr(at + 10);
}

class CurlHttpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(server_.port(), 0) << "civetweb did not start";
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        transport_,
        NewCurlHttpTransport({.region = "eu-test-1",
                              .access_key = "AKIDTEST",
                              .secret_key = "s3cr3t/key+",
                              .connect_timeout = absl::Seconds(5),
                              .request_timeout = absl::Seconds(20)}));
  }

  RecordingServer server_;
  std::unique_ptr<HttpTransport> transport_;
};

TEST_F(CurlHttpTransportTest, PutIsSignedWithSigV4OverTheBodyHash) {
  const std::string body("binary\0body\xff", 12);
  HttpRequest request{.method = "PUT",
                      .url = server_.url("/bucket/sst/0001.sst"),
                      .headers = {{"x-amz-content-sha256", Sha256Hex(body)},
                                  {"If-None-Match", "*"},
                                  {"Content-Type", "application/octet-stream"}},
                      .body = body};
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse response,
                                transport_->Send(request));
  EXPECT_EQ(response.status, 200);
  Received received = server_.last();
  EXPECT_EQ(received.method, "PUT");
  EXPECT_EQ(received.path, "/bucket/sst/0001.sst");
  EXPECT_EQ(received.body, body);
  EXPECT_EQ(received.headers["if-none-match"], "*");
  EXPECT_EQ(received.headers["x-amz-content-sha256"], Sha256Hex(body));
  const std::string& authorization = received.headers["authorization"];
  EXPECT_THAT(authorization,
              HasSubstr("AWS4-HMAC-SHA256 Credential=AKIDTEST/"));
  EXPECT_THAT(authorization, HasSubstr("/eu-test-1/s3/aws4_request"));
  EXPECT_THAT(authorization, HasSubstr("x-amz-content-sha256"));
  EXPECT_THAT(authorization, HasSubstr("x-amz-date"));
  std::string error;
  const std::string expected =
      ExpectedSignature(received, "s3cr3t/key+", &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(ReceivedSignature(received), expected);
  EXPECT_NE(ExpectedSignature(received, "other secret", &error), expected);
}

TEST_F(CurlHttpTransportTest, ListQueryIsSignedAsSent) {
  HttpRequest request{.method = "GET",
                      .url = server_.url("/bucket?continuation-token=a%2Fb%3D&"
                                         "list-type=2&max-keys=7&prefix=p%2F"),
                      .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
  server_.Respond(200, "<ListBucketResult/>");
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse response,
                                transport_->Send(request));
  EXPECT_EQ(response.body, "<ListBucketResult/>");
  Received received = server_.last();
  EXPECT_EQ(received.query,
            "continuation-token=a%2Fb%3D&list-type=2&max-keys=7&prefix=p%2F");
  std::string error;
  EXPECT_EQ(ReceivedSignature(received),
            ExpectedSignature(received, "s3cr3t/key+", &error));
  EXPECT_EQ(error, "");
}

TEST_F(CurlHttpTransportTest, StatusHeadersAndBodyComeBack) {
  server_.Respond(404, "<Error><Code>NoSuchKey</Code></Error>");
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      HttpResponse response,
      transport_->Send({.method = "GET",
                        .url = server_.url("/bucket/missing"),
                        .headers = {{"x-amz-content-sha256", Sha256Hex("")}}}));
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.body, "<Error><Code>NoSuchKey</Code></Error>");
  ASSERT_NE(response.FindHeader("x-test"), nullptr);
  EXPECT_EQ(*response.FindHeader("x-test"), "yes");

  server_.Respond(200, "12345");
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      response,
      transport_->Send({.method = "HEAD",
                        .url = server_.url("/bucket/k"),
                        .headers = {{"x-amz-content-sha256", Sha256Hex("")}}}));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "");
  ASSERT_NE(response.FindHeader("content-length"), nullptr);
  EXPECT_EQ(*response.FindHeader("content-length"), "5");
  EXPECT_EQ(server_.last().method, "HEAD");

  server_.Respond(204, "");
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      response,
      transport_->Send({.method = "DELETE",
                        .url = server_.url("/bucket/k"),
                        .headers = {{"x-amz-content-sha256", Sha256Hex("")}}}));
  EXPECT_EQ(response.status, 204);
  EXPECT_EQ(server_.last().method, "DELETE");
}

TEST_F(CurlHttpTransportTest, NoServerIsUnavailableAndBadRequestsAreRefused) {
  // Port 1 on loopback: connection refused.
  EXPECT_THAT(
      transport_->Send({.method = "GET", .url = "http://127.0.0.1:1/b/k"}),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("127.0.0.1:1")));
  EXPECT_THAT(transport_->Send({.method = "POST", .url = server_.url("/b/k")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("POST")));
  EXPECT_THAT(transport_->Send({.method = "GET", .url = "nota://url"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewCurlHttpTransport(
                  {.region = "r", .access_key = "", .secret_key = "s"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill::shared_internal
