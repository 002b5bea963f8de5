#include "storage/shared/testing/fake_s3_server.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "storage/shared/internal/sha256.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace {

std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    int value = 0;
    if (text[i] == '%' && i + 2 < text.size() + 0 &&
        absl::SimpleHexAtoi(text.substr(i + 1, 2), &value)) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string XmlEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

HttpResponse Error(int status, absl::string_view code) {
  HttpResponse response;
  response.status = status;
  response.body =
      absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>",
                   code, "</Code><Message></Message></Error>");
  return response;
}

const std::string* Header(const HttpRequest& request, absl::string_view name) {
  for (const auto& [header, value] : request.headers) {
    if (absl::EqualsIgnoreCase(header, name)) return &value;
  }
  return nullptr;
}

class FakeTransport final : public HttpTransport {
 public:
  explicit FakeTransport(std::shared_ptr<FakeS3Server> server)
      : server_(std::move(server)) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    return server_->Handle(request);
  }

 private:
  std::shared_ptr<FakeS3Server> server_;
};

}  // namespace

FakeS3Server::FakeS3Server(std::string endpoint, std::string bucket)
    : endpoint_(std::move(endpoint)), bucket_(std::move(bucket)) {}

std::unique_ptr<HttpTransport> FakeS3Server::NewTransport() {
  return std::make_unique<FakeTransport>(shared_from_this());
}

void FakeS3Server::InjectFaults(std::vector<Fault> faults) {
  MutexLock lock(&mu_);
  for (Fault& fault : faults) faults_.push_back(std::move(fault));
}

std::vector<FakeS3Server::RecordedRequest> FakeS3Server::requests() {
  MutexLock lock(&mu_);
  return requests_;
}

void FakeS3Server::ClearRequests() {
  MutexLock lock(&mu_);
  requests_.clear();
}

std::map<std::string, std::string> FakeS3Server::objects() {
  MutexLock lock(&mu_);
  return objects_;
}

absl::StatusOr<HttpResponse> FakeS3Server::Handle(const HttpRequest& request) {
  MutexLock lock(&mu_);
  requests_.push_back(RecordedRequest{request.method, request.url,
                                      request.headers, request.body.size()});
  if (!faults_.empty()) {
    Fault fault = std::move(faults_.front());
    faults_.pop_front();
    if (fault.apply_first) Apply(request);
    if (!fault.transport_error.ok()) return fault.transport_error;
    return Error(fault.http_status, fault.s3_code);
  }
  return Apply(request);
}

HttpResponse FakeS3Server::Apply(const HttpRequest& request) {
  const std::string* sha = Header(request, "x-amz-content-sha256");
  if (sha == nullptr) return Error(400, "MissingContentSHA256");
  if (*sha != shared_internal::Sha256Hex(request.body)) {
    return Error(400, "XAmzContentSHA256Mismatch");
  }
  absl::string_view url = request.url;
  if (!absl::ConsumePrefix(&url, endpoint_) ||
      !absl::ConsumePrefix(&url, "/")) {
    return Error(400, "WrongEndpoint");
  }
  absl::string_view query;
  if (size_t question = url.find('?'); question != absl::string_view::npos) {
    query = url.substr(question + 1);
    url = url.substr(0, question);
  }
  absl::string_view bucket = url.substr(0, url.find('/'));
  const bool bucket_only = url.find('/') == absl::string_view::npos;
  if (bucket != bucket_) return Error(404, "NoSuchBucket");
  if (bucket_only && request.method == "PUT") {
    HttpResponse ok;
    ok.status = 200;
    return ok;
  }
  if (bucket_only && request.method == "GET") {
    std::map<std::string, std::string> params;
    for (absl::string_view pair :
         absl::StrSplit(query, '&', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(pair, absl::MaxSplits('=', 1));
      params[kv.first] = PercentDecode(kv.second);
    }
    if (params["list-type"] != "2") return Error(400, "InvalidArgument");
    int max_keys = 1000;
    if (params.count("max-keys"))
      (void)absl::SimpleAtoi(params["max-keys"], &max_keys);
    const std::string& prefix = params["prefix"];
    // Our tokens are the last key returned, like RGW's.
    auto it = params.count("continuation-token")
                  ? objects_.upper_bound(params["continuation-token"])
                  : objects_.lower_bound(prefix);
    std::string contents;
    int count = 0;
    std::string last;
    bool truncated = false;
    for (; it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
      if (count == max_keys) {
        truncated = true;
        break;
      }
      absl::StrAppend(&contents, "<Contents><Key>", XmlEscape(it->first),
                      "</Key><Size>", it->second.size(), "</Size></Contents>");
      last = it->first;
      ++count;
    }
    HttpResponse response;
    response.status = 200;
    response.body = absl::StrCat(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>",
        bucket_, "</Name><IsTruncated>", truncated ? "true" : "false",
        "</IsTruncated>", contents,
        truncated ? absl::StrCat("<NextContinuationToken>", XmlEscape(last),
                                 "</NextContinuationToken>")
                  : "",
        "<KeyCount>", count, "</KeyCount></ListBucketResult>");
    return response;
  }
  if (bucket_only) return Error(405, "MethodNotAllowed");
  const std::string key(url.substr(url.find('/') + 1));
  if (key.size() > 1024) return Error(400, "KeyTooLongError");  // S3's limit
  HttpResponse response;
  if (request.method == "PUT") {
    const std::string* if_none_match = Header(request, "If-None-Match");
    if (if_none_match != nullptr && *if_none_match == "*" &&
        objects_.count(key)) {
      return Error(412, "PreconditionFailed");
    }
    objects_[key] = std::string(request.body);
    response.status = 200;
    return response;
  }
  if (request.method == "DELETE") {
    objects_.erase(key);
    response.status = 204;
    return response;
  }
  auto found = objects_.find(key);
  if (found == objects_.end()) {
    return request.method == "HEAD" ? HttpResponse{404, {}, ""}
                                    : Error(404, "NoSuchKey");
  }
  const std::string& data = found->second;
  if (request.method == "HEAD") {
    response.status = 200;
    response.headers.emplace_back("content-length", absl::StrCat(data.size()));
    return response;
  }
  if (request.method != "GET") return Error(405, "MethodNotAllowed");
  const std::string* range = Header(request, "Range");
  if (range == nullptr) {
    response.status = 200;
    response.body = data;
    return response;
  }
  absl::string_view spec = *range;
  uint64_t first = 0, last = 0;
  std::pair<std::string, std::string> bounds;
  if (!absl::ConsumePrefix(&spec, "bytes=")) return Error(400, "InvalidRange");
  bounds = absl::StrSplit(spec, absl::MaxSplits('-', 1));
  if (!absl::SimpleAtoi(bounds.first, &first) ||
      !absl::SimpleAtoi(bounds.second, &last) || last < first) {
    return Error(400, "InvalidRange");
  }
  if (first >= data.size()) return Error(416, "InvalidRange");
  response.status = 206;
  response.body =
      data.substr(first, std::min<uint64_t>(last, data.size() - 1) - first + 1);
  return response;
}

}  // namespace backfill
