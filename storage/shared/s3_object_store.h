// S3ObjectStore: an ObjectStore in an S3 bucket (AWS S3, Ceph RGW, ...),
// path-style (ENDPOINT/BUCKET/KEY), every request signed with AWS SigV4 and
// carrying x-amz-content-sha256 (RGW requires it).
//
//   BACKFILL_ASSIGN_OR_RETURN(auto store, S3ObjectStore::Create({
//       .endpoint = "http://127.0.0.1:7480", .bucket = "state",
//       .access_key = ..., .secret_key = ...}));
//
// Mapping: Put is PUT; PutIfAbsent is PUT with `If-None-Match: *` (S3 and
// RGW answer 412 if the key exists, atomically in the gateway); Get and
// GetRange are GET (with `Range: bytes=A-B`); Head is HEAD; List is
// ListObjectsV2 pages of max_keys_per_page; Delete is DELETE (S3 answers 204
// for a missing key too).
//
// Retries: a request that gets no response, or HTTP 408, 429, 5xx (not
// 501), or an S3 error code SlowDown / RequestTimeout / InternalError /
// ConditionalRequestConflict, is sent again after an exponentially
// growing, jittered wait until `retry.deadline` has passed since the
// operation began; then the last failure is Unavailable. Other statuses surface
// at once: 404 NotFound, 412 FailedPrecondition, 403 PermissionDenied, 400
// InvalidArgument, ... Every message names the object (s3://BUCKET/PREFIX+KEY),
// the method, the HTTP status and S3's error code.
//
// A PutIfAbsent whose first attempt may have been applied (no response)
// and whose retry then finds the key taken reads the object back: the same
// bytes mean the first attempt won, and the call succeeds.
//
// Thread-safety: thread-safe (the transport is).
#ifndef STORAGE_SHARED_S3_OBJECT_STORE_H_
#define STORAGE_SHARED_S3_OBJECT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "storage/shared/http_transport.h"
#include "storage/shared/object_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct S3RetryOptions {
  // The wait before the first retry; each later wait doubles (with equal
  // jitter: a value in [cap/2, cap]), up to max_backoff. Default 50 ms, > 0.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  // The longest single wait. Default 2 s, >= initial_backoff.
  absl::Duration max_backoff = absl::Seconds(2);
  // No retry starts later than this after the operation began. Default
  // 30 s; 0 disables retries.
  absl::Duration deadline = absl::Seconds(30);
};

struct S3ObjectStoreOptions {
  // "http://HOST:PORT" or "https://HOST[:PORT]", no trailing path.
  // Required.
  std::string endpoint = "";
  // The bucket: 3-63 characters of [a-z0-9.-]. Required.
  std::string bucket = "";
  // The SigV4 region. Default "us-east-1" (what RGW accepts by default).
  std::string region = "us-east-1";
  // Credentials. Required.
  std::string access_key = "";
  std::string secret_key = "";
  // Prepended to every key in the bucket, so that several stores can share
  // one bucket; keys returned by List do not include it. Default "";
  // otherwise a valid key prefix of at most kMaxObjectKeyPrefixLength (124)
  // bytes, normally ending in '/'.
  std::string key_prefix = "";
  // Keys per ListObjectsV2 page (max-keys). Default 1000, the S3 maximum;
  // range 1..1000.
  int max_keys_per_page = 1000;
  // Per attempt: time to connect, and time for the whole exchange. Default
  // 5 s and 60 s. Used by the default (libcurl) transport.
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(60);
  // Retries of transient failures.
  S3RetryOptions retry = {};
  // Create the bucket in Create() if it does not exist (an existing bucket
  // of ours is fine). Default false.
  bool create_bucket = false;
  // The clock back-off waits on. Default (nullptr) Clock::Real(); must
  // outlive the store.
  Clock* clock = nullptr;
};

class S3ObjectStore final : public ObjectStore {
 public:
  // Validates `options` (InvalidArgument naming the field) and, with
  // create_bucket, creates the bucket. Uses libcurl.
  static absl::StatusOr<std::unique_ptr<S3ObjectStore>> Create(
      const S3ObjectStoreOptions& options);
  // The same over `transport`, which signs requests itself (tests pass a
  // fake that answers like a server).
  static absl::StatusOr<std::unique_ptr<S3ObjectStore>> Create(
      const S3ObjectStoreOptions& options,
      std::unique_ptr<HttpTransport> transport);

  absl::Status Put(absl::string_view key, absl::string_view data) override;
  absl::Status PutIfAbsent(absl::string_view key,
                           absl::string_view data) override;
  absl::StatusOr<std::string> Get(absl::string_view key) override;
  absl::StatusOr<std::string> GetRange(absl::string_view key, uint64_t offset,
                                       uint64_t length) override;
  absl::StatusOr<ObjectInfo> Head(absl::string_view key) override;
  absl::StatusOr<std::vector<ObjectInfo>> List(
      absl::string_view prefix) override;
  absl::Status Delete(absl::string_view key) override;
  // "s3://BUCKET/KEY_PREFIX".
  std::string DebugString() const override;

 private:
  S3ObjectStore(const S3ObjectStoreOptions& options,
                std::unique_ptr<HttpTransport> transport);

  struct Outcome {
    HttpResponse response;
    // Whether an earlier attempt may have been applied (it got no response
    // or a 5xx), for PutIfAbsent.
    bool earlier_attempt_may_have_applied = false;
  };
  // Sends `request` until it gets a non-transient response (returned
  // whatever its status) or the retry deadline passes (Unavailable).
  absl::StatusOr<Outcome> Execute(const HttpRequest& request,
                                  absl::string_view object);
  absl::Status PutImpl(absl::string_view key, absl::string_view data,
                       bool if_absent);
  // The error for a response that is not a success.
  absl::Status ErrorFor(const HttpResponse& response, absl::string_view method,
                        absl::string_view object) const;
  std::string ObjectUrl(absl::string_view key) const;
  // s3://bucket/prefix+key, for messages.
  std::string ObjectName(absl::string_view key) const;

  const S3ObjectStoreOptions options_;
  const std::unique_ptr<HttpTransport> transport_;
  Clock& clock_;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_S3_OBJECT_STORE_H_
