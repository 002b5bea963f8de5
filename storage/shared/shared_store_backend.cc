#include "storage/shared/shared_store_backend.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "storage/shared/local_directory_object_store.h"
#include "storage/shared/s3_object_store.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

constexpr absl::string_view kS3Scheme = "s3://";

std::optional<std::string> RealGetenv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<std::string> RequiredVariable(
    const SharedStoreBackendOptions& options, const std::string& name,
    absl::string_view location) {
  std::optional<std::string> value = options.getenv(name);
  if (!value.has_value() || value->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "object store ", location, ": the environment variable ", name,
        " is not set (S3 needs AWS_ENDPOINT_URL, "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"));
  }
  return *value;
}

absl::StatusOr<std::shared_ptr<ObjectStore>> OpenObjectStore(
    const SharedStoreBackendOptions& options) {
  BACKFILL_ASSIGN_OR_RETURN(ObjectStoreLocation location,
                            ParseObjectStoreLocation(options.object_store));
  if (!location.directory.empty()) {
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<LocalDirectoryObjectStore> store,
        LocalDirectoryObjectStore::Open({.root = location.directory}));
    return std::shared_ptr<ObjectStore>(std::move(store));
  }
  S3ObjectStoreOptions s3;
  s3.bucket = location.bucket;
  s3.key_prefix = location.key_prefix;
  BACKFILL_ASSIGN_OR_RETURN(
      s3.endpoint,
      RequiredVariable(options, "AWS_ENDPOINT_URL", options.object_store));
  BACKFILL_ASSIGN_OR_RETURN(
      s3.access_key,
      RequiredVariable(options, "AWS_ACCESS_KEY_ID", options.object_store));
  BACKFILL_ASSIGN_OR_RETURN(
      s3.secret_key,
      RequiredVariable(options, "AWS_SECRET_ACCESS_KEY", options.object_store));
  if (std::optional<std::string> region = options.getenv("AWS_REGION");
      region.has_value() && !region->empty()) {
    s3.region = *region;
  }
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<S3ObjectStore> store,
                            S3ObjectStore::Create(s3));
  return std::shared_ptr<ObjectStore>(std::move(store));
}

}  // namespace

absl::StatusOr<ObjectStoreLocation> ParseObjectStoreLocation(
    absl::string_view location) {
  ObjectStoreLocation parsed;
  if (location.empty()) {
    return absl::InvalidArgumentError(
        "object store location is empty (expected DIR or "
        "s3://BUCKET[/PREFIX])");
  }
  if (!absl::StartsWith(location, kS3Scheme)) {
    parsed.directory = std::string(location);
    return parsed;
  }
  absl::string_view rest = location.substr(kS3Scheme.size());
  const size_t slash = rest.find('/');
  parsed.bucket = std::string(rest.substr(0, slash));
  if (slash != absl::string_view::npos) {
    parsed.key_prefix = std::string(rest.substr(slash + 1));
    if (!parsed.key_prefix.empty() && parsed.key_prefix.back() != '/') {
      parsed.key_prefix.push_back('/');
    }
  }
  if (parsed.bucket.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("object store location '", location, "' names no bucket"));
  }
  if (!parsed.key_prefix.empty()) {
    if (absl::Status valid = ValidateObjectKeyPrefix(parsed.key_prefix);
        !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("object store location '", location,
                       "': bad key prefix: ", valid.message()));
    }
  }
  return parsed;
}

absl::StatusOr<std::vector<std::string>> ParseEtcdEndpoints(
    absl::string_view endpoints) {
  std::vector<std::string> parsed = absl::StrSplit(endpoints, ',');
  for (const std::string& endpoint : parsed) {
    const size_t colon = endpoint.rfind(':');
    if (endpoint.empty() || colon == std::string::npos || colon == 0 ||
        colon + 1 == endpoint.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd endpoints '", endpoints,
          "': expected HOST:PORT[,HOST:PORT...], got '", endpoint, "'"));
    }
  }
  return parsed;
}

absl::StatusOr<std::unique_ptr<SharedStoreBackend>> SharedStoreBackend::Start(
    SharedStoreBackendOptions options) {
  if (!options.getenv) options.getenv = RealGetenv;
  if (options.etcd_prefix.empty() || options.cache_dir.empty()) {
    return absl::InvalidArgumentError(
        "SharedStoreBackendOptions: etcd_prefix and cache_dir are required");
  }
  if (options.etcd_endpoints.empty() && options.local_etcd_dir.empty()) {
    return absl::InvalidArgumentError(
        "SharedStoreBackendOptions: local_etcd_dir is required without "
        "etcd_endpoints");
  }
  std::unique_ptr<SharedStoreBackend> backend(new SharedStoreBackend());
  BACKFILL_ASSIGN_OR_RETURN(backend->store_options_.object_store,
                            OpenObjectStore(options));
  backend->endpoints_ = options.etcd_endpoints;
  if (backend->endpoints_.empty()) {
    backend->local_etcd_dir_ = options.local_etcd_dir;
    backend->started_local_etcd_ = true;
    EtcdTestClusterOptions cluster;
    cluster.num_members = 3;
    cluster.data_dir = options.local_etcd_dir;
    absl::StatusOr<std::unique_ptr<EtcdTestCluster>> started =
        EtcdTestCluster::Start(cluster);
    if (!started.ok()) {
      backend->StopLocalEtcd();  // Removes what the attempt wrote.
      return absl::Status(started.status().code(),
                          absl::StrCat("starting a local etcd cluster: ",
                                       started.status().message()));
    }
    backend->local_etcd_ = *std::move(started);
    backend->endpoints_ = backend->local_etcd_->Endpoints();
  }
  EtcdClientOptions etcd;
  etcd.endpoints = backend->endpoints_;
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                            EtcdClient::Create(etcd));
  backend->store_options_.etcd = std::move(client);
  backend->store_options_.etcd_prefix = options.etcd_prefix;
  backend->store_options_.cache_dir = options.cache_dir;
  return backend;
}

SharedStoreBackend::~SharedStoreBackend() { StopLocalEtcd(); }

void SharedStoreBackend::StopLocalEtcd() {
  local_etcd_.reset();  // SIGKILLs and reaps every member.
  if (!local_etcd_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(local_etcd_dir_, ignored);
    local_etcd_dir_.clear();
  }
}

}  // namespace backfill
