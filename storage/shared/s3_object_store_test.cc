#include "storage/shared/s3_object_store.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/internal/sha256.h"
#include "storage/shared/object_store_conformance.h"
#include "storage/shared/testing/fake_s3_server.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using Fault = FakeS3Server::Fault;

constexpr char kEndpoint[] = "http://s3.test:9000";

S3ObjectStoreOptions TestOptions() {
  return S3ObjectStoreOptions{.endpoint = kEndpoint,
                              .bucket = "bucket",
                              .access_key = "AK",
                              .secret_key = "SK",
                              .max_keys_per_page = 7};
}

// Time moves only when the store waits: each SleepUntil jumps to its
// deadline and is recorded.
class JumpingClock final : public Clock {
 public:
  absl::Time Now() override {
    MutexLock lock(&mu_);
    return now_;
  }
  void SleepUntil(absl::Time deadline) override {
    MutexLock lock(&mu_);
    sleeps_.push_back(deadline - now_);
    now_ = std::max(now_, deadline);
  }
  bool WaitUntil(Mutex&, CondVar&, absl::FunctionRef<bool()> done,
                 absl::Time deadline) override {
    if (done()) return true;
    SleepUntil(deadline);
    return done();
  }
  std::vector<absl::Duration> sleeps() {
    MutexLock lock(&mu_);
    return sleeps_;
  }

 private:
  Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
};

INSTANTIATE_TEST_SUITE_P(
    FakeServer, ObjectStoreConformanceTest,
    ::testing::Values(
        ObjectStoreFactory{
            "whole_bucket",
            []() -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
              auto server = std::make_shared<FakeS3Server>(kEndpoint, "bucket");
              return S3ObjectStore::Create(TestOptions(),
                                           server->NewTransport());
            }},
        ObjectStoreFactory{
            "key_prefix",
            []() -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
              auto server = std::make_shared<FakeS3Server>(kEndpoint, "bucket");
              // Objects of another store in the same bucket, around ours.
              auto other =
                  S3ObjectStore::Create(TestOptions(), server->NewTransport());
              if (!other.ok()) return other.status();
              for (const char* key : {"tenant", "tenant.x", "tenant0/a", "a"}) {
                if (absl::Status s = (*other)->Put(key, "other"); !s.ok())
                  return s;
              }
              S3ObjectStoreOptions options = TestOptions();
              options.key_prefix = "tenant/";
              return S3ObjectStore::Create(options, server->NewTransport());
            }}),
    ObjectStoreFactoryName);

class S3ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    S3ObjectStoreOptions options = TestOptions();
    options.clock = &clock_;
    options.retry.initial_backoff = absl::Milliseconds(100);
    options.retry.max_backoff = absl::Seconds(1);
    options.retry.deadline = absl::Seconds(10);
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        store_, S3ObjectStore::Create(options, server_->NewTransport()));
  }

  JumpingClock clock_;
  std::shared_ptr<FakeS3Server> server_ =
      std::make_shared<FakeS3Server>(kEndpoint, "bucket");
  std::unique_ptr<S3ObjectStore> store_;
};

TEST_F(S3ObjectStoreTest, RequestsArePathStyleAndCarryThePayloadHash) {
  BACKFILL_ASSERT_OK(store_->Put("sst/1.sst", "payload"));
  BACKFILL_ASSERT_OK(store_->PutIfAbsent("sst/2.sst", ""));
  ASSERT_THAT(store_->Get("sst/1.sst"), IsOkAndHolds("payload"));
  auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].url, "http://s3.test:9000/bucket/sst/1.sst");
  EXPECT_THAT(requests[0].headers,
              Contains(Pair("x-amz-content-sha256",
                            shared_internal::Sha256Hex("payload"))));
  EXPECT_THAT(requests[0].headers, Not(Contains(Pair("If-None-Match", "*"))));
  EXPECT_THAT(requests[1].headers, Contains(Pair("If-None-Match", "*")));
  EXPECT_THAT(
      requests[1].headers,
      Contains(Pair(
          "x-amz-content-sha256",
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")));
  EXPECT_EQ(requests[2].method, "GET");
}

TEST_F(S3ObjectStoreTest, ListQueryIsCanonicalAndFollowsTokens) {
  for (int i = 0; i < 10; ++i)
    BACKFILL_ASSERT_OK(store_->Put(absl::StrCat("d/k", i), "x"));
  server_->ClearRequests();
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto listed, store_->List("d/"));
  EXPECT_EQ(listed.size(), 10u);
  auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  // Sorted parameters, '/' encoded: SigV4's canonical query string.
  EXPECT_EQ(requests[0].url,
            "http://s3.test:9000/bucket?list-type=2&max-keys=7&prefix=d%2F");
  EXPECT_EQ(requests[1].url,
            "http://s3.test:9000/bucket?continuation-token=d%2Fk6&list-type=2&"
            "max-keys=7&prefix=d%2F");
}

TEST_F(S3ObjectStoreTest, TransientFailuresAreRetriedWithGrowingBackoff) {
  BACKFILL_ASSERT_OK(store_->Put("k", "v"));
  server_->ClearRequests();
  server_->InjectFaults({Fault::Http(503, "SlowDown"), Fault::NoResponse(),
                         Fault::Http(500, "InternalError"),
                         Fault::Http(400, "RequestTimeout")});
  EXPECT_THAT(store_->Get("k"), IsOkAndHolds("v"));
  EXPECT_EQ(server_->requests().size(), 5u);
  std::vector<absl::Duration> sleeps = clock_.sleeps();
  ASSERT_EQ(sleeps.size(), 4u);
  // Equal jitter around 100, 200, 400, 800 ms.
  const absl::Duration caps[] = {
      absl::Milliseconds(100), absl::Milliseconds(200), absl::Milliseconds(400),
      absl::Milliseconds(800)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(sleeps[i], caps[i] / 2) << i;
    EXPECT_LE(sleeps[i], caps[i]) << i;
  }
}

TEST_F(S3ObjectStoreTest, RetriesStopAtTheDeadlineWithUnavailable) {
  std::vector<Fault> faults(100, Fault::Http(503, "SlowDown"));
  server_->InjectFaults(faults);
  EXPECT_THAT(
      store_->Put("sst/9.sst", "v"),
      StatusIs(absl::StatusCode::kUnavailable,
               AllOf(HasSubstr("s3://bucket/sst/9.sst"), HasSubstr("PUT"),
                     HasSubstr("HTTP 503 SlowDown"))));
  const size_t attempts = server_->requests().size();
  // 10 s of waits of at most 1 s after the first few: bounded both ways.
  EXPECT_GE(attempts, 8u);
  EXPECT_LE(attempts, 25u);
  EXPECT_LE(clock_.Now() - absl::UnixEpoch(), absl::Seconds(10));
}

TEST_F(S3ObjectStoreTest, PermanentFailuresSurfaceAtOnce) {
  server_->InjectFaults({Fault::Http(403, "AccessDenied")});
  EXPECT_THAT(store_->Get("secret/k"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("s3://bucket/secret/k"),
                             HasSubstr("HTTP 403 AccessDenied"))));
  EXPECT_EQ(server_->requests().size(), 1u);
  EXPECT_TRUE(clock_.sleeps().empty());
  EXPECT_THAT(store_->Get("missing"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("s3://bucket/missing"),
                             HasSubstr("HTTP 404 NoSuchKey"))));
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(S3ObjectStoreTest, RetriedPutIfAbsentThatAlreadyWonSucceeds) {
  // The first attempt lands but its response is lost; the retry sees 412.
  server_->InjectFaults({Fault::NoResponse(/*apply_first=*/true)});
  BACKFILL_EXPECT_OK(store_->PutIfAbsent("version/5", "mine"));
  EXPECT_THAT(store_->Get("version/5"), IsOkAndHolds("mine"));
  // Someone else's bytes under the key: a real conflict.
  BACKFILL_ASSERT_OK(store_->Put("version/6", "theirs"));
  server_->InjectFaults({Fault::NoResponse()});
  EXPECT_THAT(store_->PutIfAbsent("version/6", "mine"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("s3://bucket/version/6")));
  EXPECT_THAT(store_->Get("version/6"), IsOkAndHolds("theirs"));
}

// A transport that answers every request with one canned response.
class CannedTransport final : public HttpTransport {
 public:
  explicit CannedTransport(HttpResponse response)
      : response_(std::move(response)) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest&) override {
    return response_;
  }

 private:
  HttpResponse response_;
};

TEST(S3ObjectStoreResponseTest, MalformedListingIsDataLossNamingThePrefix) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, S3ObjectStore::Create(
                      TestOptions(), std::make_unique<CannedTransport>(
                                         HttpResponse{200, {}, "<html>oops"})));
  EXPECT_THAT(store->List("sst/"),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("s3://bucket/sst/"),
                             HasSubstr("<ListBucketResult>"))));
}

TEST(S3ObjectStoreResponseTest, HeadWithoutContentLengthIsDataLoss) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store,
      S3ObjectStore::Create(TestOptions(), std::make_unique<CannedTransport>(
                                               HttpResponse{200, {}, ""})));
  EXPECT_THAT(store->Head("k"), StatusIs(absl::StatusCode::kDataLoss,
                                         HasSubstr("s3://bucket/k")));
}

TEST(S3ObjectStoreResponseTest, OversizedRangeResponseIsDataLoss) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, S3ObjectStore::Create(
                      TestOptions(), std::make_unique<CannedTransport>(
                                         HttpResponse{206, {}, "0123456789"})));
  EXPECT_THAT(store->GetRange("k", 0, 4), StatusIs(absl::StatusCode::kDataLoss,
                                                   HasSubstr("s3://bucket/k")));
}

TEST(S3ObjectStoreCreateTest, OptionsAreValidated) {
  auto server = std::make_shared<FakeS3Server>(kEndpoint, "bucket");
  auto with = [&](std::function<void(S3ObjectStoreOptions&)> change) {
    S3ObjectStoreOptions options = TestOptions();
    change(options);
    return S3ObjectStore::Create(options, server->NewTransport()).status();
  };
  auto invalid = [](const char* field) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(field));
  };
  EXPECT_THAT(with([](auto& o) { o.endpoint = "s3.test"; }),
              invalid("endpoint"));
  EXPECT_THAT(with([](auto& o) { o.endpoint = "http://h/path"; }),
              invalid("endpoint"));
  EXPECT_THAT(with([](auto& o) { o.bucket = "No_Caps"; }), invalid("bucket"));
  EXPECT_THAT(with([](auto& o) { o.bucket = "ab"; }), invalid("bucket"));
  EXPECT_THAT(with([](auto& o) { o.secret_key = ""; }), invalid("secret_key"));
  EXPECT_THAT(with([](auto& o) { o.key_prefix = "/abs"; }),
              invalid("key_prefix"));
  EXPECT_THAT(with([](auto& o) {
                o.key_prefix = std::string(kMaxObjectKeyPrefixLength + 1, 'p');
              }),
              invalid("key_prefix"));
  EXPECT_THAT(with([](auto& o) { o.max_keys_per_page = 0; }),
              invalid("max_keys_per_page"));
  EXPECT_THAT(
      with([](auto& o) { o.retry.initial_backoff = absl::ZeroDuration(); }),
      invalid("retry"));
  EXPECT_THAT(S3ObjectStore::Create(TestOptions(), nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(S3ObjectStoreCreateTest, CreateBucketPutsTheBucketAndToleratesOurs) {
  auto server = std::make_shared<FakeS3Server>(kEndpoint, "bucket");
  S3ObjectStoreOptions options = TestOptions();
  options.create_bucket = true;
  BACKFILL_ASSERT_OK(
      S3ObjectStore::Create(options, server->NewTransport()).status());
  auto requests = server->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].url, "http://s3.test:9000/bucket");
  server->InjectFaults({Fault::Http(409, "BucketAlreadyOwnedByYou")});
  BACKFILL_EXPECT_OK(
      S3ObjectStore::Create(options, server->NewTransport()).status());
  server->InjectFaults({Fault::Http(409, "BucketAlreadyExists")});
  EXPECT_THAT(S3ObjectStore::Create(options, server->NewTransport()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("BucketAlreadyExists")));
}

}  // namespace
}  // namespace backfill
