// The worker process of checkpoint_cluster_multiprocess_test: opens its own
// SharedStateStore, writes ROWS into table 7 vnode 0 at EPOCH and seals the
// epochs EPOCH..EPOCH+2 (so the coordinator may checkpoint any of them),
// connects to the coordinator as a CheckpointWorker, waits until a
// checkpoint at or after EPOCH is applied, then writes every row it reads at
// its committed epoch to OUT_FILE ("pk=value" lines, in key order) and exits.
// With "die_after_upload" it SIGKILLs itself after uploading its sync and
// before replying (as a process dying between upload and commit).
//
//   checkpoint_worker_child COORDINATOR WORKER_ID ENDPOINTS OBJECT_ROOT
//       ETCD_PREFIX CACHE_DIR EPOCH ROWS OUT_FILE [die_after_upload]
//
// ENDPOINTS: comma-separated host:port; ROWS: comma-separated pk=value.
// Exit status: 0 after writing OUT_FILE; 2 on an error (printed); killed by
// SIGKILL in the die_after_upload mode.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "executor/cluster/checkpoint_worker.h"
#include "storage/cancellation.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/local_directory_object_store.h"
#include "storage/shared/shared_state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace {

constexpr TableId kTable = 7;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "checkpoint_worker_child: %s\n",
               status.ToString().c_str());
  return 2;
}

absl::Status WriteRowsAndWait(SharedStateStore& store,
                              const CheckpointWorkerOptions& worker_options,
                              uint64_t epoch, const std::string& rows,
                              const std::string& out_file) {
  auto local = store.NewLocalStateStore(kTable, {});
  if (!local.ok()) return local.status();
  absl::Status status = (*local)->Init(EpochPair::ForInitial(Epoch(epoch)));
  for (absl::string_view row : absl::StrSplit(rows, ',', absl::SkipEmpty())) {
    if (!status.ok()) break;
    std::pair<std::string, std::string> pk_value =
        absl::StrSplit(row, absl::MaxSplits('=', 1));
    status = (*local)->Insert(0, pk_value.first, pk_value.second);
  }
  for (uint64_t e = epoch; status.ok() && e < epoch + 3; ++e) {
    status = (*local)->Seal(EpochPair{Epoch(e + 1), Epoch(e)});
  }
  if (!status.ok()) return status;
  auto worker = CheckpointWorker::Connect(worker_options);
  if (!worker.ok()) return worker.status();
  Cancellation never;
  status =
      store.WaitCommitted(kTable, Epoch(epoch), absl::Now() + absl::Seconds(60),
                          never, Clock::Real());
  if (!status.ok()) return status;
  auto it = store.NewIterator(kTable, 0, PkRange::All(),
                              store.CommittedEpoch(kTable));
  if (!it.ok()) return it.status();
  std::string lines;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    absl::StrAppend(&lines, (*it)->key(), "=", (*it)->value(), "\n");
  }
  if (!(*it)->status().ok()) return (*it)->status();
  const std::string staging = out_file + ".tmp";
  std::ofstream(staging) << lines;
  if (std::rename(staging.c_str(), out_file.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", out_file));
  }
  (*worker)->Disconnect();
  return absl::OkStatus();
}

int Run(int argc, char** argv) {
  uint64_t epoch = 0;
  const bool die = argc == 11 && std::string(argv[10]) == "die_after_upload";
  if ((argc != 10 && !die) || !absl::SimpleAtoi(argv[7], &epoch) || epoch < 1) {
    std::fprintf(stderr,
                 "usage: %s COORDINATOR WORKER_ID ENDPOINTS OBJECT_ROOT "
                 "ETCD_PREFIX CACHE_DIR EPOCH ROWS OUT_FILE "
                 "[die_after_upload]\n",
                 argv[0]);
    return 2;
  }
  EtcdClientOptions etcd_options;
  etcd_options.endpoints = absl::StrSplit(argv[3], ',');
  auto etcd = EtcdClient::Create(etcd_options);
  if (!etcd.ok()) return Fail(etcd.status());
  auto objects = LocalDirectoryObjectStore::Open({.root = argv[4]});
  if (!objects.ok()) return Fail(objects.status());
  SharedStateStoreOptions options;
  options.etcd = std::shared_ptr<EtcdClient>(*std::move(etcd));
  options.object_store = std::shared_ptr<ObjectStore>(*std::move(objects));
  options.object_prefix = "store/";
  options.etcd_prefix = argv[5];
  options.cache_dir = argv[6];
  if (die) {
    options.after_upload_for_test = [](absl::string_view) {
      ::raise(SIGKILL);  // Uploaded; the sync reply is never sent.
      return absl::InternalError("still alive after SIGKILL");
    };
  }
  auto store = SharedStateStore::Open(options);
  if (!store.ok()) return Fail(store.status());
  CheckpointWorkerOptions worker_options;
  worker_options.coordinator_address = argv[1];
  worker_options.worker_id = argv[2];
  worker_options.store = store->get();
  const absl::Status status =
      WriteRowsAndWait(**store, worker_options, epoch, argv[8], argv[9]);
  return status.ok() ? 0 : Fail(status);
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Run(argc, argv); }
