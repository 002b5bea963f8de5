// SharedStoreBackend: what a command needs to run a SharedStateStore from
// its flags (//tools:backfill --store=shared): the object store named by a
// location ("DIR" or "s3://BUCKET[/PREFIX]"), an etcd client of the given
// endpoints or, with none, of a 3-member etcd cluster started on free
// 127.0.0.1 ports for the life of this object.
//
//   SharedStoreBackendOptions options;
//   options.object_store = "/var/lib/backfill/objects";  // or s3://bucket/job
//   options.etcd_endpoints = {};                         // start a local
//   cluster options.local_etcd_dir = "/tmp/run/etcd";            // its data,
//   removed after options.etcd_prefix = "backfill/default/"; options.cache_dir
//   = "/tmp/run/cache"; BACKFILL_ASSIGN_OR_RETURN(auto backend,
//   SharedStoreBackend::Start(options)); BACKFILL_ASSIGN_OR_RETURN(auto store,
//                             SharedStateStore::Open(backend->store_options()));
//
// S3 credentials come from the environment: AWS_ENDPOINT_URL
// ("http://HOST:PORT"), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, if
// set, AWS_REGION (default us-east-1).
//
// The local cluster (EtcdTestCluster's processes) is stopped by
// StopLocalEtcd() or the destructor (SIGKILL, reaped; its directory is then
// removed), and by the kernel if the process dies first (PR_SET_PDEATHSIG
// of the starting thread: start and destroy the backend on the thread that
// lives longest, e.g. main's). The versions it held die with it: a store on
// a local cluster cannot be reopened by a later run.
//
// Thread-safety: store_options() is immutable after Start; StopLocalEtcd and
// the destructor are called by one thread.
#ifndef STORAGE_SHARED_SHARED_STORE_BACKEND_H_
#define STORAGE_SHARED_SHARED_STORE_BACKEND_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/shared_committed_layer.h"

namespace backfill {

// A parsed object-store location.
struct ObjectStoreLocation {
  // A local directory (non-empty), or empty for S3.
  std::string directory;
  // S3: the bucket and the key prefix ("" or ending in '/').
  std::string bucket;
  std::string key_prefix;
};

// "DIR" (any non-empty path not starting with "s3://") or
// "s3://BUCKET[/PREFIX[/]]". InvalidArgument naming the location for an
// empty one, an empty bucket or a prefix that is not a valid key prefix.
absl::StatusOr<ObjectStoreLocation> ParseObjectStoreLocation(
    absl::string_view location);

// "HOST:PORT,HOST:PORT,..." (no empty item). InvalidArgument otherwise.
absl::StatusOr<std::vector<std::string>> ParseEtcdEndpoints(
    absl::string_view endpoints);

struct SharedStoreBackendOptions {
  // ParseObjectStoreLocation's syntax. Required.
  std::string object_store;
  // etcd members to use; empty: start a local 3-member cluster.
  std::vector<std::string> etcd_endpoints;
  // Where a local cluster keeps its data and logs (created; removed when the
  // cluster stops). Required when etcd_endpoints is empty.
  std::string local_etcd_dir;
  // SharedStateStoreOptions.etcd_prefix and .cache_dir. Required.
  std::string etcd_prefix;
  std::string cache_dir;
  // Reads an environment variable (S3 credentials); default std::getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

class SharedStoreBackend {
 public:
  // Opens the object store (a local directory is created if missing; an S3
  // bucket must exist), starts the local etcd cluster if no endpoints are
  // given, and makes the etcd client. Errors: InvalidArgument (bad options,
  // a missing S3 variable, named), FailedPrecondition (no etcd binary),
  // those of the object store and of the cluster's start. On error nothing
  // is left running.
  static absl::StatusOr<std::unique_ptr<SharedStoreBackend>> Start(
      SharedStoreBackendOptions options);

  // StopLocalEtcd().
  ~SharedStoreBackend();
  SharedStoreBackend(const SharedStoreBackend&) = delete;
  SharedStoreBackend& operator=(const SharedStoreBackend&) = delete;

  // Options of a SharedStateStore over this backend (object store, etcd
  // client, prefixes, cache directory; other fields at their defaults).
  const SharedStateStoreOptions& store_options() const {
    return store_options_;
  }
  // The etcd endpoints in use (the local cluster's if one was started).
  const std::vector<std::string>& etcd_endpoints() const { return endpoints_; }
  // The local cluster, or null (none was started, or it was stopped).
  EtcdTestCluster* local_etcd() const { return local_etcd_.get(); }
  bool started_local_etcd() const { return started_local_etcd_; }

  // Stops the local cluster (if any, and not stopped yet) and removes its
  // directory. Stores opened on it fail from then on. Idempotent.
  void StopLocalEtcd();

 private:
  SharedStoreBackend() = default;

  SharedStateStoreOptions store_options_;
  std::vector<std::string> endpoints_;
  std::unique_ptr<EtcdTestCluster> local_etcd_;
  std::string local_etcd_dir_;
  bool started_local_etcd_ = false;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_SHARED_STORE_BACKEND_H_
