// EtcdClient against a real 3-member etcd cluster (EtcdTestCluster): every
// operation, the compare-and-swap fencing, etcd's limits, failover past a
// dead endpoint, and leases (keep-alive, revoke, expiry). One cluster serves
// the suite; each test uses its own key prefix.
#include "storage/shared/etcd_client.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/etcd_test_cluster.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Optional;

EtcdPut MakePut(std::string key, std::string value, int64_t lease = 0) {
  return EtcdPut{std::move(key), std::move(value), lease};
}

std::vector<std::string> Keys(const EtcdRangeResult& result) {
  std::vector<std::string> keys;
  for (const EtcdKeyValue& kv : result.kvs) keys.push_back(kv.key);
  return keys;
}

class EtcdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto cluster = EtcdTestCluster::Start({});
    if (cluster.ok()) {
      cluster_ = cluster->release();
    } else {
      start_error_ = new absl::Status(cluster.status());
    }
  }
  static void TearDownTestSuite() {
    delete cluster_;  // stops every member
    cluster_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << *start_error_;
    client_ = NewClient(cluster_->Endpoints());
  }

  static std::unique_ptr<EtcdClient> NewClient(
      std::vector<std::string> endpoints) {
    EtcdClientOptions options;
    options.endpoints = std::move(endpoints);
    auto client = EtcdClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  static EtcdTestCluster* cluster_;
  static absl::Status* start_error_;
  std::unique_ptr<EtcdClient> client_;
};

EtcdTestCluster* EtcdClientTest::cluster_ = nullptr;
absl::Status* EtcdClientTest::start_error_ = nullptr;

TEST_F(EtcdClientTest, PutGetDelete) {
  EXPECT_THAT(client_->Get("basic/a"), IsOkAndHolds(Eq(std::nullopt)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(int64_t first,
                                client_->Put(MakePut("basic/a", "1")));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> kv,
                                client_->Get("basic/a"));
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->key, "basic/a");
  EXPECT_EQ(kv->value, "1");
  EXPECT_EQ(kv->create_revision, first);
  EXPECT_EQ(kv->mod_revision, first);
  EXPECT_EQ(kv->version, 1);
  EXPECT_EQ(kv->lease, 0);

  BACKFILL_ASSERT_OK_AND_ASSIGN(int64_t second,
                                client_->Put(MakePut("basic/a", "2")));
  EXPECT_GT(second, first);
  BACKFILL_ASSERT_OK_AND_ASSIGN(kv, client_->Get("basic/a"));
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->value, "2");
  EXPECT_EQ(kv->create_revision, first);
  EXPECT_EQ(kv->mod_revision, second);
  EXPECT_EQ(kv->version, 2);

  // Binary keys and values, and an empty value.
  const std::string binary_key("basic/\0\xff", 8);
  BACKFILL_ASSERT_OK(
      client_->Put(MakePut(binary_key, std::string("\0x\0", 3))).status());
  EXPECT_THAT(client_->Get(binary_key),
              IsOkAndHolds(Optional(
                  Field(&EtcdKeyValue::value, std::string("\0x\0", 3)))));
  BACKFILL_ASSERT_OK(client_->Put(MakePut("basic/empty", "")).status());
  EXPECT_THAT(client_->Get("basic/empty"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, ""))));

  EXPECT_THAT(client_->Delete("basic/a"), IsOkAndHolds(1));
  EXPECT_THAT(client_->Delete("basic/a"), IsOkAndHolds(0));
  EXPECT_THAT(client_->Get("basic/a"), IsOkAndHolds(Eq(std::nullopt)));
}

TEST_F(EtcdClientTest, GetPrefixAndDeletePrefix) {
  for (const char* key : {"range/b", "range/a", "range/c", "rangf", "range"}) {
    BACKFILL_ASSERT_OK(
        client_->Put(MakePut(key, absl::StrCat("value of ", key))).status());
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult all,
                                client_->GetPrefix("range/"));
  EXPECT_THAT(Keys(all), ElementsAre("range/a", "range/b", "range/c"));
  EXPECT_EQ(all.kvs[1].value, "value of range/b");
  EXPECT_FALSE(all.more);
  EXPECT_GT(all.revision, 0);

  EtcdRangeOptions limited;
  limited.limit = 2;
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult first_two,
                                client_->GetPrefix("range/", limited));
  EXPECT_THAT(Keys(first_two), ElementsAre("range/a", "range/b"));
  EXPECT_TRUE(first_two.more);

  // Oldest first: b was written first.
  EtcdRangeOptions oldest;
  oldest.order = EtcdRangeOptions::Order::kCreateRevisionAscending;
  oldest.keys_only = true;
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult by_age,
                                client_->GetPrefix("range/", oldest));
  EXPECT_THAT(Keys(by_age), ElementsAre("range/b", "range/a", "range/c"));
  EXPECT_EQ(by_age.kvs[0].value, "");

  // From a key on (that key included; absent keys are fine).
  EtcdRangeOptions from_b;
  from_b.from_key = "range/b";
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult b_on,
                                client_->GetPrefix("range/", from_b));
  EXPECT_THAT(Keys(b_on), ElementsAre("range/b", "range/c"));
  from_b.from_key = "range/bb";
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult after_b,
                                client_->GetPrefix("range/", from_b));
  EXPECT_THAT(Keys(after_b), ElementsAre("range/c"));
  from_b.from_key = "rangf";  // Outside the prefix.
  EXPECT_THAT(
      client_->GetPrefix("range/", from_b),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from_key")));

  // A prefix ending in 0xff bytes: its end is computed by carrying.
  const std::string high("range\xff", 6);
  BACKFILL_ASSERT_OK(client_
                         ->Put(MakePut(high + "\xff"
                                              "x",
                                       "1"))
                         .status());
  BACKFILL_ASSERT_OK(client_->Put(MakePut(high, "2")).status());
  BACKFILL_ASSERT_OK(client_->Put(MakePut("rangf\x01", "3")).status());
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult high_keys,
                                client_->GetPrefix(high));
  EXPECT_THAT(Keys(high_keys), ElementsAre(high, high + "\xff"
                                                        "x"));

  EXPECT_THAT(client_->DeletePrefix("range/"), IsOkAndHolds(3));
  EXPECT_THAT(client_->GetPrefix("range/"),
              IsOkAndHolds(Field(&EtcdRangeResult::kvs, ::testing::IsEmpty())));
  EXPECT_THAT(
      client_->Get("range"),
      IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "value of range"))));
}

TEST_F(EtcdClientTest, TxnComparesAndSwaps) {
  // Create-if-absent.
  EtcdTxn create;
  create.compares = {EtcdCompare::Absent("cas/version")};
  create.then_puts = {MakePut("cas/version", "v1"),
                      MakePut("cas/delta/1", "d1")};
  create.else_gets = {"cas/version"};
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult created, client_->Txn(create));
  EXPECT_TRUE(created.succeeded);
  EXPECT_EQ(created.attempts, 1);
  EXPECT_TRUE(created.else_values.empty());
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> version,
                                client_->Get("cas/version"));
  ASSERT_TRUE(version.has_value());
  EXPECT_EQ(version->mod_revision, created.revision);
  EXPECT_THAT(client_->Get("cas/delta/1"),
              IsOkAndHolds(Optional(
                  Field(&EtcdKeyValue::mod_revision, created.revision))));

  // Creating again is refused, and the else branch reads the current value.
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult again, client_->Txn(create));
  EXPECT_FALSE(again.succeeded);
  ASSERT_EQ(again.else_values.size(), 1u);
  EXPECT_THAT(again.else_values[0],
              Optional(Field(&EtcdKeyValue::value, "v1")));

  // Compare the value; then put one key and delete another, atomically.
  EtcdTxn by_value;
  by_value.compares = {EtcdCompare::ValueEquals("cas/version", "v1")};
  by_value.then_puts = {MakePut("cas/version", "v2")};
  by_value.then_deletes = {"cas/delta/1"};
  by_value.else_gets = {"cas/version", "cas/missing"};
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult swapped, client_->Txn(by_value));
  EXPECT_TRUE(swapped.succeeded);
  EXPECT_THAT(client_->Get("cas/delta/1"), IsOkAndHolds(Eq(std::nullopt)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult stale_value,
                                client_->Txn(by_value));
  EXPECT_FALSE(stale_value.succeeded);
  ASSERT_EQ(stale_value.else_values.size(), 2u);
  EXPECT_THAT(stale_value.else_values[0],
              Optional(Field(&EtcdKeyValue::value, "v2")));
  EXPECT_EQ(stale_value.else_values[1], std::nullopt);

  // Several compares must all hold.
  EtcdTxn both;
  both.compares = {EtcdCompare::ValueEquals("cas/version", "v2"),
                   EtcdCompare::Absent("cas/version")};
  both.then_puts = {MakePut("cas/version", "never")};
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult refused, client_->Txn(both));
  EXPECT_FALSE(refused.succeeded);
  EXPECT_THAT(client_->Get("cas/version"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "v2"))));
}

// Two committers read the same version; the first commit wins, the second,
// fenced by the revision it read, is refused and learns the new version.
TEST_F(EtcdClientTest, CasRefusesAStaleFencingRevision) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(int64_t initial,
                                client_->Put(MakePut("fence/version", "v1")));
  auto commit = [&](const std::string& value, int64_t fence) {
    EtcdTxn txn;
    txn.compares = {EtcdCompare::ModRevisionEquals("fence/version", fence)};
    txn.then_puts = {MakePut("fence/version", value)};
    txn.else_gets = {"fence/version"};
    return client_->Txn(txn);
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult first,
                                commit("v2 by first", initial));
  EXPECT_TRUE(first.succeeded);
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult stale,
                                commit("v2 by second", initial));
  EXPECT_FALSE(stale.succeeded);
  ASSERT_EQ(stale.else_values.size(), 1u);
  ASSERT_TRUE(stale.else_values[0].has_value());
  EXPECT_EQ(stale.else_values[0]->value, "v2 by first");
  EXPECT_EQ(stale.else_values[0]->mod_revision, first.revision);
  EXPECT_THAT(
      client_->Get("fence/version"),
      IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "v2 by first"))));
  // Fenced by the revision it just learned, the second committer succeeds.
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult retried,
                                commit("v3 by second", first.revision));
  EXPECT_TRUE(retried.succeeded);
  // A fence of 0 means "absent": refused for an existing key.
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult absent, commit("v1 again", 0));
  EXPECT_FALSE(absent.succeeded);
}

// The client's limits are etcd's: the largest request the client lets through
// and a txn of 128 operations are accepted by a real member.
TEST_F(EtcdClientTest, LimitsMatchEtcd) {
  const std::string key = "limits/big";
  const int64_t limit =
      client_->options().max_request_bytes - kEtcdRequestEnvelopeBytes;
  // PutRequest framing: key (tag, 1-byte length, bytes) and value (tag,
  // 3-byte length, bytes).
  const int64_t value_size = limit - (2 + static_cast<int64_t>(key.size())) - 4;
  BACKFILL_ASSERT_OK(
      client_->Put(MakePut(key, std::string(value_size, 'x'))).status());
  EXPECT_THAT(client_->Get(key),
              IsOkAndHolds(Optional(
                  Field(&EtcdKeyValue::value, std::string(value_size, 'x')))));
  EXPECT_THAT(client_->Put(MakePut(key, std::string(value_size + 1, 'x'))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exceeds the limit")));

  // With the client's check raised, etcd itself refuses a request of
  // max_request_bytes + 1: the check guards a real limit.
  EtcdClientOptions loose;
  loose.endpoints = cluster_->Endpoints();
  loose.max_request_bytes = client_->options().max_request_bytes * 2;
  loose.max_txn_operations = 1000;
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdClient> unchecked,
                                EtcdClient::Create(loose));
  const int64_t over_etcd = value_size + kEtcdRequestEnvelopeBytes + 1;
  EXPECT_THAT(
      unchecked->Put(MakePut(key, std::string(over_etcd, 'x'))),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too large")));

  EtcdTxn txn;
  for (int i = 0; i < 128; ++i) {
    txn.compares.push_back(EtcdCompare::Absent(absl::StrCat("limits/k", i)));
    txn.then_puts.push_back(MakePut(absl::StrCat("limits/k", i), "v"));
    txn.else_gets.push_back(absl::StrCat("limits/k", i));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdTxnResult result, client_->Txn(txn));
  EXPECT_TRUE(result.succeeded);
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdRangeResult keys,
                                client_->GetPrefix("limits/k"));
  EXPECT_EQ(keys.kvs.size(), 128u);

  // And a txn of 129 operations.
  txn.then_puts.push_back(MakePut("limits/k128", "v"));
  EXPECT_THAT(unchecked->Txn(txn), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("too many operations")));
}

// A dead first endpoint: calls fail over to the live ones.
TEST_F(EtcdClientTest, FailsOverPastADeadEndpoint) {
  std::vector<std::string> endpoints = {"127.0.0.1:1"};
  for (const std::string& endpoint : cluster_->Endpoints())
    endpoints.push_back(endpoint);
  std::unique_ptr<EtcdClient> client = NewClient(endpoints);
  BACKFILL_ASSERT_OK(client->Put(MakePut("failover/a", "1")).status());
  EXPECT_THAT(client->Get("failover/a"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::value, "1"))));
}

TEST_F(EtcdClientTest, LeaseKeepsKeysUntilRevoked) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease lease,
                                client_->GrantLease(absl::Seconds(10)));
  EXPECT_NE(lease.id, 0);
  EXPECT_EQ(lease.ttl, absl::Seconds(10));
  BACKFILL_ASSERT_OK(
      client_->Put(MakePut("lease/worker1", "addr", lease.id)).status());
  EXPECT_THAT(client_->Get("lease/worker1"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::lease, lease.id))));
  EXPECT_THAT(client_->KeepAliveLease(lease.id),
              IsOkAndHolds(absl::Seconds(10)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(absl::Duration remaining,
                                client_->LeaseTimeToLive(lease.id));
  EXPECT_GT(remaining, absl::ZeroDuration());
  EXPECT_LE(remaining, absl::Seconds(10));

  BACKFILL_ASSERT_OK(client_->RevokeLease(lease.id));
  EXPECT_THAT(client_->Get("lease/worker1"), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(client_->KeepAliveLease(lease.id),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("expired or was revoked")));
  EXPECT_THAT(client_->LeaseTimeToLive(lease.id),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(client_->RevokeLease(lease.id),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      client_->Put(MakePut("lease/worker1", "addr", lease.id)),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("lease/worker1")));
}

// A lease that is kept alive outlives its TTL; once no longer kept alive it
// expires and takes its key. Real time: etcd's leases run on its clock.
TEST_F(EtcdClientTest, LeaseExpiresWithoutKeepAlive) {
  Clock& clock = Clock::Real();
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease kept,
                                client_->GrantLease(absl::Seconds(2)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(EtcdLease dropped,
                                client_->GrantLease(absl::Seconds(2)));
  BACKFILL_ASSERT_OK(
      client_->Put(MakePut("expiry/kept", "1", kept.id)).status());
  BACKFILL_ASSERT_OK(
      client_->Put(MakePut("expiry/dropped", "1", dropped.id)).status());

  const absl::Time granted = clock.Now();
  // Keep `kept` alive every 500 ms until `dropped`'s key is gone.
  const absl::Time give_up = granted + absl::Seconds(30);
  bool dropped_gone = false;
  while (!dropped_gone && clock.Now() < give_up) {
    BACKFILL_ASSERT_OK(client_->KeepAliveLease(kept.id).status());
    clock.SleepUntil(clock.Now() + absl::Milliseconds(500));
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<EtcdKeyValue> kv,
                                  client_->Get("expiry/dropped"));
    dropped_gone = !kv.has_value();
  }
  const absl::Duration lifetime = clock.Now() - granted;
  ASSERT_TRUE(dropped_gone)
      << "lease " << dropped.id << " did not expire in 30 s";
  EXPECT_GE(lifetime, dropped.ttl) << "expired before its TTL";
  EXPECT_THAT(client_->KeepAliveLease(dropped.id),
              StatusIs(absl::StatusCode::kNotFound));
  // The kept lease outlived the other's TTL and still holds its key.
  EXPECT_THAT(client_->Get("expiry/kept"),
              IsOkAndHolds(Optional(Field(&EtcdKeyValue::lease, kept.id))));
  BACKFILL_ASSERT_OK(client_->RevokeLease(kept.id));
}

}  // namespace
}  // namespace backfill
