#include "storage/shared/etcd_client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <functional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "storage/shared/internal/etcd_status.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/etcd/etcdserverpb/rpc.grpc.pb.h"

namespace backfill {
namespace {

// Keys in messages: C-escaped, at most this many bytes of the original.
constexpr size_t kMaxKeyBytesInMessages = 96;

std::string DescribeKey(absl::string_view key) {
  std::string described = absl::StrCat(
      "'", absl::CHexEscape(key.substr(0, kMaxKeyBytesInMessages)), "'");
  if (key.size() > kMaxKeyBytesInMessages) {
    absl::StrAppend(&described, "... (", key.size(), " bytes)");
  }
  return described;
}

// The smallest key greater than every key starting with `prefix`: etcd's
// range_end for a prefix. A prefix of only 0xff bytes has no such key; "\0"
// means "to the end of the key space" to etcd.
std::string PrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    unsigned char last = static_cast<unsigned char>(end.back());
    if (last != 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

// Codes worth another endpoint: the member is down, has no leader, lost
// its leader mid-request, or did not answer within the attempt's deadline.
bool IsRetryable(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable ||
         code == absl::StatusCode::kDeadlineExceeded;
}

EtcdKeyValue FromProto(const mvccpb::KeyValue& kv) {
  EtcdKeyValue result;
  result.key = kv.key();
  result.value = kv.value();
  result.create_revision = kv.create_revision();
  result.mod_revision = kv.mod_revision();
  result.version = kv.version();
  result.lease = kv.lease();
  return result;
}

void ToProto(const EtcdPut& put, etcdserverpb::PutRequest* request) {
  request->set_key(put.key);
  request->set_value(put.value);
  request->set_lease(put.lease);
}

etcdserverpb::Compare ToProto(const EtcdCompare& compare) {
  etcdserverpb::Compare proto;
  proto.set_key(compare.key);
  switch (compare.result) {
    case EtcdCompare::Result::kEqual:
      proto.set_result(etcdserverpb::Compare::EQUAL);
      break;
    case EtcdCompare::Result::kNotEqual:
      proto.set_result(etcdserverpb::Compare::NOT_EQUAL);
      break;
    case EtcdCompare::Result::kLess:
      proto.set_result(etcdserverpb::Compare::LESS);
      break;
    case EtcdCompare::Result::kGreater:
      proto.set_result(etcdserverpb::Compare::GREATER);
      break;
  }
  switch (compare.target) {
    case EtcdCompare::Target::kValue:
      proto.set_target(etcdserverpb::Compare::VALUE);
      proto.set_value(compare.value);
      break;
    case EtcdCompare::Target::kModRevision:
      proto.set_target(etcdserverpb::Compare::MOD);
      proto.set_mod_revision(compare.number);
      break;
    case EtcdCompare::Target::kCreateRevision:
      proto.set_target(etcdserverpb::Compare::CREATE);
      proto.set_create_revision(compare.number);
      break;
    case EtcdCompare::Target::kVersion:
      proto.set_target(etcdserverpb::Compare::VERSION);
      proto.set_version(compare.number);
      break;
  }
  return proto;
}

struct Endpoint {
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<etcdserverpb::KV::Stub> kv;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease;
};

}  // namespace

EtcdCompare EtcdCompare::ValueEquals(absl::string_view key,
                                     absl::string_view value) {
  EtcdCompare compare;
  compare.key = std::string(key);
  compare.target = Target::kValue;
  compare.value = std::string(value);
  return compare;
}

EtcdCompare EtcdCompare::ModRevisionEquals(absl::string_view key,
                                           int64_t mod_revision) {
  EtcdCompare compare;
  compare.key = std::string(key);
  compare.target = Target::kModRevision;
  compare.number = mod_revision;
  return compare;
}

EtcdCompare EtcdCompare::CreateRevisionEquals(absl::string_view key,
                                              int64_t create_revision) {
  EtcdCompare compare;
  compare.key = std::string(key);
  compare.target = Target::kCreateRevision;
  compare.number = create_revision;
  return compare;
}

EtcdCompare EtcdCompare::Absent(absl::string_view key) {
  return CreateRevisionEquals(key, 0);
}

class EtcdClient::Impl {
 public:
  explicit Impl(EtcdClientOptions options)
      : options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()) {
    grpc::ChannelArguments arguments;
    // etcd answers ranges up to its own limits; do not cut them at gRPC's 4
    // MiB.
    arguments.SetMaxReceiveMessageSize(INT_MAX);
    // A restarted member should be usable again within a fraction of a
    // second, not after gRPC's default reconnect back-off (up to 120 s).
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    for (const std::string& address : options_.endpoints) {
      Endpoint endpoint;
      endpoint.address = address;
      endpoint.channel = grpc::CreateCustomChannel(
          address, grpc::InsecureChannelCredentials(), arguments);
      endpoint.kv = etcdserverpb::KV::NewStub(endpoint.channel);
      endpoint.lease = etcdserverpb::Lease::NewStub(endpoint.channel);
      endpoints_.push_back(std::move(endpoint));
    }
  }

  const EtcdClientOptions& options() const { return options_; }

  // One RPC with failover (see the header's contract). `call` makes one
  // attempt against one endpoint with the given context. Sets `*attempts`.
  absl::Status Invoke(
      absl::string_view operation, absl::string_view key,
      const std::function<grpc::Status(Endpoint&, grpc::ClientContext&)>& call,
      int* attempts) {
    const absl::Time deadline = clock_.Now() + options_.operation_timeout;
    absl::Duration backoff = options_.retry_backoff;
    const size_t num_endpoints = endpoints_.size();
    const size_t first = preferred_.load(std::memory_order_relaxed);
    absl::Status last_error;
    int attempt = 0;
    while (true) {
      const size_t index = (first + attempt) % num_endpoints;
      Endpoint& endpoint = endpoints_[index];
      ++attempt;
      grpc::ClientContext context;
      const absl::Duration attempt_timeout =
          std::min(options_.call_timeout,
                   std::max(deadline - clock_.Now(), absl::Milliseconds(1)));
      context.set_deadline(std::chrono::system_clock::now() +
                           absl::ToChronoMilliseconds(attempt_timeout));
      const grpc::Status status = call(endpoint, context);
      if (attempts != nullptr) *attempts = attempt;
      if (status.ok()) {
        preferred_.store(index, std::memory_order_relaxed);
        return absl::OkStatus();
      }
      const absl::StatusCode code = shared_internal::EtcdCallCode(
          static_cast<absl::StatusCode>(status.error_code()),
          status.error_message());
      last_error = absl::Status(
          code, absl::StrCat("etcd ", operation, " ", DescribeKey(key), " at ",
                             endpoint.address, ": ", status.error_message()));
      if (!IsRetryable(code)) return last_error;
      if (attempt % num_endpoints == 0) {
        // A full round failed (no leader yet, or every member down): back off.
        const absl::Time wake = clock_.Now() + backoff;
        if (wake >= deadline) break;
        clock_.SleepUntil(wake);
        backoff = std::min(backoff * 2, absl::Seconds(1));
      }
      if (clock_.Now() >= deadline) break;
    }
    return absl::Status(
        last_error.code(),
        absl::StrCat("etcd ", operation, " ", DescribeKey(key),
                     ": no endpoint answered within ",
                     absl::FormatDuration(options_.operation_timeout), " (",
                     attempt, " attempts over ", num_endpoints,
                     " endpoints); last error: ", last_error.message()));
  }

  // InvalidArgument unless `request` fits in etcd's --max-request-bytes.
  absl::Status CheckRequestSize(
      absl::string_view operation, absl::string_view key,
      const google::protobuf::Message& request) const {
    const int64_t size = static_cast<int64_t>(request.ByteSizeLong());
    const int64_t limit =
        options_.max_request_bytes - kEtcdRequestEnvelopeBytes;
    if (size > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd ", operation, " ", DescribeKey(key), ": request of ", size,
          " bytes exceeds the limit of ", limit, " bytes (max_request_bytes ",
          options_.max_request_bytes, " minus ", kEtcdRequestEnvelopeBytes,
          " for etcd's envelope)"));
    }
    return absl::OkStatus();
  }

  static absl::Status CheckKey(absl::string_view operation,
                               absl::string_view key, absl::string_view what) {
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd ", operation, ": empty ", what, " (etcd has no empty key)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      absl::string_view operation, const etcdserverpb::RangeRequest& request) {
    etcdserverpb::RangeResponse response;
    BACKFILL_RETURN_IF_ERROR(Invoke(
        operation, request.key(),
        [&](Endpoint& endpoint, grpc::ClientContext& context) {
          response.Clear();
          return endpoint.kv->Range(&context, request, &response);
        },
        nullptr));
    return response;
  }

  absl::StatusOr<int64_t> DeleteRange(
      absl::string_view operation,
      const etcdserverpb::DeleteRangeRequest& request) {
    BACKFILL_RETURN_IF_ERROR(
        CheckRequestSize(operation, request.key(), request));
    etcdserverpb::DeleteRangeResponse response;
    BACKFILL_RETURN_IF_ERROR(Invoke(
        operation, request.key(),
        [&](Endpoint& endpoint, grpc::ClientContext& context) {
          response.Clear();
          return endpoint.kv->DeleteRange(&context, request, &response);
        },
        nullptr));
    return response.deleted();
  }

  absl::StatusOr<absl::Duration> KeepAliveOnce(int64_t lease_id) {
    const std::string subject = absl::StrCat("lease ", lease_id);
    etcdserverpb::LeaseKeepAliveResponse response;
    BACKFILL_RETURN_IF_ERROR(Invoke(
        "KeepAliveLease", subject,
        [&](Endpoint& endpoint, grpc::ClientContext& context) {
          response.Clear();
          auto stream = endpoint.lease->LeaseKeepAlive(&context);
          etcdserverpb::LeaseKeepAliveRequest request;
          request.set_id(lease_id);
          if (!stream->Write(request)) return stream->Finish();
          const bool read = stream->Read(&response);
          stream->WritesDone();
          grpc::Status status = stream->Finish();
          if (status.ok() && !read) {
            return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                "keep-alive stream closed without an answer");
          }
          return status;
        },
        nullptr));
    if (response.ttl() <= 0) {
      return absl::NotFoundError(absl::StrCat("etcd KeepAliveLease: lease ",
                                              lease_id,
                                              " has expired or was revoked"));
    }
    return absl::Seconds(response.ttl());
  }

  std::vector<Endpoint> endpoints_;

  EtcdClientOptions options_;
  Clock& clock_;
  // The endpoint that answered last: the next call starts there.
  std::atomic<size_t> preferred_{0};
};

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(
    EtcdClientOptions options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError("EtcdClientOptions.endpoints is empty");
  }
  for (const std::string& endpoint : options.endpoints) {
    if (endpoint.empty()) {
      return absl::InvalidArgumentError(
          "EtcdClientOptions.endpoints has an empty entry");
    }
  }
  if (options.call_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdClientOptions.call_timeout must be > 0, got ",
                     absl::FormatDuration(options.call_timeout)));
  }
  if (options.operation_timeout < options.call_timeout) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EtcdClientOptions.operation_timeout must be >= call_timeout, got ",
        absl::FormatDuration(options.operation_timeout), " < ",
        absl::FormatDuration(options.call_timeout)));
  }
  if (options.retry_backoff <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdClientOptions.retry_backoff must be > 0, got ",
                     absl::FormatDuration(options.retry_backoff)));
  }
  if (options.max_request_bytes <= kEtcdRequestEnvelopeBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EtcdClientOptions.max_request_bytes must be > ",
        kEtcdRequestEnvelopeBytes, ", got ", options.max_request_bytes));
  }
  if (options.max_txn_operations < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdClientOptions.max_txn_operations must be >= 1, got ",
                     options.max_txn_operations));
  }
  return std::unique_ptr<EtcdClient>(
      new EtcdClient(std::make_unique<Impl>(std::move(options))));
}

EtcdClient::EtcdClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EtcdClient::~EtcdClient() = default;

const EtcdClientOptions& EtcdClient::options() const {
  return impl_->options();
}

absl::StatusOr<std::optional<EtcdKeyValue>> EtcdClient::Get(
    absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Get", key, "key"));
  etcdserverpb::RangeRequest request;
  request.set_key(std::string(key));
  BACKFILL_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse response,
                            impl_->Range("Get", request));
  if (response.kvs_size() == 0) return std::nullopt;
  return FromProto(response.kvs(0));
}

absl::StatusOr<EtcdRangeResult> EtcdClient::GetPrefix(
    absl::string_view prefix, const EtcdRangeOptions& options) {
  BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("GetPrefix", prefix, "prefix"));
  if (options.limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd GetPrefix ", DescribeKey(prefix),
                     ": limit must be >= 0, got ", options.limit));
  }
  if (!options.from_key.empty() &&
      !absl::StartsWith(options.from_key, prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd GetPrefix ", DescribeKey(prefix), ": from_key ",
        DescribeKey(options.from_key), " does not start with the prefix"));
  }
  etcdserverpb::RangeRequest request;
  request.set_key(options.from_key.empty() ? std::string(prefix)
                                           : options.from_key);
  request.set_range_end(PrefixEnd(prefix));
  request.set_limit(options.limit);
  request.set_keys_only(options.keys_only);
  if (options.order == EtcdRangeOptions::Order::kCreateRevisionAscending) {
    request.set_sort_target(etcdserverpb::RangeRequest::CREATE);
    request.set_sort_order(etcdserverpb::RangeRequest::ASCEND);
  }
  BACKFILL_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse response,
                            impl_->Range("GetPrefix", request));
  EtcdRangeResult result;
  result.kvs.reserve(response.kvs_size());
  for (const mvccpb::KeyValue& kv : response.kvs())
    result.kvs.push_back(FromProto(kv));
  result.revision = response.header().revision();
  result.more = response.more();
  return result;
}

absl::StatusOr<int64_t> EtcdClient::Put(const EtcdPut& put) {
  BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Put", put.key, "key"));
  etcdserverpb::PutRequest request;
  ToProto(put, &request);
  BACKFILL_RETURN_IF_ERROR(impl_->CheckRequestSize("Put", put.key, request));
  etcdserverpb::PutResponse response;
  BACKFILL_RETURN_IF_ERROR(impl_->Invoke(
      "Put", put.key,
      [&](Endpoint& endpoint, grpc::ClientContext& context) {
        response.Clear();
        return endpoint.kv->Put(&context, request, &response);
      },
      nullptr));
  return response.header().revision();
}

absl::StatusOr<int64_t> EtcdClient::Delete(absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Delete", key, "key"));
  etcdserverpb::DeleteRangeRequest request;
  request.set_key(std::string(key));
  return impl_->DeleteRange("Delete", request);
}

absl::StatusOr<int64_t> EtcdClient::DeletePrefix(absl::string_view prefix) {
  BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("DeletePrefix", prefix, "prefix"));
  etcdserverpb::DeleteRangeRequest request;
  request.set_key(std::string(prefix));
  request.set_range_end(PrefixEnd(prefix));
  return impl_->DeleteRange("DeletePrefix", request);
}

absl::StatusOr<EtcdTxnResult> EtcdClient::Txn(const EtcdTxn& txn) {
  // Messages name the first key the txn touches.
  std::string subject;
  if (!txn.compares.empty()) {
    subject = txn.compares.front().key;
  } else if (!txn.then_puts.empty()) {
    subject = txn.then_puts.front().key;
  } else if (!txn.then_deletes.empty()) {
    subject = txn.then_deletes.front();
  } else if (!txn.else_gets.empty()) {
    subject = txn.else_gets.front();
  }
  const int max_operations = impl_->options().max_txn_operations;
  const size_t num_then = txn.then_puts.size() + txn.then_deletes.size();
  for (const auto& [what, count] :
       {std::pair<const char*, size_t>{"compares", txn.compares.size()},
        {"then operations", num_then},
        {"else operations", txn.else_gets.size()}}) {
    if (count > static_cast<size_t>(max_operations)) {
      return absl::InvalidArgumentError(
          absl::StrCat("etcd Txn ", DescribeKey(subject), ": ", count, " ",
                       what, " exceed the limit of ", max_operations,
                       " per txn (etcd's --max-txn-ops)"));
    }
  }
  etcdserverpb::TxnRequest request;
  for (const EtcdCompare& compare : txn.compares) {
    BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Txn", compare.key, "compare key"));
    *request.add_compare() = ToProto(compare);
  }
  for (const EtcdPut& put : txn.then_puts) {
    BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Txn", put.key, "put key"));
    ToProto(put, request.add_success()->mutable_request_put());
  }
  for (const std::string& key : txn.then_deletes) {
    BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Txn", key, "delete key"));
    request.add_success()->mutable_request_delete_range()->set_key(key);
  }
  for (const std::string& key : txn.else_gets) {
    BACKFILL_RETURN_IF_ERROR(Impl::CheckKey("Txn", key, "get key"));
    request.add_failure()->mutable_request_range()->set_key(key);
  }
  BACKFILL_RETURN_IF_ERROR(impl_->CheckRequestSize("Txn", subject, request));
  etcdserverpb::TxnResponse response;
  EtcdTxnResult result;
  BACKFILL_RETURN_IF_ERROR(impl_->Invoke(
      "Txn", subject,
      [&](Endpoint& endpoint, grpc::ClientContext& context) {
        response.Clear();
        return endpoint.kv->Txn(&context, request, &response);
      },
      &result.attempts));
  result.succeeded = response.succeeded();
  result.revision = response.header().revision();
  if (!result.succeeded) {
    if (static_cast<size_t>(response.responses_size()) !=
        txn.else_gets.size()) {
      return absl::InternalError(absl::StrCat(
          "etcd Txn ", DescribeKey(subject), ": ", response.responses_size(),
          " else responses for ", txn.else_gets.size(), " reads"));
    }
    for (const etcdserverpb::ResponseOp& op : response.responses()) {
      if (op.response_range().kvs_size() == 0) {
        result.else_values.push_back(std::nullopt);
      } else {
        result.else_values.push_back(FromProto(op.response_range().kvs(0)));
      }
    }
  }
  return result;
}

absl::StatusOr<EtcdLease> EtcdClient::GrantLease(absl::Duration ttl) {
  const int64_t seconds =
      absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1)));
  if (seconds < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd GrantLease: ttl must be >= 1s, got ", absl::FormatDuration(ttl)));
  }
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(seconds);
  etcdserverpb::LeaseGrantResponse response;
  BACKFILL_RETURN_IF_ERROR(impl_->Invoke(
      "GrantLease", absl::StrCat("ttl ", seconds, "s"),
      [&](Endpoint& endpoint, grpc::ClientContext& context) {
        response.Clear();
        return endpoint.lease->LeaseGrant(&context, request, &response);
      },
      nullptr));
  if (!response.error().empty()) {
    return absl::UnavailableError(
        absl::StrCat("etcd GrantLease ttl ", seconds, "s: ", response.error()));
  }
  return EtcdLease{response.id(), absl::Seconds(response.ttl())};
}

absl::StatusOr<absl::Duration> EtcdClient::KeepAliveLease(int64_t lease_id) {
  return impl_->KeepAliveOnce(lease_id);
}

absl::StatusOr<absl::Duration> EtcdClient::LeaseTimeToLive(int64_t lease_id) {
  etcdserverpb::LeaseTimeToLiveRequest request;
  request.set_id(lease_id);
  etcdserverpb::LeaseTimeToLiveResponse response;
  BACKFILL_RETURN_IF_ERROR(impl_->Invoke(
      "LeaseTimeToLive", absl::StrCat("lease ", lease_id),
      [&](Endpoint& endpoint, grpc::ClientContext& context) {
        response.Clear();
        return endpoint.lease->LeaseTimeToLive(&context, request, &response);
      },
      nullptr));
  // etcd answers an unknown lease with ttl -1 rather than an error.
  if (response.ttl() <= 0) {
    return absl::NotFoundError(absl::StrCat("etcd LeaseTimeToLive: lease ",
                                            lease_id,
                                            " has expired or was revoked"));
  }
  return absl::Seconds(response.ttl());
}

absl::Status EtcdClient::RevokeLease(int64_t lease_id) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease_id);
  etcdserverpb::LeaseRevokeResponse response;
  return impl_->Invoke(
      "RevokeLease", absl::StrCat("lease ", lease_id),
      [&](Endpoint& endpoint, grpc::ClientContext& context) {
        response.Clear();
        return endpoint.lease->LeaseRevoke(&context, request, &response);
      },
      nullptr);
}

}  // namespace backfill
