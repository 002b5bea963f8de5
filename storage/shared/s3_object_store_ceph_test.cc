// The ObjectStore conformance suite against S3ObjectStore on a real Ceph RGW
// (started by storage/shared/testing/ceph_rgw.sh), plus what only a real
// gateway can show: SigV4 signatures it accepts and rejects, its answers for
// a missing bucket, and a refused connection retried to Unavailable.
//
// Needs CEPH_RGW_ENDPOINT, CEPH_RGW_ACCESS_KEY, CEPH_RGW_SECRET_KEY (the
// script's DIR/env), passed with --test_env. Fails, not skips, without them.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/object_store_conformance.h"
#include "storage/shared/s3_object_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// One bucket per test process, so reruns never see old objects.
const std::string& BucketName() {
  static const std::string* bucket = [] {
    absl::BitGen random;
    return new std::string(absl::StrFormat("conformance-%d-%08x", getpid(),
                                           absl::Uniform<uint32_t>(random)));
  }();
  return *bucket;
}

absl::StatusOr<S3ObjectStoreOptions> CephOptions() {
  S3ObjectStoreOptions options{.endpoint = Env("CEPH_RGW_ENDPOINT"),
                               .bucket = BucketName(),
                               .access_key = Env("CEPH_RGW_ACCESS_KEY"),
                               .secret_key = Env("CEPH_RGW_SECRET_KEY"),
                               .create_bucket = true};
  if (options.endpoint.empty() || options.access_key.empty() ||
      options.secret_key.empty()) {
    return absl::FailedPreconditionError(
        "set CEPH_RGW_ENDPOINT, CEPH_RGW_ACCESS_KEY and CEPH_RGW_SECRET_KEY "
        "(storage/shared/testing/ceph_rgw.sh start DIR; see DIR/env), e.g. "
        "bazel test --test_env=CEPH_RGW_ENDPOINT ...");
  }
  return options;
}

// Each store its own key prefix in the bucket; small pages exercise
// ListObjectsV2 continuation on the real gateway.
absl::StatusOr<std::unique_ptr<ObjectStore>> NewCephStore() {
  static std::atomic<int> next{0};
  absl::StatusOr<S3ObjectStoreOptions> options = CephOptions();
  if (!options.ok()) return options.status();
  options->key_prefix = absl::StrCat("store", next.fetch_add(1), "/");
  options->max_keys_per_page = 7;
  return S3ObjectStore::Create(*options);
}

INSTANTIATE_TEST_SUITE_P(CephRgw, ObjectStoreConformanceTest,
                         ::testing::Values(ObjectStoreFactory{"rgw",
                                                              NewCephStore}),
                         ObjectStoreFactoryName);

TEST(S3ObjectStoreCephTest, WrongSecretIsRefusedAtOnce) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(S3ObjectStoreOptions options, CephOptions());
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto good, S3ObjectStore::Create(options));
  BACKFILL_ASSERT_OK(good->Put("signed/k", "v"));
  options.secret_key = "wrong" + options.secret_key;
  options.create_bucket = false;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto bad, S3ObjectStore::Create(options));
  const absl::Time start = absl::Now();
  EXPECT_THAT(bad->Get("signed/k"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("signed/k"), HasSubstr("HTTP 403"),
                             HasSubstr("SignatureDoesNotMatch"))));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "a 403 was retried";
  EXPECT_THAT(good->Get("signed/k"), IsOkAndHolds("v"));
}

TEST(S3ObjectStoreCephTest, MissingBucketIsNotFound) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(S3ObjectStoreOptions options, CephOptions());
  options.bucket = "no-such-bucket-here";
  options.create_bucket = false;
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, S3ObjectStore::Create(options));
  EXPECT_THAT(store->Get("k"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("s3://no-such-bucket-here/k"),
                             HasSubstr("NoSuchBucket"))));
  EXPECT_THAT(store->List(""), StatusIs(absl::StatusCode::kNotFound));
}

TEST(S3ObjectStoreCephTest, RefusedConnectionIsRetriedThenUnavailable) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(S3ObjectStoreOptions options, CephOptions());
  // Port 1 on loopback: nothing listens there, connections are refused.
  options.endpoint = "http://127.0.0.1:1";
  options.create_bucket = false;
  options.retry = {.initial_backoff = absl::Milliseconds(20),
                   .max_backoff = absl::Milliseconds(100),
                   .deadline = absl::Milliseconds(500)};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto store, S3ObjectStore::Create(options));
  const absl::Time start = absl::Now();
  EXPECT_THAT(
      store->Put("k", "v"),
      StatusIs(absl::StatusCode::kUnavailable,
               AllOf(HasSubstr(absl::StrCat("s3://", BucketName(), "/k")),
                     HasSubstr("attempt"))));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(5));
}

}  // namespace
}  // namespace backfill
