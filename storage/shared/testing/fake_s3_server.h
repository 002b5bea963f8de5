// FakeS3Server: an in-memory S3 bucket behind the HttpTransport interface,
// for S3ObjectStore's tests without a network. It answers path-style PUT
// (with If-None-Match: *), GET (with Range), HEAD, DELETE and ListObjectsV2
// as S3 does, checks that every request carries a correct
// x-amz-content-sha256, records requests, and injects faults.
//
//   auto server = std::make_shared<FakeS3Server>("http://s3.test", "bucket");
//   server->InjectFaults({FakeS3Server::Fault::Http(503, "SlowDown")});
//   auto store = S3ObjectStore::Create(options, server->NewTransport());
#ifndef STORAGE_SHARED_TESTING_FAKE_S3_SERVER_H_
#define STORAGE_SHARED_TESTING_FAKE_S3_SERVER_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/shared/http_transport.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class FakeS3Server : public std::enable_shared_from_this<FakeS3Server> {
 public:
  struct Fault {
    // A transport error (no response) if not OK; else an HTTP error.
    absl::Status transport_error;
    int http_status = 0;
    std::string s3_code;
    // Apply the request before failing (the response was lost).
    bool apply_first = false;

    static Fault NoResponse(bool apply_first = false) {
      return Fault{absl::UnavailableError("connection reset (injected)"), 0, "",
                   apply_first};
    }
    static Fault Http(int status, std::string code) {
      return Fault{absl::OkStatus(), status, std::move(code), false};
    }
  };

  struct RecordedRequest {
    std::string method;
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    size_t body_size = 0;
  };

  // `endpoint` without trailing '/'; the one bucket that exists (unless
  // created by a PUT of the bucket).
  FakeS3Server(std::string endpoint, std::string bucket);

  // A transport whose Send goes to this server. Thread-safe.
  std::unique_ptr<HttpTransport> NewTransport();

  // The next requests fail with these faults, in order, one each.
  void InjectFaults(std::vector<Fault> faults);

  std::vector<RecordedRequest> requests();
  void ClearRequests();
  // The stored objects (full keys, key prefix included).
  std::map<std::string, std::string> objects();

  absl::StatusOr<HttpResponse> Handle(const HttpRequest& request);

 private:
  HttpResponse Apply(const HttpRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string endpoint_;
  const std::string bucket_;
  Mutex mu_;
  std::map<std::string, std::string> objects_ ABSL_GUARDED_BY(mu_);
  std::deque<Fault> faults_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // STORAGE_SHARED_TESTING_FAKE_S3_SERVER_H_
