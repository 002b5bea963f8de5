// The worker process of cluster_control_multiprocess_test: a ClusterWorker
// under an etcd lease of 2 s that it keeps alive (EtcdLeaseKeeper). For
// each epoch e in FIRST..LAST it writes the row "<WORKER_ID>-<e>" = "v" into
// table 7 vnode 0 and seals e; it follows the leading coordinator (found
// through the election), waits until LAST is committed, writes every row it
// reads at its committed epoch to OUT_FILE ("pk=value" lines, in key order)
// and exits 0. Fenced (its lease expired, e.g. while SIGSTOPped), it exits
// 3 without writing OUT_FILE.
//
//   cluster_worker_child ENDPOINTS OBJECT_ROOT STORE_PREFIX JOB_PREFIX
//       CACHE_DIR WORKER_ID FIRST LAST OUT_FILE
//
// ENDPOINTS: comma-separated host:port. Exit status: 0 after writing
// OUT_FILE; 3 if fenced; 2 on another error (printed).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "executor/cluster/cluster_worker.h"
#include "storage/cancellation.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_lease_keeper.h"
#include "storage/shared/local_directory_object_store.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

constexpr TableId kTable = 7;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "cluster_worker_child: %s\n", status.ToString().c_str());
  return absl::IsFailedPrecondition(status) ? 3 : 2;
}

struct Arguments {
  std::string endpoints, object_root, store_prefix, job_prefix, cache_dir,
      worker_id, out_file;
  uint64_t first = 0, last = 0;
};

absl::Status Work(const Arguments& args) {
  EtcdClientOptions etcd_options;
  etcd_options.endpoints = absl::StrSplit(args.endpoints, ',');
  absl::StatusOr<std::unique_ptr<EtcdClient>> created =
      EtcdClient::Create(etcd_options);
  if (!created.ok()) return created.status();
  std::shared_ptr<EtcdClient> etcd = *std::move(created);
  auto objects = LocalDirectoryObjectStore::Open({.root = args.object_root});
  if (!objects.ok()) return objects.status();
  SharedStateStoreOptions options;
  options.etcd = etcd;
  options.object_store = std::shared_ptr<ObjectStore>(*std::move(objects));
  options.object_prefix = "store/";
  options.etcd_prefix = args.store_prefix;
  options.cache_dir = args.cache_dir;
  auto store = SharedStateStore::Open(options);
  if (!store.ok()) return store.status();

  auto local = (*store)->NewLocalStateStore(kTable, {});
  if (!local.ok()) return local.status();
  absl::Status status =
      (*local)->Init(EpochPair::ForInitial(Epoch(args.first)));
  for (uint64_t e = args.first; status.ok() && e <= args.last; ++e) {
    status = (*local)->Insert(0, absl::StrCat(args.worker_id, "-", e), "v");
    if (status.ok()) status = (*local)->Seal(EpochPair{Epoch(e + 1), Epoch(e)});
  }
  if (!status.ok()) return status;

  absl::StatusOr<EtcdLease> lease = etcd->GrantLease(absl::Seconds(2));
  if (!lease.ok()) return lease.status();
  std::unique_ptr<EtcdLeaseKeeper> keeper =
      EtcdLeaseKeeper::Start(*etcd, *lease, {});
  Cancellation stopped;
  auto worker = ClusterWorker::Start(
      {.etcd = etcd.get(),
       .job_prefix = args.job_prefix,
       .worker_id = args.worker_id,
       .store = store->get(),
       .lease_id = lease->id,
       .on_stopped = [&](const absl::Status&) { stopped.Cancel(); }});
  if (!worker.ok()) return worker.status();
  status = (*store)->WaitCommitted(kTable, Epoch(args.last),
                                   absl::Now() + absl::Seconds(60), stopped,
                                   Clock::Real());
  if (!status.ok()) {
    const absl::Status why = (*worker)->status();
    return why.ok() ? status : why;
  }
  auto it = (*store)->NewIterator(kTable, 0, PkRange::All(),
                                  (*store)->CommittedEpoch(kTable));
  if (!it.ok()) return it.status();
  std::string lines;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    absl::StrAppend(&lines, (*it)->key(), "=", (*it)->value(), "\n");
  }
  if (!(*it)->status().ok()) return (*it)->status();
  const std::string staging = args.out_file + ".tmp";
  std::ofstream(staging) << lines;
  if (std::rename(staging.c_str(), args.out_file.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", args.out_file));
  }
  (*worker)->Stop();
  return absl::OkStatus();
}

int Run(int argc, char** argv) {
  Arguments args;
  if (argc != 10 || !absl::SimpleAtoi(argv[7], &args.first) ||
      !absl::SimpleAtoi(argv[8], &args.last) || args.first < 1 ||
      args.last < args.first) {
    std::fprintf(stderr,
                 "usage: %s ENDPOINTS OBJECT_ROOT STORE_PREFIX JOB_PREFIX "
                 "CACHE_DIR WORKER_ID FIRST LAST OUT_FILE\n",
                 argv[0]);
    return 2;
  }
  args.endpoints = argv[1];
  args.object_root = argv[2];
  args.store_prefix = argv[3];
  args.job_prefix = argv[4];
  args.cache_dir = argv[5];
  args.worker_id = argv[6];
  args.out_file = argv[9];
  const absl::Status status = Work(args);
  return status.ok() ? 0 : Fail(status);
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Run(argc, argv); }
