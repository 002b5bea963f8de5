// The child of crash_test: opens the store at argv[1], then forever
// writes epoch after epoch of the deterministic workload (seed argv[2]) and
// checkpoints each, printing "committed <epoch>" after each checkpoint. The
// parent kills it with SIGKILL at arbitrary points.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "storage/rocksdb/crash_workload.h"
#include "storage/rocksdb/rocksdb_state_store.h"

int main(int argc, char** argv) {
  using namespace backfill;  // NOLINT: a tiny main.
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <path> <seed>\n", argv[0]);
    return 2;
  }
  RocksDbStateStoreOptions options;
  options.path = argv[1];
  options.sync_on_checkpoint = false;     // A process crash keeps OS buffers.
  options.write_buffer_bytes = 64 << 10;  // Flushes and compactions too.
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  auto store = RocksDbStateStore::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  std::vector<std::unique_ptr<LocalStateStore>> locals;
  const Epoch committed = (*store)->CommittedEpoch(1);
  for (TableId table = 1; table <= crash_workload::kNumTables; ++table) {
    auto local = (*store)->NewLocalStateStore(table, LocalOptions{});
    if (!local.ok() ||
        !(*local)
             ->Init(EpochPair{Epoch(committed.value() + 1), committed})
             .ok()) {
      return 1;
    }
    locals.push_back(*std::move(local));
  }
  for (uint64_t epoch = committed.value() + 1;; ++epoch) {
    bool ok = true;
    crash_workload::ForEachWrite(
        seed, epoch,
        [&](TableId table, VirtualNode vnode, const std::string& pk,
            const std::optional<std::string>& value) {
          LocalStateStore& local = *locals[table - 1];
          ok &= (value ? local.Insert(vnode, pk, *value)
                       : local.Delete(vnode, pk))
                    .ok();
        });
    for (auto& local : locals) {
      ok &= local->Seal(EpochPair{Epoch(epoch + 1), Epoch(epoch)}).ok();
    }
    absl::Status status = (*store)->Checkpoint(Epoch(epoch));
    if (!ok || !status.ok()) {
      std::fprintf(stderr, "epoch %llu: %s\n",
                   static_cast<unsigned long long>(epoch),
                   status.ToString().c_str());
      return 1;
    }
    std::printf("committed %llu\n", static_cast<unsigned long long>(epoch));
    std::fflush(stdout);
  }
}
