// EtcdClient without an etcd: option checks, requests refused before
// sending (the endpoint is a closed port, so anything sent would fail with
// UNAVAILABLE instead of the expected INVALID_ARGUMENT), and the error of a
// call no endpoint answers. The limits' match with a real etcd is checked in
// etcd_client_test.
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_client.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Port 1 on loopback: nothing listens there (it needs root and no test binds
// it).
constexpr char kClosedEndpoint[] = "127.0.0.1:1";

std::unique_ptr<EtcdClient> ClientOfClosedPorts() {
  EtcdClientOptions options;
  options.endpoints = {kClosedEndpoint, "127.0.0.1:2"};
  options.call_timeout = absl::Milliseconds(200);
  options.operation_timeout = absl::Milliseconds(500);
  options.retry_backoff = absl::Milliseconds(10);
  auto client = EtcdClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(EtcdClientValidationTest, RejectsBadOptions) {
  EtcdClientOptions options;
  EXPECT_THAT(
      EtcdClient::Create(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("endpoints")));
  options.endpoints = {kClosedEndpoint, ""};
  EXPECT_THAT(
      EtcdClient::Create(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty entry")));
  options.endpoints = {kClosedEndpoint};
  options.call_timeout = absl::ZeroDuration();
  EXPECT_THAT(
      EtcdClient::Create(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("call_timeout")));
  options.call_timeout = absl::Seconds(10);
  options.operation_timeout = absl::Seconds(5);
  EXPECT_THAT(EtcdClient::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operation_timeout")));
  options.operation_timeout = absl::Seconds(10);
  options.max_txn_operations = 0;
  EXPECT_THAT(EtcdClient::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_txn_operations")));
  options.max_txn_operations = 128;
  options.max_request_bytes = kEtcdRequestEnvelopeBytes;
  EXPECT_THAT(EtcdClient::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_request_bytes")));
  options.max_request_bytes = 1536 * 1024;
  EXPECT_TRUE(EtcdClient::Create(options).ok());
}

TEST(EtcdClientValidationTest, EmptyKeysAreRefusedBeforeSending) {
  auto client = ClientOfClosedPorts();
  EXPECT_THAT(client->Get(""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(client->GetPrefix(""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(client->Put({.key = "", .value = "v", .lease = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(client->Delete(""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(client->DeletePrefix(""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EtcdTxn txn;
  txn.then_puts = {{"a", "1", 0}, {"", "2", 0}};
  EXPECT_THAT(client->Txn(txn), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("empty put key")));
  EtcdRangeOptions range;
  range.limit = -1;
  EXPECT_THAT(client->GetPrefix("p", range),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
  EXPECT_THAT(client->GrantLease(absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl")));
}

TEST(EtcdClientValidationTest, OversizedRequestIsRefusedBeforeSending) {
  auto client = ClientOfClosedPorts();
  const int64_t limit =
      client->options().max_request_bytes - kEtcdRequestEnvelopeBytes;
  const std::string value(limit, 'x');  // plus the key and framing: over
  EXPECT_THAT(client->Put({"big", value, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'big'"), HasSubstr("exceeds the limit"),
                             HasSubstr(absl::StrCat(limit)))));
  EtcdTxn txn;
  txn.then_puts = {{"version", value, 0}};
  EXPECT_THAT(client->Txn(txn), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("exceeds the limit")));
}

TEST(EtcdClientValidationTest, TooManyTxnOperationsAreRefusedBeforeSending) {
  auto client = ClientOfClosedPorts();
  EtcdTxn txn;
  for (int i = 0; i < 129; ++i)
    txn.then_puts.push_back({absl::StrCat("k", i), "", 0});
  EXPECT_THAT(client->Txn(txn), StatusIs(absl::StatusCode::kInvalidArgument,
                                         AllOf(HasSubstr("129 then operations"),
                                               HasSubstr("128"))));
  // Puts and deletes share the `then` limit.
  txn.then_puts.resize(100);
  for (int i = 0; i < 29; ++i) txn.then_deletes.push_back(absl::StrCat("d", i));
  EXPECT_THAT(client->Txn(txn), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("129 then operations")));
  EtcdTxn compares;
  for (int i = 0; i < 129; ++i) {
    compares.compares.push_back(EtcdCompare::Absent(absl::StrCat("k", i)));
  }
  EXPECT_THAT(
      client->Txn(compares),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("129 compares")));
  EtcdTxn reads;
  for (int i = 0; i < 129; ++i) reads.else_gets.push_back(absl::StrCat("k", i));
  EXPECT_THAT(client->Txn(reads), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("129 else operations")));
}

TEST(EtcdClientValidationTest, UnreachableEndpointsNameKeyEndpointAndAttempts) {
  auto client = ClientOfClosedPorts();
  const absl::Status status = client->Put({"job/version", "v", 0}).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable,
                               AllOf(HasSubstr("etcd Put 'job/version'"),
                                     HasSubstr("no endpoint answered"),
                                     HasSubstr("127.0.0.1:"),
                                     HasSubstr("attempts over 2"))));
  EXPECT_THAT(client->Get("job/version"),
              StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace backfill
