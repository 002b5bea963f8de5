// The child of shared_state_store_etcd_failure_test's kill test: opens the
// shared store, writes one row at an epoch and checkpoints it; after the SST
// is uploaded and before the version commit it writes the object's key to
// ORPHAN_FILE and SIGKILLs itself.
//
//   shared_store_crash_child ENDPOINTS OBJECT_ROOT ETCD_PREFIX CACHE_DIR EPOCH
//   ORPHAN_FILE
//
// ENDPOINTS: comma-separated host:port. Exit status: killed by SIGKILL when
// it got there; 2 on an error before (printed); 3 if the commit completed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "storage/shared/local_directory_object_store.h"
#include "storage/shared/shared_state_store.h"

namespace backfill {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "shared_store_crash_child: %s\n",
               status.ToString().c_str());
  return 2;
}

int Run(int argc, char** argv) {
  uint64_t epoch = 0;
  if (argc != 7 || !absl::SimpleAtoi(argv[5], &epoch) || epoch < 1) {
    std::fprintf(stderr,
                 "usage: %s ENDPOINTS OBJECT_ROOT ETCD_PREFIX CACHE_DIR EPOCH "
                 "ORPHAN_FILE\n",
                 argv[0]);
    return 2;
  }
  const std::string orphan_file = argv[6];
  EtcdClientOptions etcd_options;
  etcd_options.endpoints = absl::StrSplit(argv[1], ',');
  auto etcd = EtcdClient::Create(etcd_options);
  if (!etcd.ok()) return Fail(etcd.status());
  auto objects = LocalDirectoryObjectStore::Open({.root = argv[2]});
  if (!objects.ok()) return Fail(objects.status());
  SharedStateStoreOptions options;
  options.etcd = std::shared_ptr<EtcdClient>(*std::move(etcd));
  options.object_store = std::shared_ptr<ObjectStore>(*std::move(objects));
  options.object_prefix = "store/";
  options.etcd_prefix = argv[3];
  options.cache_dir = argv[4];
  options.after_upload_for_test = [orphan_file](absl::string_view key) {
    const int fd =
        ::open(orphan_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, key.data(), key.size());
      ::fsync(fd);
      ::close(fd);
    }
    ::raise(SIGKILL);  // Between the upload and the version commit.
    return absl::InternalError("still alive after SIGKILL");
  };
  auto store = SharedStateStore::Open(options);
  if (!store.ok()) return Fail(store.status());
  {
    auto local = (*store)->NewLocalStateStore(9, {});
    if (!local.ok()) return Fail(local.status());
    absl::Status status = (*local)->Init(EpochPair::ForInitial(Epoch(epoch)));
    if (status.ok()) status = (*local)->Insert(1, "lost", "killed");
    if (status.ok()) {
      status = (*local)->Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)});
    }
    if (status.ok()) status = (*store)->Checkpoint(Epoch(epoch));
    if (!status.ok()) return Fail(status);
  }
  return 3;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Run(argc, argv); }
