#include "storage/shared/s3_object_store.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "storage/shared/internal/curl_http_transport.h"
#include "storage/shared/internal/retry_policy.h"
#include "storage/shared/internal/s3_xml.h"
#include "storage/shared/internal/sha256.h"
#include "storage/shared/internal/uri_encode.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

using shared_internal::BackoffDelay;
using shared_internal::IsTransientHttpStatus;
using shared_internal::IsTransientS3ErrorCode;
using shared_internal::IsTransientTransportError;
using shared_internal::ParseS3Error;
using shared_internal::Sha256Hex;
using shared_internal::UriEncode;

bool IsValidBucket(absl::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '-')) {
      return false;
    }
  }
  return bucket.front() != '.' && bucket.front() != '-' &&
         bucket.back() != '.' && bucket.back() != '-';
}

absl::Status ValidateOptions(const S3ObjectStoreOptions& options) {
  auto invalid = [](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("S3ObjectStoreOptions.", what));
  };
  if (!absl::StartsWith(options.endpoint, "http://") &&
      !absl::StartsWith(options.endpoint, "https://")) {
    return invalid(absl::StrCat("endpoint is not http(s)://HOST[:PORT]: \"",
                                options.endpoint, "\""));
  }
  absl::string_view authority = options.endpoint;
  authority.remove_prefix(authority.find("//") + 2);
  if (authority.empty() || absl::StrContains(authority, "/")) {
    return invalid(absl::StrCat("endpoint must be http(s)://HOST[:PORT] ",
                                "with no path: \"", options.endpoint, "\""));
  }
  if (!IsValidBucket(options.bucket)) {
    return invalid(
        absl::StrCat("bucket is not 3-63 characters of [a-z0-9.-]: \"",
                     options.bucket, "\""));
  }
  if (options.region.empty()) return invalid("region is empty");
  if (options.access_key.empty() || options.secret_key.empty()) {
    return invalid("access_key and secret_key are required");
  }
  if (absl::Status status = ValidateObjectKeyPrefix(options.key_prefix);
      !status.ok()) {
    return invalid(absl::StrCat("key_prefix: ", status.message()));
  }
  if (options.key_prefix.size() > kMaxObjectKeyPrefixLength) {
    return invalid(absl::StrCat("key_prefix longer than ",
                                kMaxObjectKeyPrefixLength,
                                " bytes: ", options.key_prefix.size()));
  }
  if (options.max_keys_per_page < 1 || options.max_keys_per_page > 1000) {
    return invalid(absl::StrCat("max_keys_per_page out of 1..1000: ",
                                options.max_keys_per_page));
  }
  if (options.retry.initial_backoff <= absl::ZeroDuration() ||
      options.retry.max_backoff < options.retry.initial_backoff ||
      options.retry.deadline < absl::ZeroDuration()) {
    return invalid(
        "retry needs 0 < initial_backoff <= max_backoff and deadline >= 0");
  }
  return absl::OkStatus();
}

absl::StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
    case 412:
      return absl::StatusCode::kFailedPrecondition;
    case 416:
      return absl::StatusCode::kOutOfRange;
    case 501:
      return absl::StatusCode::kUnimplemented;
    default:
      return status >= 500 ? absl::StatusCode::kUnavailable
                           : absl::StatusCode::kUnknown;
  }
}

bool IsSuccess(int status) { return status >= 200 && status <= 299; }

std::string DescribeResponse(const HttpResponse& response) {
  shared_internal::S3Error error = ParseS3Error(response.body);
  std::string out = absl::StrCat("HTTP ", response.status);
  if (!error.code.empty()) absl::StrAppend(&out, " ", error.code);
  if (!error.message.empty()) absl::StrAppend(&out, ": ", error.message);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<S3ObjectStore>> S3ObjectStore::Create(
    const S3ObjectStoreOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateOptions(options));
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> transport,
                            shared_internal::NewCurlHttpTransport(
                                {.region = options.region,
                                 .access_key = options.access_key,
                                 .secret_key = options.secret_key,
                                 .connect_timeout = options.connect_timeout,
                                 .request_timeout = options.request_timeout}));
  return Create(options, std::move(transport));
}

absl::StatusOr<std::unique_ptr<S3ObjectStore>> S3ObjectStore::Create(
    const S3ObjectStoreOptions& options,
    std::unique_ptr<HttpTransport> transport) {
  BACKFILL_RETURN_IF_ERROR(ValidateOptions(options));
  if (transport == nullptr) {
    return absl::InvalidArgumentError("S3ObjectStore: null transport");
  }
  std::unique_ptr<S3ObjectStore> store(
      new S3ObjectStore(options, std::move(transport)));
  if (options.create_bucket) {
    const std::string bucket_name = absl::StrCat("s3://", options.bucket);
    HttpRequest request{
        .method = "PUT",
        .url = absl::StrCat(options.endpoint, "/", options.bucket),
        .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
    BACKFILL_ASSIGN_OR_RETURN(Outcome outcome,
                              store->Execute(request, bucket_name));
    // RGW answers 200 for a bucket we own already, AWS 409
    // BucketAlreadyOwnedByYou.
    if (!IsSuccess(outcome.response.status) &&
        ParseS3Error(outcome.response.body).code != "BucketAlreadyOwnedByYou") {
      return store->ErrorFor(outcome.response, "create bucket", bucket_name);
    }
  }
  return store;
}

S3ObjectStore::S3ObjectStore(const S3ObjectStoreOptions& options,
                             std::unique_ptr<HttpTransport> transport)
    : options_(options),
      transport_(std::move(transport)),
      clock_(options.clock != nullptr ? *options.clock : Clock::Real()) {}

std::string S3ObjectStore::DebugString() const {
  return absl::StrCat("s3://", options_.bucket, "/", options_.key_prefix);
}

std::string S3ObjectStore::ObjectName(absl::string_view key) const {
  return absl::StrCat("s3://", options_.bucket, "/", options_.key_prefix, key);
}

std::string S3ObjectStore::ObjectUrl(absl::string_view key) const {
  // Keys and the prefix hold only URL-safe characters (ValidateObjectKey).
  return absl::StrCat(options_.endpoint, "/", options_.bucket, "/",
                      options_.key_prefix, key);
}

absl::Status S3ObjectStore::ErrorFor(const HttpResponse& response,
                                     absl::string_view method,
                                     absl::string_view object) const {
  return absl::Status(
      CodeForHttpStatus(response.status),
      absl::StrCat(object, ": ", method, ": ", DescribeResponse(response)));
}

absl::StatusOr<S3ObjectStore::Outcome> S3ObjectStore::Execute(
    const HttpRequest& request, absl::string_view object) {
  thread_local absl::BitGen random;
  const absl::Time start = clock_.Now();
  const absl::Time deadline = start + options_.retry.deadline;
  Outcome outcome;
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<HttpResponse> response = transport_->Send(request);
    std::string failure;
    if (!response.ok()) {
      if (!IsTransientTransportError(response.status())) {
        return absl::Status(response.status().code(),
                            absl::StrCat(object, ": ", request.method, ": ",
                                         response.status().message()));
      }
      failure = std::string(response.status().message());
    } else if (IsTransientHttpStatus(response->status) ||
               (!IsSuccess(response->status) &&
                IsTransientS3ErrorCode(ParseS3Error(response->body).code))) {
      failure = DescribeResponse(*response);
    } else {
      outcome.response = *std::move(response);
      return outcome;
    }
    outcome.earlier_attempt_may_have_applied = true;
    const absl::Duration delay =
        BackoffDelay(options_.retry.initial_backoff, options_.retry.max_backoff,
                     attempt, absl::Uniform(random, 0.0, 1.0));
    const absl::Time now = clock_.Now();
    if (now + delay > deadline) {
      return absl::UnavailableError(absl::StrCat(
          object, ": ", request.method, ": failed ", attempt + 1,
          " attempt(s) over ", absl::FormatDuration(now - start),
          " (retry deadline ", absl::FormatDuration(options_.retry.deadline),
          "); last: ", failure));
    }
    clock_.SleepUntil(now + delay);
  }
}

absl::Status S3ObjectStore::PutImpl(absl::string_view key,
                                    absl::string_view data, bool if_absent) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  HttpRequest request{.method = "PUT",
                      .url = ObjectUrl(key),
                      .headers = {{"x-amz-content-sha256", Sha256Hex(data)},
                                  {"Content-Type", "application/octet-stream"}},
                      .body = data};
  if (if_absent) request.headers.emplace_back("If-None-Match", "*");
  const std::string object = ObjectName(key);
  BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, object));
  if (IsSuccess(outcome.response.status)) return absl::OkStatus();
  if (if_absent && outcome.response.status == 412) {
    if (outcome.earlier_attempt_may_have_applied) {
      // Did our own earlier attempt create it? Same bytes: yes (or someone
      // wrote identical bytes, which is the same object).
      absl::StatusOr<std::string> existing = Get(key);
      if (existing.ok() && *existing == data) return absl::OkStatus();
    }
    return absl::FailedPreconditionError(
        absl::StrCat(object, ": PUT If-None-Match: object already exists (",
                     DescribeResponse(outcome.response), ")"));
  }
  return ErrorFor(outcome.response, "PUT", object);
}

absl::Status S3ObjectStore::Put(absl::string_view key, absl::string_view data) {
  return PutImpl(key, data, /*if_absent=*/false);
}

absl::Status S3ObjectStore::PutIfAbsent(absl::string_view key,
                                        absl::string_view data) {
  return PutImpl(key, data, /*if_absent=*/true);
}

absl::StatusOr<std::string> S3ObjectStore::Get(absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  HttpRequest request{.method = "GET",
                      .url = ObjectUrl(key),
                      .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
  const std::string object = ObjectName(key);
  BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, object));
  if (outcome.response.status != 200) {
    return ErrorFor(outcome.response, "GET", object);
  }
  return std::move(outcome.response.body);
}

absl::StatusOr<std::string> S3ObjectStore::GetRange(absl::string_view key,
                                                    uint64_t offset,
                                                    uint64_t length) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  const std::string object = ObjectName(key);
  auto past_end = [&](uint64_t size) -> absl::StatusOr<std::string> {
    if (offset <= size) return std::string();
    return absl::OutOfRangeError(absl::StrCat(
        object, ": range starts at ", offset, " past its end: size ", size));
  };
  if (length == 0) {
    // HTTP cannot ask for zero bytes; the size decides.
    BACKFILL_ASSIGN_OR_RETURN(ObjectInfo info, Head(key));
    return past_end(info.size);
  }
  const uint64_t last =
      length - 1 > std::numeric_limits<uint64_t>::max() - offset
          ? std::numeric_limits<uint64_t>::max()
          : offset + length - 1;
  HttpRequest request{
      .method = "GET",
      .url = ObjectUrl(key),
      .headers = {{"x-amz-content-sha256", Sha256Hex("")},
                  {"Range", absl::StrCat("bytes=", offset, "-", last)}}};
  BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, object));
  HttpResponse& response = outcome.response;
  if (response.status == 416) {
    // Offset at or past the end: "" at the end, OutOfRange past it.
    BACKFILL_ASSIGN_OR_RETURN(ObjectInfo info, Head(key));
    return past_end(info.size);
  }
  if (response.status == 200) {
    // A server that ignored Range sent the whole object: cut it here.
    if (offset > response.body.size()) return past_end(response.body.size());
    return response.body.substr(offset, length);
  }
  if (response.status != 206) return ErrorFor(response, "GET range", object);
  if (response.body.size() > length) {
    return absl::DataLossError(absl::StrCat(object, ": GET range ", offset, "+",
                                            length, " returned ",
                                            response.body.size(), " bytes"));
  }
  return std::move(response.body);
}

absl::StatusOr<ObjectInfo> S3ObjectStore::Head(absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  HttpRequest request{.method = "HEAD",
                      .url = ObjectUrl(key),
                      .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
  const std::string object = ObjectName(key);
  BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, object));
  if (outcome.response.status != 200) {
    return ErrorFor(outcome.response, "HEAD", object);
  }
  const std::string* length = outcome.response.FindHeader("content-length");
  uint64_t size = 0;
  if (length == nullptr || !absl::SimpleAtoi(*length, &size)) {
    return absl::DataLossError(
        absl::StrCat(object, ": HEAD: no numeric Content-Length: \"",
                     length == nullptr ? "" : *length, "\""));
  }
  return ObjectInfo{std::string(key), size};
}

absl::StatusOr<std::vector<ObjectInfo>> S3ObjectStore::List(
    absl::string_view prefix) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKeyPrefix(prefix));
  const std::string full_prefix = absl::StrCat(options_.key_prefix, prefix);
  const std::string listing = absl::StrCat(DebugString(), prefix, "*");
  std::vector<ObjectInfo> out;
  std::string token;
  do {
    // The query in SigV4's canonical form: parameters sorted by name,
    // values percent-encoded.
    std::string query;
    if (!token.empty()) {
      absl::StrAppend(&query, "continuation-token=", UriEncode(token), "&");
    }
    absl::StrAppend(&query,
                    "list-type=2&max-keys=", options_.max_keys_per_page);
    if (!full_prefix.empty()) {
      absl::StrAppend(&query, "&prefix=", UriEncode(full_prefix));
    }
    HttpRequest request{.method = "GET",
                        .url = absl::StrCat(options_.endpoint, "/",
                                            options_.bucket, "?", query),
                        .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
    BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, listing));
    if (outcome.response.status != 200) {
      return ErrorFor(outcome.response, "LIST", listing);
    }
    absl::StatusOr<shared_internal::ListObjectsPage> page =
        shared_internal::ParseListObjectsV2(outcome.response.body);
    if (!page.ok()) {
      return absl::DataLossError(
          absl::StrCat(listing, ": ", page.status().message()));
    }
    for (ObjectInfo& info : page->objects) {
      if (!absl::StartsWith(info.key, full_prefix)) {
        return absl::DataLossError(absl::StrCat(
            listing, ": listed key \"", info.key, "\" lacks the prefix"));
      }
      info.key.erase(0, options_.key_prefix.size());
      if (!out.empty() && info.key <= out.back().key) {
        return absl::DataLossError(
            absl::StrCat(listing, ": listing out of order at \"", info.key,
                         "\" after \"", out.back().key, "\""));
      }
      out.push_back(std::move(info));
    }
    if (page->is_truncated && page->next_continuation_token == token) {
      return absl::DataLossError(absl::StrCat(
          listing, ": continuation token repeats: \"", token, "\""));
    }
    token = page->is_truncated ? page->next_continuation_token : "";
  } while (!token.empty());
  return out;
}

absl::Status S3ObjectStore::Delete(absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  HttpRequest request{.method = "DELETE",
                      .url = ObjectUrl(key),
                      .headers = {{"x-amz-content-sha256", Sha256Hex("")}}};
  const std::string object = ObjectName(key);
  BACKFILL_ASSIGN_OR_RETURN(Outcome outcome, Execute(request, object));
  if (IsSuccess(outcome.response.status) || outcome.response.status == 404) {
    return absl::OkStatus();
  }
  return ErrorFor(outcome.response, "DELETE", object);
}

}  // namespace backfill
